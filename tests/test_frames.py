"""The same frame for everyone (DESIGN section 9): one worker rule for every fixed-size baseline of
a preset comparison, and every algorithm pays the upload delay of the servers it uses."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from scheduling import api, registry, repeat, reproduce
from scheduling.loaders import cluster_from_dict
from scheduling.model import Instance
from scheduling.presets._common import PAPER_RESTART_SECONDS
from scheduling.validator import validate
from tests.test_edge_cloud import tiny

ELASTIC_PRESETS = ("edge-cloud", "zhou-ps", "zhou-allreduce", "oasis")


def fixed_size(inst: Instance) -> list[str]:
    """The registered algorithms that take a worker rule and run ``inst``."""
    return [
        name
        for name, spec in registry.all_specs().items()
        if any(p.name == "worker_rule" for p in spec.params) and spec.unsupported(inst) is None
    ]


def counts(inst: Instance, name: str, params: dict[str, Any], seed: int) -> dict[str, int]:
    """The fixed worker count per job that algorithm ``name`` builds for ``inst``."""
    spec = registry.get(name)
    algo = spec.build(inst, spec.parse_params(params), seed)
    configs = algo.configs  # type: ignore[attr-defined]
    return {job.job_id: configs[job.job_id].workers for job in inst.jobs}


@pytest.mark.parametrize("preset", ELASTIC_PRESETS)
def test_every_fixed_size_baseline_of_a_preset_gets_the_same_worker_counts(preset: str) -> None:
    inst = repeat.preset_instance(preset, 12, 4, 0.2)
    names = fixed_size(inst)
    assert len(names) >= 2, names
    rules = {name: registry.get(name).parse_params({})["worker_rule"] for name in names}
    assert set(rules.values()) == {"drawn"}, rules
    drawn = {name: counts(inst, name, {}, seed=4) for name in names}
    assert len({tuple(sorted(c.items())) for c in drawn.values()}) == 1, drawn
    assert max(next(iter(drawn.values())).values()) > 1  # a drawn width, not one worker per job


def test_no_fixed_size_baseline_of_the_edge_preset_runs_at_its_trace_requests_by_default() -> None:
    inst = repeat.preset_instance("edge-cloud", 40, 2, 0.2)
    requested = {j.job_id: j.gpu_request for j in inst.jobs}
    for name in fixed_size(inst):
        assert counts(inst, name, {}, seed=2) != requested, name
        assert counts(inst, name, {"worker_rule": "request"}, seed=2) == requested, name


def test_worker_rule_chunks_gives_one_worker_per_data_chunk_on_the_edge_preset() -> None:
    inst = repeat.preset_instance("edge-cloud", 20, 3, 0.2)
    for name in fixed_size(inst):
        assert counts(inst, name, {"worker_rule": "chunks"}, seed=3) == {j.job_id: j.chunks for j in inst.jobs}


@pytest.mark.parametrize("name", sorted(reproduce.FIGURES))
def test_every_fixed_size_baseline_of_a_figure_runs_under_one_worker_rule(name: str) -> None:
    fig = reproduce.FIGURES[name]
    frames = set()
    for _label, algorithm, params in fig.algorithms:
        spec = registry.get(algorithm)
        if any(p.name == "worker_rule" for p in spec.params):
            parsed = spec.parse_params(params)
            frames.add((parsed["worker_rule"], parsed["workers_min"], parsed["workers_max"]))
    assert len(frames) <= 1, frames


def test_the_result_names_the_worker_rule_it_ran_under() -> None:
    inst = repeat.preset_instance("edge-cloud", 6, 1, 0.1)
    doc = api.run(inst, "srtf", {"worker_rule": "chunks"}, seed=1)
    assert doc["params"]["worker_rule"] == "chunks"


# ---- upload delays --------------------------------------------------------------------------

# One job, 2 chunks of 2 mini-batches, 1 epoch, 2 workers (one per chunk): 2 slots of training, on
# an edge server its data reaches at slot 3.
UPLOAD_JOB = [{"job_id": "a", "arrival": 0, "epochs": 1, "chunks": 2, "minibatches": 2}]


@pytest.mark.parametrize("algorithm", ["fifo", "srtf", "tiresias", "tiresias-l", "antman", "batchsche"])
def test_a_baseline_waits_for_the_data_to_reach_the_server_it_uses(algorithm: str) -> None:
    inst = tiny([("e0", 8, 3)], UPLOAD_JOB, cloud_delay=10)
    doc = api.run(inst, algorithm, {"worker_rule": "chunks"}, seed=0)
    assert {p["server"] for p in doc["placements"]} == {"e0"}
    assert doc["jobs"][0]["completion"] == 3 + 2


def test_the_edge_algorithm_pays_the_same_delay() -> None:
    inst = tiny([("e0", 8, 3)], UPLOAD_JOB, cloud_delay=10)
    assert api.run(inst, "edge-cloud", seed=0)["jobs"][0]["completion"] == 3 + 2


def test_the_validator_refuses_a_result_that_skips_the_upload_delay() -> None:
    inst = tiny([("e0", 8, 3)], UPLOAD_JOB, cloud_delay=10)
    servers = tuple(dataclasses.replace(s, upload_delay=0) for s in inst.cluster.servers)
    free = Instance(dataclasses.replace(inst.cluster, servers=servers), inst.jobs)
    skipped = api.run(free, "srtf", {"worker_rule": "chunks"}, seed=0)  # trains from slot 0
    assert skipped["jobs"][0]["completion"] == 2
    problems = validate(inst, skipped)
    assert any("before its data reaches every server its workers use" in p for p in problems), problems


def test_a_job_on_the_cloud_waits_for_the_cloud_delay() -> None:
    # The edge server holds one worker: two workers spill over to the cloud, whose delay is 10.
    inst = tiny([("e0", 1, 3)], UPLOAD_JOB, cloud_delay=10)
    doc = api.run(inst, "srtf", {"worker_rule": "chunks"}, seed=0)
    assert {p["server"] for p in doc["placements"] if p["role"] == "worker"} >= {"cloud"}
    assert doc["jobs"][0]["completion"] >= 10 + 2


# ---- restart costs --------------------------------------------------------------------------


@pytest.mark.parametrize("preset", ["zhou-ps", "zhou-allreduce", "zhou-batch", "asrpt", "oasis", "edge-cloud"])
def test_the_paper_presets_charge_a_restart_cost_by_default(preset: str) -> None:
    inst = repeat.preset_instance(preset, 6, 1, 0.2)
    assert inst.cluster.restart_seconds == PAPER_RESTART_SECONDS > 0


def test_a_generic_cluster_spec_keeps_free_restarts() -> None:
    spec = {"slot_seconds": 60, "resources": ["gpu"], "servers": [{"id": "m", "capacity": {"gpu": 8}}]}
    assert cluster_from_dict(spec).restart_seconds == 0


def test_preemptions_on_a_paper_preset_are_charged_without_a_run_option() -> None:
    inst = repeat.preset_instance("zhou-ps", 30, 1)
    doc = api.run(inst, "tiresias", seed=1)
    assert doc["metrics"]["preemptions"] > 0
    assert doc["metrics"]["restarts"] > 0 and doc["restart_seconds"] == PAPER_RESTART_SECONDS


# ---- A_online under a restart cost (docs/algorithms-edge.md, "Restart cost") ----------------


def preempted_pair() -> Instance:
    """One edge worker: a (one 4-slot chunk) from slot 0, b (one 2-slot chunk, larger gamma) from 2."""
    jobs = [
        {"job_id": "a", "arrival": 0, "chunks": 1, "epochs": 1, "minibatches": 4},
        {"job_id": "b", "arrival": 2, "chunks": 1, "epochs": 1, "minibatches": 2},
    ]
    return tiny([("e1", 1, 0)], jobs, cloud_delay=50)


def test_a_online_makes_up_the_slot_a_restart_costs_its_preempted_chunk() -> None:
    inst = preempted_pair()
    free = api.run(inst, "edge-cloud", seed=0, restart_seconds=0)
    assert {j["job_id"]: j["completion"] for j in free["jobs"]} == {"a": 6, "b": 4}  # b preempts a in [2, 4)
    assert "make_up_chunks" not in free["edge_cloud"]  # restarts free: plan and engine agree
    # A 1-slot restart at a's resume (slot 4) costs a one slot of progress: its plan ends at 6 one
    # mini-batch short, and the make-up chunk on the same worker (no new restart) trains it in slot 6.
    doc = api.run(inst, "edge-cloud", seed=0, restart_seconds=1)
    assert {j["job_id"]: j["completion"] for j in doc["jobs"]} == {"a": 7, "b": 4}
    assert doc["restarts"] == [{"job_id": "a", "start": 4, "end": 5}]
    assert doc["edge_cloud"]["make_up_chunks"] == 1
    assert {p["server"] for p in doc["placements"] if p["job_id"] == "a"} == {"e1"}  # no migration


@pytest.mark.parametrize("edge_only", [False, True])
def test_a_online_finishes_every_job_of_the_edge_preset_under_its_default_restart_cost(edge_only: bool) -> None:
    inst = repeat.preset_instance("edge-cloud", 30, 1, 0.2)
    assert inst.cluster.restart_seconds == PAPER_RESTART_SECONDS
    doc = api.run(inst, "edge-cloud", {"edge_only": edge_only}, seed=1)  # validated by api.run
    assert doc["metrics"]["restarts"] > 0
    assert doc["metrics"]["completed"] == 30
    free = api.run(inst, "edge-cloud", {"edge_only": edge_only}, seed=1, restart_seconds=0)
    assert doc["metrics"]["total_jct"] >= free["metrics"]["total_jct"]


# ---- the asrpt preset's own history -----------------------------------------------------------


def test_the_asrpt_presets_own_history_has_the_traces_job_groups_and_other_jobs() -> None:
    import json

    from scheduling import presets

    trace = json.loads(presets.build("asrpt", 60, 3, 0.2).trace)
    past = json.loads(presets.own_history("asrpt", 60, 3, 0.2).trace)

    def groups(rows: list[dict[str, Any]]) -> dict[str, tuple[Any, ...]]:
        return {r["group"]: (r["model"], r["gpus"], r["user"], r["batch_time"]) for r in rows}

    now, before = groups(trace), groups(past)
    shared = set(now) & set(before)
    assert len(shared) >= 3 and all(now[g] == before[g] for g in shared)  # a group id means one group
    assert [r["iterations"] for r in trace] != [r["iterations"] for r in past]  # other jobs of them


def test_the_edge_figures_state_and_run_their_restart_cost_and_worker_rule() -> None:
    figs = {n: reproduce.FIGURES[n] for n in ("edge-fig7", "edge-fig7-restart0", "edge-fig7-chunks")}
    costs = {n: {p: b(0).cluster.restart_seconds for p, b in f.points} for n, f in figs.items()}
    assert costs == {
        "edge-fig7": {"with cloud": PAPER_RESTART_SECONDS, "edge only": PAPER_RESTART_SECONDS},
        "edge-fig7-restart0": {"with cloud": 0.0, "edge only": 0.0},
        "edge-fig7-chunks": {"with cloud": PAPER_RESTART_SECONDS, "edge only": PAPER_RESTART_SECONDS},
    }
    assert "restart cost 30 s" in figs["edge-fig7"].frame and "restart cost 0" in figs["edge-fig7-restart0"].frame
    rules = {
        a[0]: a[2].get("worker_rule", "drawn") for a in figs["edge-fig7-chunks"].algorithms if a[1] != "edge-cloud"
    }
    assert rules == {"srtf": "chunks", "tiresias-l": "chunks", "batchsche": "chunks"}
    assert "worker_rule=chunks" in figs["edge-fig7-chunks"].frame
    assert "restart cost 30 s" in reproduce.FIGURES["asrpt-fig6"].frame


@pytest.mark.parametrize("name", ["zhou-fig2", "zhou-fig5", "oasis-fig3"])
def test_a_headline_figure_runs_its_preset_with_the_restart_cost_and_with_0_on_the_same_draws(name: str) -> None:
    fig = reproduce.FIGURES[name]
    charged = [label for label, build in fig.points if build(3).cluster.restart_seconds == PAPER_RESTART_SECONDS]
    free = [label for label, build in fig.points if build(3).cluster.restart_seconds == 0]
    assert charged and free and len(charged) + len(free) == len(fig.points)
    assert all("restart 0" in label for label in free) and "restart cost" in fig.frame
    points = dict(fig.points)
    twin = points[free[0]](3)
    same = next(points[c](3) for c in charged if len(points[c](3).jobs) == len(twin.jobs))
    assert same.jobs == twin.jobs  # the same draws, only the restart cost differs


def test_oasis_fig3_spans_the_papers_job_counts() -> None:
    # Fig. 3: 50-400 jobs on 50 + 50 servers, i.e. 0.5 to 4 jobs per server (400 at half scale)
    fig = reproduce.FIGURES["oasis-fig3"]
    loads = sorted({len((inst := build(0)).jobs) / len(inst.cluster.servers) for _, build in fig.points})
    assert loads[0] <= 0.5 and loads[-1] >= 4 and len(loads) >= 4


def test_the_zhou_figures_run_the_contended_default_and_load_1() -> None:
    from scheduling.presets.zhou import measured_shortage

    for name in ("zhou-fig2", "zhou-fig5"):
        fig = reproduce.FIGURES[name]
        held = []
        for _label, build in fig.points:
            inst = build(0)
            held.append(measured_shortage(inst, api.run(inst, "fifo", seed=0))["held"])
        # offered load as the baselines run it: about 4 at the default, about 1 at "load 1"
        assert [h for h in held if h > 3] and [h for h in held if 0.8 < h < 1.3], (name, held)


def test_the_dashboard_s_default_zhou_and_oasis_instances_are_in_the_headlines_regime() -> None:
    from scheduling import figures, presets

    # the form's blank job count and load give the preset's default: the headline's first point
    for preset in ("zhou-ps", "zhou-allreduce"):
        assert presets.PRESETS[preset].default_jobs == figures.ZHOU_JOBS
        assert presets.zhou.ZHOU_LOAD == 4.0 and "load 4" in figures.FIGURES["zhou-fig2"].points[0][0]
    assert presets.PRESETS["oasis"].default_jobs in figures.OASIS_JOBS
