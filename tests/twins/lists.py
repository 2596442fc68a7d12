"""Twins of the list schedulers (scheduling/algorithms/priority.py, tiresias*.py, drf.py): the
change-based ``decide`` against the full walk ``decide_full``, and the ready gate of tiresias-l
against a wrapper that hides jobs until they are ready."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

from hypothesis import strategies as st

from scheduling.algorithms.baselines import fixed_configs
from scheduling.algorithms.drf import _RigidQueues
from scheduling.algorithms.priority import ListScheduler, _Queues, fifo_key
from scheduling.engine import Decision, View, simulate
from tests.twins.core import Twin
from tests.twins.sims import (
    RUN_FIELDS,
    Outcome,
    Preset,
    Rigid,
    Sim,
    Traced,
    incremental_run,
    preset_sources,
    ready_slots,
    rigid_sources,
    run_features,
    same_run,
    sims,
    sources,
)

SAME = same_run(*RUN_FIELDS)
SMALL = sources(max_jobs=30)


def srtf_features(outcome: Outcome) -> set[str]:
    # srtf's change path orders running rigid jobs by finish slot ("anchored"), elastic ones by
    # keys refreshed before every walk; the twin must meet both.
    state = outcome.algo._state
    return run_features(outcome) | ({"anchored" if state.anchored else "refreshed"} if state else set())


class ListsChecked:
    """Passes the engine's view to drf unchanged and checks, after each decision of its rigid
    change path, that its per-(shape, workers) lists hold exactly the jobs left waiting, in
    arrival order."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.checked = 0

    def decide(self, view: View) -> Decision:
        decision = self.inner.decide(view)
        state = self.inner._queues
        if isinstance(state, _RigidQueues):
            lists = [ranks for of_group in state.queues.values() for ranks in of_group.values()]
            assert all(ranks and ranks == sorted(ranks) for ranks in lists)
            queued = sorted(state.ids[r] for ranks in lists for r in ranks)
            running = view.running()
            left = {jv.job.job_id for jv in view.jobs if jv.job.job_id not in running} - set(decision.changes or ())
            assert queued == sorted(left) == sorted(state.rank) == sorted(state.ids.values())
            self.checked += 1
        return decision

    def report(self) -> Any:
        return self.inner.report()


def drf_checked(case: Sim) -> Outcome:
    algo = case.build()
    wrapped = ListsChecked(algo)
    return Outcome(simulate(case.instance, wrapped, restart_seconds=case.restart_seconds), wrapped)


def drf_features(outcome: Outcome) -> set[str]:
    return run_features(outcome) | ({"rigid lists checked"} if outcome.algo.checked else set())


def long_congested_groups() -> Rigid:
    """400 rigid jobs in five groups on 3 x 4 GPUs: long queues per (shape, workers) list."""
    rng = random.Random(5)
    rows, t = [], 0
    for _ in range(400):
        t += rng.choice([0, 0, 0, 1, 2])
        rows.append((t, rng.choice([1, 1, 2, 3, 4, 8, 12]), rng.randint(1, 30), rng.randrange(5)))
    return Rigid((4, 4, 4), tuple(rows))


# -- tiresias (tiresias_changes.ChangePath against Tiresias.decide_full) --------------------------

TIRESIAS_PARAMS = [
    {},
    {"queue_thresholds": "600,3000"},
    {"queue_thresholds": "300,1200,6000", "promote_knob": "2"},
    {"queue_thresholds": "600,3000", "promote_knob": "1.5"},
]


def tiresias_run(incremental: bool):
    # A horizon: with a restart cost, tiny thresholds and PromoteKnob, jobs can keep taking turns
    # without finishing (both paths alike).
    inner = incremental_run(incremental, horizon=3000)

    def run(case: Sim) -> Outcome:
        out = inner(case)
        assert out.algo._path == ("fast" if incremental else "full")  # the path asked for is the one taken
        return out

    return run


def tiresias_features(outcome: Outcome) -> set[str]:
    # "spared": the change path refused a job that eviction could not place without evicting
    # anything (ChangePath._could_fit_evicting), where the full walk evicts and restores.
    fast = outcome.algo._fast
    return run_features(outcome) | ({"spared"} if fast is not None and fast.spared else set())


