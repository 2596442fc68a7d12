"""`tiresias` follows the Tiresias authors' simulator (dlas-gpu) on hand-checkable traces.

The cases run on one server (4 GPUs; 1 GPU for PromoteKnob) with 1-s slots; the expected outcomes are what the
authors' simulator (SymbioticLab/Tiresias, run_sim.py --schedule=dlas-gpu --scheme=count) prints
for the same trace (where thresholds are 10,1000, with its queue_limit set to them in a copy).

**Queue order** (thresholds 10 and 1000 GPU-seconds):
    p: arrives 0, 4 GPUs, 100 s    r: arrives 5, 1 GPU, 100 s    q: arrives 15, 1 GPU, 100 s

* 0: p runs; checks at 0 + floor((10 - 0) / 4) = 2 (8 GPU-s, stays) and 2 + floor((10 - 2) / 4) =
  4, where (16 GPU-s) it moves to Q1.
* 5: r joins Q0 and runs; p (4 GPUs) no longer fits: suspended after 5 s.
* 15: r (10 GPU-s) moves to the tail of Q1 = [p, r]; q joins Q0 and runs. p does not fit (3
  free), r does: r keeps running and waiting p moves behind it, Q1 = [r, p].
* 25: q moves to the tail of Q1 = [r, p, q]: r runs, p does not fit, q does: Q1 = [r, q, p].
* r completes at 105, q at 115; then p (95 s left) at 210. p is preempted once, r and q never.

The earlier reading (`order=start`, FIFO by first start) puts p, which started first, ahead of r
and q in Q1: at 25 p takes all 4 GPUs back (r and q suspended), p completes at 120, r 200, q 210.

**Demotion timing** (default thresholds 3250 and 7200):
    p: arrives 0, 4 GPUs, 4000 s    r: arrives 1500, 1 GPU, 5000 s    q: arrives 4750, 1 GPU, 5000 s

* p's checks: 812 (3248 GPU-s, stays in Q0), 812 + floor((3250 - 812) / 4) = 1421 (Q1).
* 1500: r runs in Q0, p is suspended (1500 s executed). 4750: r joins Q1 = [p, r] and keeps
  running (p does not fit beside q, which arrives and runs): Q1 = [r, p]. 6500: r completes.
* 8000: q joins the tail of Q1 = [p, q]: p fits and runs, q is suspended. p's next check is
  8000 + floor((7200 - 1500) / 4) = 9425, where (11700 GPU-s) p moves to Q2: q resumes (1750 s
  left) and completes at 11175, then p (1075 s left) at 12250; p preempted twice, q once.

Detecting the crossing at its exact slot (`order=start`) demotes p at 8300 instead, and q ends at 10050.

**PromoteKnob** (one GPU, thresholds 10 and 1000, K = 1; the simulator's `dlas-gpu-1`):
    a: arrives 0, 40 s    b: arrives 20, 40 s    c: arrives 35, 40 s

b runs from 20, reaches Q1 at 30 behind a and is suspended there (executed 10 s); c arrives at 35
and runs. At 40 b has waited 10 s = 1 x its executed time: it returns to the tail of Q0 with executed
time 0, and so on. Without the knob a, b, c complete at 60, 90, 120 (2, 1, 1 preemptions); with it
at 90, 110, 120 (3 preemptions each).
"""

from __future__ import annotations

import pytest

from scheduling import api
from scheduling.errors import InputError
from tests.scenarios import instance

ONE_SERVER = {
    "slot_seconds": 1,
    "resources": ["gpu"],
    "servers": [{"id": "s", "capacity": {"gpu": 4}}],
    "worker_types": [{"id": "gpu", "demand": {"gpu": 1}}],
}

QUEUE_ORDER = """job_id,arrival,gpus,duration
p,0,4,100
r,5,1,100
q,15,1,100
"""

DEMOTION = """job_id,arrival,gpus,duration
p,0,4,4000
r,1500,1,5000
q,4750,1,5000
"""


def outcome(trace: str, **params: str) -> dict[str, tuple[int, int]]:
    """(completion, preemptions) per job."""
    doc = api.run(instance(trace, ONE_SERVER), "tiresias", params)
    return {j["job_id"]: (j["completion"], j["preemptions"]) for j in doc["jobs"]}


def test_a_waiting_job_moves_behind_the_running_jobs_of_its_queue():
    assert outcome(QUEUE_ORDER, queue_thresholds="10,1000") == {"p": (210, 1), "r": (105, 0), "q": (115, 0)}


def test_order_start_keeps_the_first_start_reading():
    result = outcome(QUEUE_ORDER, queue_thresholds="10,1000", order="start")
    assert result == {"p": (120, 1), "r": (200, 1), "q": (210, 1)}


def test_demotion_is_checked_when_the_authors_simulator_checks_it():
    assert outcome(DEMOTION) == {"p": (12250, 2), "r": (6500, 0), "q": (11175, 1)}


def test_promote_knob_returns_a_starved_job_to_the_first_queue():
    trace = "job_id,arrival,gpus,duration\na,0,1,40\nb,20,1,40\nc,35,1,40\n"
    cluster = {**ONE_SERVER, "servers": [{"id": "s", "capacity": {"gpu": 1}}]}

    def run(knob: str) -> dict[str, tuple[int, int]]:
        doc = api.run(instance(trace, cluster), "tiresias", {"queue_thresholds": "10,1000", "promote_knob": knob})
        return {j["job_id"]: (j["completion"], j["preemptions"]) for j in doc["jobs"]}

    assert run("0") == {"a": (60, 2), "b": (90, 1), "c": (120, 1)}
    assert run("1") == {"a": (90, 3), "b": (110, 3), "c": (120, 3)}


def test_promote_knob_is_refused_with_order_start():
    with pytest.raises(InputError, match="promote_knob needs order=queue"):
        outcome(QUEUE_ORDER, order="start", promote_knob="2")


def test_the_walk_never_moves_a_running_job():
    """Two servers of 4 GPUs, thresholds 10,1000. y (2 GPUs) starts on s0 and reaches Q1 at 5.
    z (4 GPUs) arrives at 20 in Q0, ahead of y: on the committed ledger it goes first-fit into
    the free capacity (all of s1) and y keeps s0. Re-booking every job on an empty ledger (the
    walk before) put z on s0 and moved y to s1."""
    cluster = {**ONE_SERVER, "servers": [{"id": "s0", "capacity": {"gpu": 4}}, {"id": "s1", "capacity": {"gpu": 4}}]}
    trace = "job_id,arrival,gpus,duration\ny,0,2,100\nz,20,4,50\n"
    doc = api.run(instance(trace, cluster), "tiresias", {"queue_thresholds": "10,1000"})
    servers = {(p["job_id"], p["server"]) for p in doc["placements"]}
    assert servers == {("y", "s0"), ("z", "s1")}
    assert {j["job_id"]: (j["completion"], j["preemptions"]) for j in doc["jobs"]} == {"y": (100, 0), "z": (70, 0)}
