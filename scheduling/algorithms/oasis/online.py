"""OASiS (Bao et al., INFOCOM'18; seeds/001), Alg. 1: online admission with resource prices.

Upon each arrival, Alg. 2 (``dp``) computes the job's best schedule under the current prices
p (worker servers) and q (PS servers) and its payoff mu_i; the job is admitted iff mu_i > 0, its
per-slot workers and PSs are booked (g, v) and the prices of the booked (server, resource, slot)
entries are raised by the price functions (22). The engine is told the schedule slot by slot: at
each decision the algorithm emits the allocations of the current slot and asks to be woken at the
next slot where any admitted job's worker/PS counts change.

U_1^r, U_2^r, L_1, L_2 of (23)-(26) need every job; the paper adopts "estimated values (based on
past experience)". An online run sees no future job (DESIGN section 9): by default
(``bounds=arrived``) they are taken over the jobs arrived so far (and a separate history trace, if
given) and updated at each arrival; ``bounds=history`` (history.py) replays the separate history
trace and keeps the scale on U/L that did best there; ``bounds=trace`` computes them from the
trace's jobs (the whole trace: the paper's actual values; an offline reading that sees the
future). ``ratio_scale`` sets U/L to that fraction of the estimate (Fig. 6), by moving L (default)
or U.
"""

from __future__ import annotations

import bisect
import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from scheduling.algorithms.common import OWN_DEMAND_TYPE
from scheduling.algorithms.oasis.dp import (
    EPS,
    Book,
    JobShape,
    Schedule,
    best_schedule_fast,
    best_schedule_transcribed,
)
from scheduling.algorithms.oasis.history import Calibration, calibrate
from scheduling.algorithms.oasis.spec import HISTORY_MIN_JOBS, HISTORY_SHARE, UTILITY_FLOOR
from scheduling.engine import Decision, View
from scheduling.errors import InputError
from scheduling.model import Cluster, Instance, Job, Server
from scheduling.prices import PriceLog
from scheduling.speed import Allocation, rate


def per_worker_rate(cluster: Cluster, job: Job) -> float:
    """Work units one worker does per slot in the asynchronous model (2): 1/(tau_i + 2 e_i/b_i) per
    unit (speed.rate with one worker and one PS on separate servers; no PS update time)."""
    allocs = (
        Allocation(job.job_id, "worker-server", "worker", OWN_DEMAND_TYPE, 1),
        Allocation(job.job_id, "ps-server", "ps", OWN_DEMAND_TYPE, 1),
    )
    return rate(cluster, job, allocs)


def job_shape(cluster: Cluster, job: Job, resources: Sequence[str]) -> JobShape:
    wd, pd = job.worker_demand or {}, job.ps_demand or {}
    return JobShape(
        job_id=job.job_id,
        arrival=job.arrival,
        work=max(1, math.ceil(job.work_required - EPS)),
        rate=per_worker_rate(cluster, job),
        max_workers=job.max_workers(),
        w=np.array([float(wd.get(r, 0.0)) for r in resources]),
        s=np.array([float(pd.get(r, 0.0)) for r in resources]),
        ratio=float(wd["bw"]) / float(pd["bw"]),
        utility=job.utility,
    )


@dataclass(frozen=True)
class Bounds:
    """The price-function parameters of (22)-(26)."""

    l1: float
    l2: float
    u1: np.ndarray  # per resource
    u2: np.ndarray

    def describe(self, resources: Sequence[str]) -> dict[str, Any]:
        return {
            "L1": self.l1,
            "L2": self.l2,
            "U1": {r: float(u) for r, u in zip(resources, self.u1, strict=True)},
            "U2": {r: float(u) for r, u in zip(resources, self.u2, strict=True)},
        }