# -- the ready gate (tiresias-l) -----------------------------------------------------------------


class HideUntilReady:
    """The gate as a wrapper: the scheduler sees a job only from its ready slot on, and the run
    wakes at the next ready slot (the transcription the change path's ``ready`` must match)."""

    def __init__(self, inner: ListScheduler, ready: dict[str, int]) -> None:
        self.inner, self.ready = inner, ready

    def decide(self, view: View) -> Decision:
        jobs = tuple(jv for jv in view.jobs if self.ready[jv.job.job_id] <= view.t)
        decision = self.inner.decide(dataclasses.replace(view, jobs=jobs))  # not direct: the full walk
        later = [self.ready[jv.job.job_id] for jv in view.jobs if self.ready[jv.job.job_id] > view.t]
        wake = [w for w in (decision.wake_at, min(later, default=None)) if w is not None]
        return dataclasses.replace(decision, wake_at=min(wake, default=None))

    def report(self) -> Any:
        return {}


def gated(inside: bool):
    def run(case: Sim) -> Outcome:
        algo, ready = case.build(), ready_slots(case)
        if inside:
            algo.ready = ready  # the change path (and decide_full, were the view not direct)
            out = simulate(case.instance, algo, restart_seconds=case.restart_seconds)
            assert all(r.start is None or r.start >= ready[r.job_id] for r in out.jobs)
            return Outcome(out, ready)
        return Outcome(simulate(case.instance, HideUntilReady(algo, ready), restart_seconds=case.restart_seconds))

    return run


def gate_features(outcome: Outcome) -> set[str]:
    ready = outcome.algo
    hidden = any(ready[j.job_id] > j.arrival for j in outcome.run.jobs)
    return run_features(outcome) | ({"hidden"} if hidden else set())


# -- a blocked fifo queue: the change path skips walks that cannot start anything ------------------


def shortest_key(jv: Any, cfg: Any) -> tuple[float, ...]:
    return (jv.job.work_required,)  # a later arrival may come before the blocked head


def blocked(incremental: bool):
    """fifo_key or shortest_key, backfill or not (case.extra); counts the change path's walks."""

    def run(case: Sim) -> Outcome:
        key_name, backfill = case.extra
        key = fifo_key if key_name == "fifo" else shortest_key
        inst = case.instance
        configs = fixed_configs(inst, {"workers_min": 1, "workers_max": 1, "ps": 1}, None)  # type: ignore[arg-type]
        algo = ListScheduler(inst, configs, key, preemptive=False, backfill=backfill, incremental=incremental)
        counts = {"walks": 0, "decisions": 0}
        walk, decide = _Queues._walk_in_order, algo.decide

        def counted_walk(self: _Queues, view: View) -> Any:
            counts["walks"] += 1
            return walk(self, view)

        def counted_decide(view: View) -> Decision:
            counts["decisions"] += 1
            return decide(view)

        algo.decide = counted_decide  # type: ignore[method-assign]
        _Queues._walk_in_order = counted_walk  # type: ignore[method-assign]
        try:
            return Outcome(simulate(inst, algo, restart_seconds=case.restart_seconds), counts)
        finally:
            _Queues._walk_in_order = walk  # type: ignore[method-assign]

    return run


def blocked_features(outcome: Outcome) -> set[str]:
    counts = outcome.algo
    return run_features(outcome) | ({"walk skipped"} if 0 < counts["walks"] < counts["decisions"] else set())


def congested(seed: int, n: int = 90) -> Rigid:
    """Rigid jobs of 1-8 GPUs on 4 x 2 GPUs, arriving faster than they are served: the head of the
    queue is blocked at most events, jobs arrive behind it, completions often fall on an arrival."""
    rng = random.Random(seed)
    rows, t = [], 0
    for _ in range(n):
        t += rng.choice([0, 0, 1, 1, 2])
        rows.append((t, rng.choice([1, 1, 2, 3, 4, 8]), rng.randint(1, 6), 0))
    return Rigid((2, 2, 2, 2), tuple(rows))


BLOCKED = st.tuples(st.sampled_from(["fifo", "shortest"]), st.booleans())

