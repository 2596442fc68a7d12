"""srtf's ties of remaining time: the previous decision's order (``ties=previous``, the default, as
the Tiresias authors' loop re-sorts its job list with a stable sort at every event) or arrival and
job id (``ties=arrival``)."""

from __future__ import annotations

import random

import pytest

from scheduling import registry
from scheduling.algorithms.ties import PreviousOrder
from scheduling.engine import simulate
from scheduling.model import Instance
from tests import scenarios


def instance(rows: list[tuple[str, int, int, int]], servers: int, gpus: int) -> Instance:
    """Rigid jobs (job_id, arrival slot, GPUs, duration slots) on ``servers`` x ``gpus`` GPUs, 60-s slots."""
    trace = "".join(f"{j},{a},{g},{60 * d}\n" for j, a, g, d in rows)
    servers_spec = [{"id": "n", "count": servers, "capacity": {"gpu": gpus}}]
    cluster = {"slot_seconds": 60, "resources": ["gpu"], "servers": servers_spec}
    return scenarios.instance("job_id,arrival,gpus,duration\n" + trace, cluster)


def run(inst: Instance, ties: str, incremental: bool = True) -> dict[str, tuple[int | None, int | None, int]]:
    spec = registry.get("srtf")
    algo = spec.build(inst, spec.parse_params({"ties": ties}), 5)
    algo.incremental = incremental
    result = simulate(inst, algo)
    return {r.job_id: (r.start, r.completion, r.preemptions) for r in result.jobs}


def test_a_waiting_job_tied_with_a_running_one_goes_first_as_in_the_previous_order():
    # 4 GPUs. x (2 GPUs) and r (2 GPUs) run from 0; w needs all 4, so it waits behind x although
    # it is shorter than r. At 2, x completes and w and r both have 6 slots left: in the previous
    # order w (6 left) was before r (8 left), so w comes first, evicts r and runs; by arrival and
    # job id r comes first and keeps running.
    inst = instance([("x", 0, 2, 2), ("w", 0, 4, 6), ("r", 0, 2, 8)], 1, 4)
    assert run(inst, "previous") == {"x": (0, 2, 0), "w": (2, 8, 0), "r": (0, 14, 1)}
    assert run(inst, "arrival") == {"x": (0, 2, 0), "w": (8, 14, 0), "r": (0, 8, 0)}


def test_a_job_arriving_now_comes_after_the_jobs_it_ties_with():
    # r runs from 0 with 8 slots; n arrives at 3 with 5 slots, tied with r (5 left): it was not in
    # the list before, so r keeps its GPUs in both modes (n is later by arrival too).
    inst = instance([("r", 0, 2, 8), ("n", 3, 2, 5)], 1, 2)
    assert run(inst, "previous") == run(inst, "arrival") == {"r": (0, 8, 0), "n": (8, 13, 0)}


def authors_loop(rows: list[tuple[str, int, int, int]], total: int) -> dict[str, tuple[int | None, int | None, int]]:
    """The Tiresias authors' ``shortest`` loop under GPU counting, written out: at every arrival and
    completion, the list of jobs (new ones appended in trace order) is sorted in place by remaining
    time (a stable sort) and walked from an empty cluster, each job running if its GPUs are free."""
    arrivals = sorted(rows, key=lambda r: (r[1], r[0]))
    jobs: list[dict] = []
    out: dict[str, tuple[int | None, int | None, int]] = {}
    i, t, last = 0, 0, 0
    while i < len(arrivals) or jobs:
        for j in jobs:
            if j["running"]:
                j["left"] -= t - last
        for j in [j for j in jobs if j["left"] == 0]:
            jobs.remove(j)
            out[j["id"]] = (j["start"], t, j["preempt"])
        while i < len(arrivals) and arrivals[i][1] == t:
            job_id, _a, gpus, slots = arrivals[i]
            jobs.append({"id": job_id, "gpus": gpus, "left": slots, "running": False, "start": None, "preempt": 0})
            i += 1
        jobs.sort(key=lambda j: j["left"])
        free = total
        for j in jobs:
            fits = j["gpus"] <= free
            if fits:
                free -= j["gpus"]
                if j["start"] is None:
                    j["start"] = t
            elif j["running"]:
                j["preempt"] += 1
            j["running"] = fits
        last = t
        nxt = [t + j["left"] for j in jobs if j["running"]] + [a[1] for a in arrivals[i : i + 1]]
        if not nxt:
            break
        t = min(nxt)
    return out