def estimate_bounds(
    shapes: Sequence[JobShape],
    book: Book,
    scale: float = 1.0,
    floor: float = 0.0,
    moves: str = "L",
    eta: str = "bound",
) -> Bounds:
    """U_1^r, U_2^r (23)-(24), L_1, L_2 (25)-(26) over ``shapes``; U/L multiplied by ``scale``, by
    dividing L by it (``moves`` = "L") or multiplying U by it ("U").

    * f_i at the shortest completion: N_i workers in every slot, JCT ceil(D_i / (N_i rate_i)).
    * ceil(E_i N_i M_i (tau_i + 2 e_i / b_i)) = the job's worker-slots, ceil(D_i / rate_i).
    * eta_1, eta_2: the largest 1/eta the paper allows (so the largest L), 1/eta_1 = min_i X_i
      sum_r w_i^r / (T sum_h sum_r c_h^r) (Sec. IV-B; Appendix E needs it for D_0 <= OPT/2). With
      ``eta`` = "one", 1/eta = 1: only what Appendix A needs (1/eta <= 1, any job is admitted at
      price L), not the condition of Sec. IV-B; L is then larger by the factor 1/min_i(...).
    * f_i(T - a_i) is replaced by max(f_i(T - a_i), ``floor`` x gamma_1 (priority)). With floor = 0 this
      is (25)-(26) as written, except that jobs whose f_i(T - a_i) underflows to 0 are left out
      (else L = 0 and (22) is undefined). The sigmoid of a time-critical job is ~e^-1000 at T - a_i
      = 300, which makes U/L ~ 1e250 and the prices negligible below ~99% load: the default floor
      (docs/algorithms-oasis.md, "L") keeps U/L in the range the paper's Figs. 5-6 vary.
    * A resource no job demands keeps the flat price L (U = L).
    """
    terms = BoundTerms.empty(book)
    for sh in shapes:
        terms.add(sh, book, floor)
    return terms.bounds(scale, moves, eta)


@dataclass
class BoundTerms:
    """The running extremes over jobs that (23)-(26) take: max f_i/w_i^r, min f_i(T - a_i)/X_i and
    min eta terms. Adding a job is O(R), so ``bounds=arrived`` can update them at every arrival."""

    u1: np.ndarray  # per resource: max over jobs of f_i(fastest) / w_i^r (23)
    u2: np.ndarray  # per resource: max over jobs of f_i(fastest) / s_i^r (24)
    low1: float  # min over jobs of f_i(T - a_i) / X_i (workers) (25); inf: none yet
    low2: float  # the same over PS slots (26)
    eta1: float  # min over jobs of X_i sum_r w_i^r / (T sum_h sum_r c_h^r); inf: none yet
    eta2: float

    @staticmethod
    def empty(book: Book) -> BoundTerms:
        n_res = book.cap_w.shape[1]
        inf = math.inf
        return BoundTerms(np.zeros(n_res), np.zeros(n_res), inf, inf, inf, inf)

    def add(self, sh: JobShape, book: Book, floor: float) -> None:
        horizon = book.horizon
        cap_w, cap_p = float(book.cap_w.sum()), float(book.cap_p.sum())
        fastest = max(1, math.ceil(sh.work / (sh.max_workers * sh.rate) - EPS))
        top = sh.f(fastest)
        for r in range(len(self.u1)):
            if sh.w[r] > 0:
                self.u1[r] = max(self.u1[r], top / sh.w[r])
            if sh.s[r] > 0:
                self.u2[r] = max(self.u2[r], top / sh.s[r])
        slots = math.ceil(sh.work / sh.rate - EPS)
        xw, xp = slots * float(sh.w.sum()), slots * float(sh.s.sum())
        self.eta1 = min(self.eta1, xw / (horizon * cap_w))
        self.eta2 = min(self.eta2, xp / (horizon * cap_p))
        late = max(sh.f(horizon - sh.arrival), floor * sh.utility.priority)
        if late > 0:
            self.low1 = min(self.low1, late / xw)
            self.low2 = min(self.low2, late / xp)

    def bounds(self, scale: float = 1.0, moves: str = "L", eta: str = "bound") -> Bounds:
        tiny = math.ulp(0.0) * 2**60
        inv_eta1 = 1.0 if eta == "one" or math.isinf(self.eta1) else self.eta1
        inv_eta2 = 1.0 if eta == "one" or math.isinf(self.eta2) else self.eta2
        low1 = tiny if math.isinf(self.low1) else self.low1
        low2 = tiny if math.isinf(self.low2) else self.low2
        l1 = max(low1 * inv_eta1 / 4.0, tiny)
        l2 = max(low2 * inv_eta2 / 4.0, tiny)
        u1, u2 = self.u1.copy(), self.u2.copy()
        if moves == "U":
            u1, u2 = u1 * scale, u2 * scale
        else:
            l1, l2 = l1 / scale, l2 / scale
        u1 = np.where(u1 > 0, u1, l1)
        u2 = np.where(u2 > 0, u2, l2)
        return Bounds(l1, l2, np.maximum(u1, l1), np.maximum(u2, l2))


