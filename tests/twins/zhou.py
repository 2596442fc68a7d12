"""Twins of Zhou et al.'s online algorithm (scheduling/algorithms/zhou/): the numpy path
(``fast.py``, ``fast=true``) against the transcription of Alg. 2-4 (``mincost.py``, ``fast=false``)
on whole runs, and its parts one by one under non-zero prices: A_mincost1/2, the cheapest-first
server order and its caps (Alg. 4 line 8), the PS host screen (line 17), the plan of lines 10-29,
the window lengths, the per-slot block caps, the one-instance fit and the rate per worker.

The named cases are the seeds these comparisons were first written with; each case is a seed of
the generator that builds its instance (or its prices and demands)."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st

from scheduling import api, presets
from scheduling.algorithms.zhou import fast, mincost
from scheduling.algorithms.zhou.duals import TOL, Duals
from scheduling.algorithms.zhou.spec import Option, job_spec
from scheduling.loaders import cluster_from_dict, job_from_row, parse_cluster, parse_trace
from scheduling.model import Cluster, Instance
from tests.twins.core import Twin, first_difference

SEEDS = st.integers(0, 10**6)


def duals(c: Cluster, slots: int, lam: float = 9.0, beta: np.ndarray | None = None, tie: str = "loop") -> Duals:
    cap = np.array([[s.capacity.get(r, 0.0) for s in c.servers] for r in c.resource_names()])
    base = np.zeros((*cap.shape, slots)) if beta is None else beta
    ok = np.ones(len(c.servers), dtype=bool)
    return Duals(cap, ok, ok, lam, base, tie)


def random_instance(rng: np.random.Generator, arch: str) -> Instance:
    """2-4 servers, two worker and two PS types, 3-6 jobs of ``arch`` arriving in 12 slots."""
    servers = [{"gpu": int(rng.integers(1, 5)), "cpu": int(rng.integers(2, 9))} for _ in range(int(rng.integers(2, 5)))]
    c = cluster_from_dict(
        {
            "slot_seconds": 1,
            "resources": ["gpu", "cpu"],
            "servers": [{"id": f"s{i}", "capacity": s} for i, s in enumerate(servers)],
            "worker_types": [
                {
                    "id": f"w{m}",
                    "demand": {"gpu": int(rng.integers(1, 3)), "cpu": 1},
                    "bandwidth_gbps": float(rng.integers(1, 4)),
                }
                for m in range(2)
            ],
            "ps_types": [
                {"id": f"p{p}", "demand": {"cpu": int(rng.integers(1, 3))}, "bandwidth_gbps": float(rng.integers(1, 6))}
                for p in range(2)
            ],
        }
    )
    jobs = []
    for i in range(int(rng.integers(3, 7))):
        row = {
            "job_id": f"j{i}",
            "arrival": int(rng.integers(0, 12)),
            "arch": arch,
            "weight": float(rng.integers(1, 6)),
            "epochs": 1,
            "chunks": int(rng.integers(1, 5)),
            "minibatches": int(rng.integers(1, 4)),
            "batch_time": {"w0": float(rng.integers(1, 3)), "w1": float(rng.integers(1, 3))},
            "gradient_mb": float(rng.integers(0, 200)),
        }
        jobs.append(job_from_row(row, c))
    return Instance(c, tuple(sorted(jobs, key=lambda j: (j.arrival, j.job_id))))


def same(fast_out: Any, reference: Any) -> str | None:
    return first_difference(fast_out, reference, "outcome")


# -- whole runs ------------------------------------------------------------------------------------


def run(quick: bool):
    def go(case: tuple[int, str, str]) -> Any:
        seed, arch, tie = case
        inst = random_instance(np.random.default_rng(seed), arch)
        params = {"lam": 3.0, "F": 1.0, "start": "now", "ra_order": "descending", "tie": tie, "fast": quick}
        doc = api.run(inst, "zhou", params)
        return doc["zhou"]["jobs"], doc["placements"]

    return go


def run_features(outcome: Any) -> set[str]:
    jobs, placements = outcome
    rounds = {plan["round"] for plan in jobs.values()}
    where: dict[str, set[str]] = {}
    for p in placements:
        where.setdefault(p["job_id"], set()).add(p["server"])
    seen = {"several rounds"} if len(rounds) > 1 else set()
    return seen | ({"spread"} if any(len(s) > 1 for s in where.values()) else set())


# -- the parts under non-zero prices ---------------------------------------------------------------


def priced(rng: np.random.Generator, inst: Instance, tau: int, lam: float, tie: str) -> Duals:
    c = inst.cluster
    cap = np.array([[s.capacity.get(r, 0.0) for s in c.servers] for r in c.resource_names()])
    beta = np.floor(rng.uniform(0, 1, size=(*cap.shape, tau)) * cap[:, :, None])
    return duals(c, tau, lam=lam, beta=beta, tie=tie)


def mincosts(quick: bool):
    """A_mincost2 and A_mincost1 of every job of a random PS instance, tau = 8, lambda = 50."""

    def go(case: tuple[int, str]) -> list[Any]:
        seed, tie = case
        rng = np.random.default_rng(seed)
        inst = random_instance(rng, "ps")
        d = priced(rng, inst, 8, 50.0, tie)
        out = []
        for j in inst.jobs:
            spec = job_spec(inst.cluster, j)
            if quick:
                out.append((fast.mincost2(spec, d, 8), fast.mincost1(spec, d, 8)))
            else:
                out.append((mincost.a_mincost2(spec, d, 8), mincost.a_mincost1(spec, d, 8)))
        return out

    return go


def mincost_features(outcome: list[Any]) -> set[str]:
    plans = [p for pair in outcome for p in pair]
    return ({"plan"} if any(p is not None for p in plans) else set()) | ({"no plan"} if None in plans else set())


def cheapest_first(quick: bool):
    """Alg. 4 line 8: the server order (equal Omega_h included) and caps, windows long enough for
    numpy's pairwise summation to matter."""

    def go(seed: int) -> list[Any]:
        rng = np.random.default_rng(seed)
        servers, slots = 40, 260
        cap = rng.integers(1, 9, size=(3, servers)).astype(float)
        beta = np.floor(rng.uniform(0, 1, size=(3, servers, slots)) * cap[:, :, None])
        beta[:, : servers // 2] = np.round(beta[:, : servers // 2] / 4) * 4  # many equal prices
        ok = rng.uniform(size=servers) < 0.8
        d = Duals(cap, ok, ok, 7.0, beta, "completion")
        tables = fast.tables_for(d)
        out = []
        for _ in range(20):
            e = rng.integers(0, 3, size=3).astype(float) * rng.uniform(0.5, 1.5)
            length = int(rng.integers(1, slots))
            starts = slots - length
            t = int(rng.integers(0, starts))
            if quick:
                caps = fast.fit_counts(tables.wmin(length, starts), e, d.worker_ok)[:, t]
                order, got = fast.cheapest_first(d, e, t, length, caps)
            else:
                order, got = mincost.cheapest_first(d, tables.omega, e, t, length)
            out.append((list(order), list(got)))
        return out

    return go


def host_limits(quick: bool):
    """``fast._host_limits`` (the A_mincost1 screen) against a literal search over N_j and g with the
    transcription's ``fit`` and ``ps_needed``: some g <= min(caps, N_j) leaves s_hat >= need."""

    def go(seed: int) -> list[list[bool]]:
        rng = np.random.default_rng(seed)
        servers, top = 30, 12
        out = []
        for _ in range(10):
            free = np.floor(rng.uniform(0, 12, size=(3, servers)))
            e = rng.integers(0, 3, size=3).astype(float)
            z = rng.integers(0, 3, size=3).astype(float)
            opt = Option("w", "p", e, z, float(rng.integers(0, 5)), float(rng.integers(0, 4)))
            caps = fast.fit_counts(free[:, :, None], e, np.ones(servers, dtype=bool))[:, 0]
            limits = fast._host_limits(free, caps, opt, top) if quick else None
            for h in range(servers):
                if limits is not None:
                    out.append([n_j <= limits[h] for n_j in range(top + 1)])
                    continue
                out.append(
                    [
                        any(
                            mincost.fit(free[:, h : h + 1] - g * e[:, None], z) >= mincost.ps_needed(n_j - g, opt)
                            for g in range(min(int(caps[h]), n_j) + 1)
                        )
                        for n_j in range(top + 1)
                    ]
                )
        return out

    return go


def spread_with_ps(quick: bool):
    """Alg. 4 lines 10-29 for one (t^-, n): the same plan (or None), with PS demands on one or two
    resources, servers refusing PSs, and zero / small PS bandwidths."""

    def go(seed: int) -> list[Any]:
        rng = np.random.default_rng(seed)
        servers, slots = 7, 12
        cap = rng.integers(1, 9, size=(3, servers)).astype(float)
        beta = np.floor(rng.uniform(0, 1, size=(3, servers, slots)) * cap[:, :, None])
        ps_ok = rng.uniform(size=servers) < 0.7
        d = Duals(cap, np.ones(servers, dtype=bool), ps_ok, 5.0, beta, "completion")
        omega = d.free()
        solve = fast.spread_with_ps if quick else mincost.spread_with_ps
        out = []
        for _ in range(60):
            e = rng.integers(0, 3, size=3).astype(float) * rng.uniform(0.5, 1.5)
            z = rng.integers(0, 3, size=3).astype(float) * rng.uniform(0.3, 1.2)
            b, big_b = (float(rng.choice([0.0, 0.7, 2.0])), float(rng.choice([0.0, 0.5, 3.0])))
            opt = Option("w", "p", e, z, b, big_b)
            length = int(rng.integers(1, slots))
            t = int(rng.integers(0, slots - length + 1))
            order, caps = mincost.cheapest_first(d, omega, e, t, length)
            for n_j in (1, 3, 8):
                for n in range(servers):
                    out.append(solve(d, omega, opt, t, length, n_j, n, order, caps))
        return out

    return go


def block_caps(quick: bool):
    """Per-slot block caps (``caps_prefix``) and window minima of chosen columns (``wmin_cols``,
    cached and not) against ``fit_counts`` of the window minima and the full ``wmin``."""

    def go(seed: int) -> list[Any]:
        rng = np.random.default_rng(seed)
        servers, slots = 30, 200
        cap = rng.uniform(0.5, 9, size=(3, servers))
        beta = rng.uniform(0, 1, size=(3, servers, slots)) * cap[:, :, None]
        ok = rng.uniform(size=servers) < 0.8
        d = Duals(cap, ok, ok, 7.0, beta, "completion")
        tables = fast.tables_for(d)
        out = []
        for _ in range(30):
            e = rng.integers(0, 3, size=3).astype(float) * rng.uniform(0.1, 1.5)
            length = int(rng.integers(1, slots))
            starts = slots - length
            n = int(rng.integers(1, starts + 1))
            cols = np.flatnonzero(rng.uniform(size=starts) < 0.3)
            if quick:
                got = [tables.caps_prefix(e, length, n), tables.wmin_cols(length, cols)]
                tables._min.clear()
                got.append(tables.wmin_cols(length, cols))
            else:
                whole = tables.wmin(length, starts)
                got = [fast.fit_counts(whole[..., :n], e, d.worker_ok), whole[..., cols], whole[..., cols]]
            out.append([a.tolist() for a in got])
        return out

    return go


def fits_one(quick: bool):
    """``fast.fits_one`` against ``fit_counts >= 1``, with free amounts at and just below d - TOL."""

    def go(seed: int) -> list[Any]:
        rng = np.random.default_rng(seed)
        out = []
        for _ in range(200):
            d = rng.choice([0.0, 0.5, 1.0, 3.0, 0.1, 7.3], size=3)
            free = rng.choice([-1.0, 0.0, 0.1, 0.5, 1.0, 2.9999999999, 3.0, 7.3, 20.0], size=(3, 6, 5))
            free[0, 0] = d[0] - TOL
            free[0, 1] = np.nextafter(d[0] - TOL, -np.inf)
            ok = rng.random(6) < 0.8
            if quick:
                got = [fast.fits_one(free, d, ok), fast.fits_one(free[..., 0], d, ok)]
            else:
                got = [fast.fit_counts(free.copy(), d, ok) >= 1, fast.fit_counts(free[..., :1], d, ok)[:, 0] >= 1]
            out.append([a.tolist() for a in got])
        return out

    return go


# -- per job: window lengths and rates --------------------------------------------------------------


def preset_specs(case: tuple[str, int, int]) -> list[Any]:
    preset, jobs, seed = case
    files = presets.build(preset, jobs=jobs, seed=seed, size=0.1)
    c = parse_cluster(files.cluster)
    return [job_spec(c, j) for j in parse_trace(files.trace, c, files.trace_name)]


def window_lengths(quick: bool):
    """The numpy window lengths (all lengths, capped at 40, and all options at once) against the
    spec's ``ps_lengths``; the memoised rate against eq. (1) computed afresh."""

    def go(case: tuple[str, int, int]) -> list[Any]:
        out = []
        for spec in preset_specs(case):
            for colocated in (True, False):
                at_once = fast._job_lengths(spec, colocated) if quick else None
                for opt in spec.options:
                    if at_once is not None:
                        rho = spec.rho(opt, 1, colocated=colocated)
                        pairs, lengths = at_once[(opt.worker_type, opt.ps_type)]
                        capped = list(fast._lengths(spec, opt, 40, colocated))
                        out.append((rho, fast._all_lengths(spec, rho), capped, pairs, lengths))
                    else:
                        rho = spec._rate(opt, 1, colocated)  # eq. (1) without the memo
                        pairs = spec.ps_lengths(rho, 1 << 40)
                        out.append((rho, pairs, spec.ps_lengths(rho, 40), pairs, [length for length, _ in pairs]))
                if at_once is not None:
                    assert len(at_once) == len(spec.options)
        return out

    return go


def rates(quick: bool):
    """``fast._rho`` (eqs. (1), (14) without allocations) against ``spec.rho`` (``speed.rate``) for
    every option and worker count, float for float: a preset's jobs and a random instance's."""

    def go(case: tuple[str, int, int, tuple[int, ...]]) -> list[float]:
        preset, jobs, seed, randoms = case
        specs = preset_specs((preset, jobs, seed))
        for r in randoms:
            inst = random_instance(np.random.default_rng(r), preset.split("-")[1])
            specs += [job_spec(inst.cluster, j) for j in inst.jobs]
        out = []
        for spec in specs:
            for opt in spec.options:
                for workers in range(1, spec.chunks + 1):
                    for colocated in (True, False):
                        if quick:
                            out.append(fast._rho(spec, opt, workers, colocated))
                        else:
                            out.append(spec.rho(opt, workers, colocated=colocated))
        return out

    return go


PRESET_NAMES = st.sampled_from(["zhou-ps", "zhou-allreduce"])
ZHOU_PRESETS = st.tuples(PRESET_NAMES, st.integers(2, 6), SEEDS)
TIES = st.sampled_from(["completion", "loop"])

TWINS = [
    Twin(
        "zhou",
        "zhou fast=true (numpy) vs fast=false (the transcription): whole runs",
        st.tuples(SEEDS, st.sampled_from(["ps", "allreduce"]), TIES),
        run(True),
        run(False),
        same,
        examples=12,
        features=run_features,
        must_see=frozenset({"several rounds", "spread"}),
        named={
            f"seed {seed}, {arch}, tie={tie}": (seed, arch, tie)
            for seed in range(5)
            for arch in ("ps", "allreduce")
            for tie in ("completion", "loop")
        },
    ),
    Twin(
        "zhou-mincost",
        "fast.mincost1/2 vs mincost.a_mincost1/2 under non-zero prices",
        st.tuples(SEEDS, TIES),
        mincosts(True),
        mincosts(False),
        same,
        examples=12,
        features=mincost_features,
        must_see=frozenset({"plan", "no plan"}),
        named={f"seed {100 + s}, tie={tie}": (100 + s, tie) for s in range(4) for tie in ("completion", "loop")},
    ),
    Twin(
        "zhou-cheapest-first",
        "fast.cheapest_first vs mincost.cheapest_first (Alg. 4 line 8)",
        SEEDS,
        cheapest_first(True),
        cheapest_first(False),
        same,
        examples=5,
        named={f"seed {s}": s for s in (200, 201, 202)},
    ),
    Twin(
        "zhou-ps-host-limits",
        "fast._host_limits vs a literal search with mincost.fit and ps_needed (Alg. 4 line 17)",
        SEEDS,
        host_limits(True),
        host_limits(False),
        same,
        examples=5,
        named={f"seed {s}": s for s in (300, 301, 302, 303)},
    ),
    Twin(
        "zhou-spread-with-ps",
        "fast.spread_with_ps vs mincost.spread_with_ps (Alg. 4 lines 10-29)",
        SEEDS,
        spread_with_ps(True),
        spread_with_ps(False),
        same,
        examples=5,
        named={f"seed {s}": s for s in (400, 401, 402, 403)},
    ),
    Twin(
        "zhou-block-caps",
        "tables.caps_prefix / wmin_cols vs fit_counts of window minima / wmin",
        SEEDS,
        block_caps(True),
        block_caps(False),
        same,
        examples=5,
        named={f"seed {s}": s for s in (300, 301, 302)},
    ),
    Twin(
        "zhou-fits-one",
        "fast.fits_one vs fit_counts >= 1",
        SEEDS,
        fits_one(True),
        fits_one(False),
        same,
        examples=5,
        named={"seed 3": 3},
    ),
    Twin(
        "zhou-window-lengths",
        "fast._all_lengths / _lengths / _job_lengths and the rho memo vs spec.ps_lengths and eq. (1)",
        ZHOU_PRESETS,
        window_lengths(True),
        window_lengths(False),
        same,
        examples=5,
        named={"zhou-ps, 6 jobs, seed 5": ("zhou-ps", 6, 5), "zhou-ps, 4 jobs, seed 7": ("zhou-ps", 4, 7)},
    ),
    Twin(
        "zhou-rates",
        "fast._rho vs spec.rho (speed.rate) for every option and worker count",
        st.tuples(PRESET_NAMES, st.integers(2, 6), SEEDS, st.tuples(SEEDS)),
        rates(True),
        rates(False),
        same,
        examples=5,
        named={
            f"{preset}, 5 jobs, seed 3, random instances 600-602": (preset, 5, 3, (600, 601, 602))
            for preset in ("zhou-ps", "zhou-allreduce")
        },
    ),
]