TWINS = [
    Twin(
        "fifo",
        "ListScheduler change path vs decide_full",
        sims(SMALL, [("fifo", {}), ("fifo", {"backfill": "true"})]),
        incremental_run(True),
        incremental_run(False),
        SAME,
        examples=25,
        features=run_features,
        must_see=frozenset({"queued", "spread or moved"}),
    ),
    Twin(
        "srtf",
        "ListScheduler preemptive change path vs decide_full",
        sims(SMALL, [("srtf", {}), ("srtf", {"ties": "arrival"})]),
        incremental_run(True),
        incremental_run(False),
        SAME,
        examples=40,
        features=srtf_features,
        must_see=frozenset({"queued", "suspended", "restarted", "anchored", "refreshed"}),
        named={
            # resumes and moves of anchored entries charged the restart time (_Queues.pause)
            f"the golden rigid trace {seed} with a restart cost": Sim(Traced(seed, 60), "srtf", (), 120.0)
            for seed in (21, 22)
        },
    ),
    Twin(
        "tiresias-order-start",
        "ListScheduler change path vs decide_full (tiresias order=start)",
        sims(SMALL, [("tiresias", {"order": "start", "queue_thresholds": "600,3000"})]),
        incremental_run(True),
        incremental_run(False),
        SAME,
        examples=20,
        features=run_features,
        must_see=frozenset({"queued", "suspended"}),
    ),
    Twin(
        "drf",
        "drf change paths (rigid lists, elastic waiting) vs decide_full",
        sims(SMALL, [("drf", {})]),
        drf_checked,
        incremental_run(False),
        SAME,
        examples=20,
        features=drf_features,
        must_see=frozenset({"queued", "rigid lists checked"}),
        named={"a long congested rigid run in five groups": Sim(long_congested_groups(), "drf", (), 60.0)},
    ),
    Twin(
        "tiresias",
        "tiresias_changes.ChangePath vs the list scheduler's full walk in DlasQueues' order",
        sims(
            st.one_of(rigid_sources(40, cpus=True), preset_sources(jobs=(10, 30))),
            [("tiresias", p) for p in TIRESIAS_PARAMS],
        ),
        tiresias_run(True),
        tiresias_run(False),
        SAME,
        examples=40,
        features=tiresias_features,
        must_see=frozenset({"queued", "suspended", "restarted", "spared"}),
        named={
            # separate worker and PS pools with several resources: jobs that eviction cannot place
            # are refused before evicting (ChangePath._could_fit_evicting)
            f"separate pools ({name})": Sim(Preset("oasis", 30, 5, 0.2), "tiresias", tuple(sorted(p.items())))
            for name, p in (("default", TIRESIAS_PARAMS[0]), ("promote", TIRESIAS_PARAMS[2]))
        },
    ),
    Twin(
        "tiresias-l",
        "tiresias-l change path vs decide_full",
        sims(preset_sources(("edge-cloud",), (10, 30)), [("tiresias-l", {"queue_thresholds": "3600,36000"})]),
        incremental_run(True),
        incremental_run(False),
        SAME,
        examples=8,
        features=run_features,
        must_see=frozenset({"queued"}),
    ),
    Twin(
        "ready-gate",
        "ListScheduler.ready vs a wrapper hiding jobs until ready",
        sims(
            SMALL,
            [
                ("fifo", {}),
                ("fifo", {"backfill": "true"}),
                ("srtf", {}),
                ("srtf", {"ties": "arrival"}),
                ("tiresias", {"order": "start", "queue_thresholds": "600,3000"}),
            ],
            st.integers(0, 10**6),
        ),
        gated(True),
        gated(False),
        SAME,
        examples=30,
        features=gate_features,
        must_see=frozenset({"queued", "suspended", "hidden"}),
    ),
    Twin(
        "blocked-queue",
        "skipped walks of a blocked non-preemptive queue vs a walk at every event",
        sims(rigid_sources(max_jobs=50), [("fifo", {})], BLOCKED),
        blocked(True),
        blocked(False),
        SAME,
        examples=25,
        features=blocked_features,
        must_see=frozenset({"queued", "walk skipped"}),
        named={
            f"a congested queue ({key}{', backfill' if backfill else ''})": Sim(
                congested(0), "fifo", (), 120.0, (key, backfill)
            )
            for key in ("fifo", "shortest")
            for backfill in (False, True)
        },
    ),
]