def price(low: float, high: np.ndarray, used: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """(22): L (U^r / L)^(g^r / c^r), elementwise; a resource a server lacks keeps price L.

    ``used`` and ``cap`` are (servers, R, ...) and (servers, R); ``high`` is per resource."""
    c = cap.reshape(cap.shape + (1,) * (used.ndim - cap.ndim))
    share = np.divide(used, c, out=np.zeros_like(used), where=c > 0)
    log_ratio = np.log(high / low).reshape((1, -1) + (1,) * (used.ndim - 2))
    out: np.ndarray = low * np.exp(share * log_ratio)
    return out


def book_schedule(book: Book, b: Bounds, shape: JobShape, plan: Schedule) -> None:
    """Alg. 1 lines 7-10: book the schedule's workers and PSs into g, v and raise p, q by (22)."""
    for t, (y, z) in plan.slots.items():
        yv, zv = np.array(y, dtype=float), np.array(z, dtype=float)
        hs, ks = np.nonzero(yv)[0], np.nonzero(zv)[0]
        book.g[hs, :, t] += yv[hs, None] * shape.w  # line 7
        book.p[hs, :, t] = price(b.l1, b.u1, book.g[hs, :, t], book.cap_w[hs])  # line 8
        book.v[ks, :, t] += zv[ks, None] * shape.s  # line 9
        book.q[ks, :, t] = price(b.l2, b.u2, book.v[ks, :, t], book.cap_p[ks])  # line 10


RESTART_REPLANS = 20  # plans of one job for a workload that covers its own restarts (Oasis._plan)


def restart_of(view: View, job_id: str) -> tuple[int, float]:
    """The restart cost the engine charges ``job_id`` in this run: (k slots, share of the last slot's
    progress), engine.restart_share; (0, 0.0) when restarts are free."""
    if view.engine is None:
        return 0, 0.0
    return view.restart_slots(job_id), view.engine.share


def delivered(plan: Schedule, unit_rate: float, k: int, share: float) -> float:
    """The work a plan does under the engine's restart rule (docs/formats.md, "Restart cost"): a
    (re)start on an allocation other than the one held just before, or any resume after a slot with
    nothing, begins a restart period of k slots (the first start is free); no progress in it but
    ``share`` x the rate in its last slot; a change inside a period ends it and begins a new one.
    A slot's rate is its workers x ``unit_rate`` (the asynchronous model Alg. 2 plans with)."""
    done = 0.0
    held: tuple[tuple[int, ...], tuple[int, ...]] | None = None  # what the job held in the previous slot
    last: tuple[tuple[int, ...], tuple[int, ...]] | None = None  # the last allocation it held at all
    until = -1  # end (exclusive) of the current restart period
    for t in range(min(plan.slots), plan.completion + 1):
        cur = plan.slots.get(t)
        if cur is not None and not any(cur[0]) and not any(cur[1]):
            cur = None  # nothing held in that slot
        if cur != held:
            until = -1
            if cur is not None and last is not None and k > 0 and (held is None or cur != last):
                until = t + k
            if cur is not None:
                last = cur
            held = cur
        if cur is None:
            continue
        full = sum(cur[0]) * unit_rate
        if t < until:
            done += full * share if t == until - 1 else 0.0
        else:
            done += full
    return done


TRANSCRIPTION_MAX_WORK = 1000  # work units beyond which dp=transcription is refused (minutes per job)


class Oasis:
    def __init__(self, instance: Instance, params: Mapping[str, Any], dp: str | None = None) -> None:
        cluster = instance.cluster
        assert cluster.horizon is not None
        self.cluster = cluster
        self.resources = list(cluster.resource_names())
        self.wservers = [s for s in cluster.servers if s.pool == "worker"]
        self.pservers = [s for s in cluster.servers if s.pool == "ps"]

        def cap(servers: Sequence[Server]) -> np.ndarray:
            return np.array([[float(s.capacity.get(r, 0.0)) for r in self.resources] for s in servers])

        self.book = Book(cap(self.wservers), cap(self.pservers), cluster.horizon)
        # A job's own shape is read only once it arrives (``arrive``); bounds=trace reads them all.
        self.shapes = {j.job_id: job_shape(cluster, j, self.resources) for j in instance.jobs}
        self.terms: BoundTerms | None = None  # bounds=arrived: U, L over the jobs seen so far
        self.bounds, self.calibration = self._bounds(instance, params)
        b = self.bounds
        self.book.p[:] = b.l1  # Alg. 1 line 1: p = P(0) = L_1, q = Q(0) = L_2
        self.book.q[:] = b.l2
        literal = (dp or params.get("dp", "fast")) == "transcription"
        biggest = max((sh.work for sh in self.shapes.values()), default=0)
        if literal and biggest > TRANSCRIPTION_MAX_WORK:
            raise InputError(
                f"dp=transcription runs the literal O(T W^2) recursion; the largest workload here is {biggest} "
                f"units (at most {TRANSCRIPTION_MAX_WORK}): use dp=fast, which gives the same schedules",
                field="param dp",
            )
        self.solve = best_schedule_transcribed if literal else best_schedule_fast
        self.plans: dict[str, Schedule] = {}
        self.changes: list[int] = []  # sorted slots where some admitted job's allocation changes
        self.payoffs: dict[str, float] = {}
        self.restart_units: dict[str, int] = {}  # job -> work units planned beyond D_i for its restarts
        order = {s.id: i for i, s in enumerate(cluster.servers)}
        self.w_index = [order[s.id] for s in self.wservers]
        self.p_index = [order[s.id] for s in self.pservers]
        self.log = PriceLog(
            self.resources,
            [s.id for s in cluster.servers],
            cluster.horizon,
            label="p/q",
            pools=[s.pool for s in cluster.servers],
            initial_by_pool={"worker": b.l1, "ps": b.l2},
            digits=9,
        )

    def _bounds(self, instance: Instance, params: Mapping[str, Any]) -> tuple[Bounds, Calibration | None]:
        """U, L of (23)-(26) at slot 0, by ``bounds`` (docs/algorithms-oasis.md, "What oasis may see"):

        * ``arrived`` (default, online): the history trace's jobs, if any, and then every job as it
          arrives (``arrive`` updates them; at slot 0 no job of the trace is known);
        * ``history``: a replay of the separate history trace with the scale on U/L that did best
          there (oasis/history.py); too few history jobs fall back to ``arrived``;
        * ``trace`` (offline reading, sees future jobs): the trace's jobs arriving before
          ``bounds_window`` (0: all of them, the paper's actual values).

        ``ratio_scale`` multiplies U/L on top of any of them (Fig. 6)."""
        scale = float(params.get("ratio_scale", 1.0))
        floor = float(params.get("utility_floor", UTILITY_FLOOR))
        moves, eta = str(params.get("scale_moves", "L")), str(params.get("eta", "bound"))
        self.bound_args = (scale, moves, eta)
        self.floor = floor
        mode = str(params.get("bounds", "arrived"))
        history = [job_shape(self.cluster, j, self.resources) for j in instance.history]

        def bounds_of(shapes: Sequence[JobShape], s: float) -> Bounds:
            return estimate_bounds(shapes, self.book, s, floor, moves, eta)

        calibration = None
        if mode == "history":
            if not history:
                raise InputError(
                    "bounds=history calibrates on a separate history trace, and none was given "
                    "(CLI --history FILE, the API's history); bounds=arrived needs none",
                    field="param bounds",
                )
            calibration = calibrate(
                history,
                self.book.cap_w,
                self.book.cap_p,
                self.book.horizon,
                bounds_of,
                book_schedule,
                float(params.get("history_share", HISTORY_SHARE)),
                int(params.get("history_min_jobs", HISTORY_MIN_JOBS)),
                int(params.get("history_seed", 0)),
            )
            if calibration.used == "history":
                return bounds_of(calibration.replay_shapes, calibration.scale * scale), calibration
            mode = "arrived"
        if mode == "trace":
            window = int(params.get("bounds_window", 0))
            past = [self.shapes[j.job_id] for j in instance.jobs if window <= 0 or j.arrival < window]
            return bounds_of(past or list(self.shapes.values()), scale), calibration
        self.terms = BoundTerms.empty(self.book)
        for sh in history:
            self.terms.add(sh, self.book, floor)
        return self.terms.bounds(scale, moves, eta), calibration

    def _learn(self, shape: JobShape) -> bool:
        """bounds=arrived: take the arriving job into U, L; if they move, every price of (22) is
        recomputed from the booked amounts g, v (the price is a function of them)."""
        assert self.terms is not None
        self.terms.add(shape, self.book, self.floor)
        new = self.terms.bounds(*self.bound_args)
        b = self.bounds
        if new.l1 == b.l1 and new.l2 == b.l2 and np.array_equal(new.u1, b.u1) and np.array_equal(new.u2, b.u2):
            return False
        self.bounds = new
        self.book.p[:] = price(new.l1, new.u1, self.book.g, self.book.cap_w)
        self.book.q[:] = price(new.l2, new.u2, self.book.v, self.book.cap_p)
        return True

    # -- Alg. 1 ------------------------------------------------------------------------------

    def arrive(self, job_id: str, t: int, restart: tuple[int, float] = (0, 0.0)) -> bool:
        """Alg. 1 lines 2-15 for one job; returns whether it was admitted. ``restart``: the run's
        restart cost as the engine charges it, (k slots, share of the last slot's progress)."""
        shape = self.shapes[job_id]
        moved = self.terms is not None and self._learn(shape)
        plan = self._plan(shape, restart)  # line 3 (Alg. 2)
        admitted = plan is not None and plan.payoff > 0  # line 4
        if plan is not None and admitted:
            self.plans[job_id] = plan  # lines 5-6
            self.payoffs[job_id] = plan.payoff
            self._book(shape, plan)  # lines 7-10
        rebase = {"worker": self.bounds.l1, "ps": self.bounds.l2} if moved else None
        self.log.record(t, job_id, admitted, self.price_array(), rebase)
        return admitted

    def _plan(self, shape: JobShape, restart: tuple[int, float]) -> Schedule | None:
        """Alg. 2's best schedule of the job, for a workload that covers the restarts of the plan.

        The paper's model has no restart cost: its schedules change a job's workers and PSs at almost
        every slot. Under the engine's restart rule (DESIGN section 9: every change of a job's
        allocation loses the restart time) a plan for exactly D_i units ends short of its work, and
        the job never completes. So, with a restart cost, Alg. 2 is asked for D_i + extra units,
        extra growing by what the plan's own restarts lose (``delivered``) until the plan delivers
        D_i: the payoff mu_i then prices the real schedule, restarts included. Without a restart
        cost this is Alg. 2 itself (one call). Gives up (None: the job is rejected) after
        RESTART_REPLANS plans that each fall short."""
        plan = self.solve(self.book, shape)
        if restart[0] <= 0:
            return plan
        extra = 0
        for _ in range(RESTART_REPLANS):
            if plan is None:
                return None
            short = shape.work - delivered(plan, shape.rate, *restart)
            if short <= EPS:
                if extra:
                    self.restart_units[shape.job_id] = extra
                return plan
            extra += max(1, math.ceil(short - EPS))
            plan = self.solve(self.book, dataclasses.replace(shape, work=shape.work + extra))
        return None

    def _book(self, shape: JobShape, plan: Schedule) -> None:
        prev: tuple[tuple[int, ...], tuple[int, ...]] | None = None
        for t in range(min(plan.slots), plan.completion + 2):
            cur = plan.slots.get(t)
            if cur != prev:
                bisect.insort(self.changes, t)
            prev = cur
        book_schedule(self.book, self.bounds, shape, plan)

    def price_array(self) -> np.ndarray:
        out = np.empty((len(self.resources), len(self.cluster.servers), self.book.horizon))
        out[:, self.w_index, :] = self.book.p.transpose(1, 0, 2)
        out[:, self.p_index, :] = self.book.q.transpose(1, 0, 2)
        return out

    # -- engine protocol ---------------------------------------------------------------------

    def decide(self, view: View) -> Decision:
        t = view.t
        admit: list[str] = []
        reject: list[str] = []
        for job in view.arrived:  # in (arrival, job id) order
            (admit if self.arrive(job.job_id, t, restart_of(view, job.job_id)) else reject).append(job.job_id)
        allocations = []
        for jv in view.jobs:
            plan = self.plans.get(jv.job.job_id)
            slot = plan.slots.get(t) if plan is not None else None
            if slot is None:
                continue
            y, z = slot
            job_id = jv.job.job_id
            allocations += [
                Allocation(job_id, self.wservers[h].id, "worker", OWN_DEMAND_TYPE, n) for h, n in enumerate(y) if n
            ]
            allocations += [
                Allocation(job_id, self.pservers[k].id, "ps", OWN_DEMAND_TYPE, n) for k, n in enumerate(z) if n
            ]
        i = bisect.bisect_right(self.changes, t)
        wake = self.changes[i] if i < len(self.changes) else None
        return Decision(tuple(allocations), tuple(admit), tuple(reject), wake_at=wake)

    def report(self) -> Mapping[str, Any]:
        return {
            "prices": self.log.to_dict(),
            "oasis": {
                "bounds": self.bounds.describe(self.resources),
                **({"calibration": self.calibration.describe()} if self.calibration is not None else {}),
                "planned": {
                    job_id: {
                        "completion": p.completion,
                        "payoff": p.payoff,
                        "cost": p.cost,
                        **({"restart_units": self.restart_units[job_id]} if job_id in self.restart_units else {}),
                    }
                    for job_id, p in self.plans.items()
                },
            },
        }


def check_constraints(instance: Instance, doc: Mapping[str, Any]) -> list[str]:
    """Per-slot checks of (3), (6) and (7) on a result (what the validator runs for oasis, dorm and
    offline-opt results): workers <= N_i, PS bandwidth >= worker bandwidth, PSs <= workers."""
    from scheduling.validator import worker_counts

    return worker_counts(instance, doc, ps_rules=True)


def make_oasis(instance: Instance, params: Mapping[str, Any], rng: np.random.Generator) -> Oasis:
    return Oasis(instance, params)