def tied_trace(seed: int) -> list[tuple[str, int, int, int]]:
    """60 rigid jobs for 8 GPUs: durations of 2, 4 or 6 slots and bursts of arrivals make equal
    remaining times frequent, at every depth of the tie rule (waiting, running, arrived now)."""
    rng = random.Random(seed)
    rows, t = [], 0
    for k in range(60):
        t += rng.choice([0, 1, 2])
        rows.append((f"j{k:02d}", t, rng.choice([1, 2, 2, 4]), rng.choice([2, 4, 6])))
    return rows


@pytest.mark.parametrize("seed", range(30))
def test_srtf_replays_the_authors_loop_job_by_job_where_ties_are_common(seed):
    rows = tied_trace(seed)
    inst = instance(rows, 1, 8)
    expected = authors_loop(rows, 8)
    assert run(inst, "previous") == expected
    assert run(inst, "previous", incremental=False) == expected


def test_arrival_ties_differ_from_the_authors_loop_on_some_of_these_traces():
    # So the test above does exercise the tie rule (about a third of the traces).
    differ = sum(
        run(instance(tied_trace(seed), 1, 8), "arrival") != authors_loop(tied_trace(seed), 8) for seed in range(30)
    )
    assert differ >= 5


def test_the_tie_components_follow_the_history_back_from_now():
    ties = PreviousOrder()
    for job_id, arrival in (("a", 0), ("b", 0), ("c", 5)):
        ties.record(job_id, arrival)
    ties.record("a", 0)  # a started at its arrival; b and c wait
    ties.t = 5
    assert ties.tie("c", 5) == (2, 5)  # first decision: after every tied job already listed
    assert ties.tie("b", 0) == (0, 0, 1, 0) < ties.tie("a", 0) == (1, 1, 0, 0)  # waiting before running
    ties.record("b", 5)  # b starts at 5: running since 5 after a wait, before a (running since its arrival)
    ties.t = 6
    assert ties.tie("b", 0) < ties.tie("a", 0)
    assert ties.tie("c", 5) == (0, 5, 1, 5)  # waiting since its arrival at 5
    ties.record("a", 6)  # a stops at 6: waiting since 6 sorts after c, waiting since 5
    assert ties.tie("c", 5) < ties.tie("a", 0)


def walked_tie(ch: list[int], arrival: int) -> tuple[int, ...]:
    """The tie of a job with change slots ``ch`` (not new at this decision), walked back from now as
    PreviousOrder's docstring states the rule: what its incremental form must equal."""
    out = [1] if len(ch) % 2 == 0 else [0]
    for i in range(len(ch) - 1, -1, -1):
        c = ch[i]
        if i % 2 == 1:  # running since c
            if i == 1 and ch[0] == c:
                return (*out, 1, c, arrival)
            out += (0, -c)
        elif i == 0:  # waiting since its arrival
            return (*out, c, 1, arrival)
        else:  # waiting since c
            out += (c, 0)
    raise AssertionError("unreachable")


@pytest.mark.parametrize("seed", range(20))
def test_a_tie_extended_at_each_change_equals_the_tie_walked_from_the_whole_history(seed):
    rng = random.Random(seed)
    ties = PreviousOrder()
    arrival = rng.randrange(5)
    ties.record("j", arrival)
    t = arrival
    for _ in range(rng.randrange(1, 60)):
        t += rng.choice((0, 0, 1, 3))  # equal slots too: a start at the arrival, a stop and restart
        ties.t = t + 1
        if rng.random() < 0.7:  # asked between some changes only, so that several are added at once
            assert ties.tie("j", arrival) == walked_tie(ties.changes["j"], arrival)
        ties.record("j", t)
    ties.t = t + 1
    assert ties.tie("j", arrival) == walked_tie(ties.changes["j"], arrival)
