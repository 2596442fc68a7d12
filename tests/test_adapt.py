"""``adapt``: a real rigid trace (Philly) on a rigid GPU cluster (hand-written, or Alibaba's node list)
as each paper's model; every job accounted for, ideal durations as recorded, byte-stable files, and
every algorithm that supports the adapted instance through the validator."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from scheduling import adapt, api, importers, registry
from scheduling.adapt.common import ideal_allocations
from scheduling.cli import main
from scheduling.errors import InputError
from scheduling.model import Instance, Job
from scheduling.speed import Allocation, chunk_slots, rate
from scheduling.validator import validate

# ../shared/traces beside the project root (as contract_check.py reads it), else /work/shared/traces
ROOT = Path(__file__).resolve().parents[1]
SHARED = next((p for p in (ROOT.parent / "shared" / "traces", Path("/work/shared/traces")) if p.exists()), ROOT)
PHILLY = SHARED / "philly" / "philly.csv"
NODES = SHARED / "alibaba-openb" / "openb_node_list_gpu_node.csv"
pytestmark = pytest.mark.skipif(not PHILLY.exists(), reason=f"{PHILLY} not found")

MODELS = list(adapt.MODELS)
PAPER_ALGORITHM = {"zhou-ps": "zhou", "zhou-allreduce": "zhou", "oasis": "oasis", "edge-cloud": "edge-cloud"}
PAPER_ALGORITHM["asrpt"] = "asrpt"
RIGID_CLUSTER = {
    "slot_seconds": 60,
    "resources": [{"name": "gpu", "unit": "GPU"}],
    "servers": [{"id": "node", "count": 6, "capacity": {"gpu": 8}}],
}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    """(cluster, trace) pairs: 30 Philly jobs on six 8-GPU nodes, 24 on Alibaba's 1,213 nodes."""
    d = tmp_path_factory.mktemp("adapt-inputs")
    importers.run("generic-gpu", PHILLY, d / "philly30.csv", limit=30, slot_seconds=60)
    importers.run("generic-gpu", PHILLY, d / "philly24.csv", start="2017-10-10", limit=24, slot_seconds=60)
    rigid = d / "rigid.json"
    rigid.write_text(json.dumps(RIGID_CLUSTER))
    out = {"rigid": (rigid, d / "philly30.csv")}
    if NODES.exists():
        importers.run("node-list", NODES, d / "alibaba.json")
        out["alibaba"] = (d / "alibaba.json", d / "philly24.csv")
    return out


def adapted(tmp: Path, model: str, cluster: Path, trace: Path, seed: int = 2, fraction: float | None = 0.3) -> Path:
    out = tmp / f"{model}-{seed}"
    adapt.run(model, cluster, trace, out, seed, fraction)
    return out


def load(out: Path) -> Instance:
    history = out / "history.json"
    return api.load_instance(out / "cluster.json", out / "trace.json", history if history.exists() else None)


def ideal_slots(instance: Instance, job: Job) -> int:
    """The job's duration on every worker it asked for, of its fastest type, by the engine's speed."""
    cluster = instance.cluster
    if job.stages:  # A-SRPT: iterations x alpha~_min (batch_time, slots)
        return math.ceil(job.work_required * job.batch_time_for("*") - 1e-9)
    workers = job.max_workers()
    if any(s.site == "edge" for s in cluster.servers):  # one chunk per worker, eq. (1) and (4a)
        (worker_type,) = job.batch_time
        return chunk_slots(cluster, job, worker_type, colocated=False)
    if job.worker_demand is not None:  # OASiS: workers on a worker server, PSs on a PS server
        ws = next(s.id for s in cluster.servers if s.pool == "worker")
        ps = next(s.id for s in cluster.servers if s.pool == "ps")
        n_ps = math.ceil(workers * job.worker_demand["bw"] / job.ps_demand["bw"])  # type: ignore[index]
        allocs = [Allocation(job.job_id, ws, "worker", "job", workers), Allocation(job.job_id, ps, "ps", "job", n_ps)]
        return math.ceil(job.work_required / rate(cluster, job, allocs) - 1e-9)
    ps_type = cluster.ps_types[0].id if cluster.ps_types else None
    return min(
        math.ceil(job.work_required / rate(cluster, job, ideal_allocations(cluster, job, t, workers, ps_type)) - 1e-9)
        for t in job.batch_time
    )


@pytest.mark.parametrize("where", ["rigid", "alibaba"])
@pytest.mark.parametrize("model", MODELS)
def test_every_job_is_adapted_or_refused_and_its_ideal_duration_is_the_recorded_one(inputs, tmp_path, model, where):
    if where not in inputs:
        pytest.skip(f"{NODES} not found")
    cluster_path, trace_path = inputs[where]
    source = api.load_instance(cluster_path, trace_path)
    out = adapted(tmp_path, model, cluster_path, trace_path)
    instance = load(out)
    record = json.loads((out / "adapt.json").read_text())
    evaluated = {j.job_id for j in instance.jobs}
    history = {j.job_id for j in instance.history}
    refused = {r["job_id"] for r in record["refused"]}
    assert not (evaluated & history) and not (refused & (evaluated | history))
    assert evaluated | history | refused == {j.job_id for j in source.jobs}
    assert record["jobs"]["input"] == len(source.jobs) == len(evaluated) + len(history) + len(refused)
    assert history == {j.job_id for j in source.jobs[: math.floor(0.3 * len(source.jobs))]}  # the leading part
    ratio = source.cluster.slot_seconds / instance.cluster.slot_seconds
    for job in (*instance.jobs, *instance.history):
        recorded = source.job(job.job_id).duration * ratio  # type: ignore[operator]
        assert abs(ideal_slots(instance, job) - recorded) <= 1, job.job_id
    assert all({"name", "value", "source"} <= set(a) for a in record["assumptions"])


@pytest.mark.parametrize("model", MODELS)
def test_the_same_seed_gives_the_same_files_byte_for_byte(inputs, tmp_path, model):
    cluster_path, trace_path = inputs["rigid"]
    a = adapted(tmp_path / "a", model, cluster_path, trace_path, seed=5)
    b = adapted(tmp_path / "b", model, cluster_path, trace_path, seed=5)
    names = sorted(p.name for p in a.iterdir())
    assert names == ["adapt.json", "cluster.json", "history.json", "trace.json"]
    for name in names:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    other = adapted(tmp_path / "c", model, cluster_path, trace_path, seed=6)
    assert (other / "trace.json").read_bytes() != (a / "trace.json").read_bytes()


@pytest.mark.parametrize("where", ["rigid", "alibaba"])
@pytest.mark.parametrize("model", MODELS)
def test_the_papers_algorithm_and_fifo_run_the_adapted_instance_through_the_validator(inputs, tmp_path, model, where):
    if where not in inputs:
        pytest.skip(f"{NODES} not found")
    instance = load(adapted(tmp_path, model, *inputs[where]))
    for name in (PAPER_ALGORITHM[model], "fifo"):
        doc = api.run(instance, name, seed=3)  # api.run validates the result
        assert doc["metrics"]["jobs"] == len(instance.jobs) and doc["metrics"]["completed"] > 0


@pytest.fixture(scope="module")
def small_instances(inputs, tmp_path_factory) -> dict[str, Instance]:
    d = tmp_path_factory.mktemp("adapt-small")
    cluster = inputs["rigid"][0]
    importers.run("generic-gpu", PHILLY, d / "philly12.csv", start="2017-10-10", limit=12, slot_seconds=60)
    return {m: load(adapted(d, m, cluster, d / "philly12.csv", fraction=0.25)) for m in MODELS}


@pytest.mark.parametrize("algorithm", sorted(registry.all_specs()))
@pytest.mark.parametrize("model", MODELS)
def test_every_algorithm_that_supports_an_adapted_instance_passes_the_validator(small_instances, model, algorithm):
    instance = small_instances[model]
    spec = registry.get(algorithm)
    if why := spec.unsupported(instance):
        pytest.skip(why)
    params = {"time_limit": "600"} if algorithm == "dorm" else {}  # dorm's MILP: no wall-clock cut on a busy host
    doc = api.run(instance, algorithm, params, seed=1)
    assert doc["metrics"]["jobs"] == len(instance.jobs)


def test_every_registered_algorithm_supports_some_adapted_model(small_instances):
    supported = {
        name
        for name, spec in registry.all_specs().items()
        if any(spec.unsupported(instance) is None for instance in small_instances.values())
    }
    assert supported == set(registry.all_specs())


def test_the_paper_algorithm_supports_each_adapted_instance(small_instances):
    for model, instance in small_instances.items():
        assert registry.get(PAPER_ALGORITHM[model]).unsupported(instance) is None, model


def test_asrpt_adapted_without_a_history_is_refused_by_asrpt_not_run_as_fifo(inputs, tmp_path, capsys):
    cluster, trace = inputs["rigid"]
    out = tmp_path / "asrpt"
    assert main(["adapt", "--model", "asrpt", "--cluster", str(cluster), "--trace", str(trace), "--out", str(out)]) == 0
    assert not (out / "history.json").exists()
    assert "no --history-fraction" in capsys.readouterr().err
    args = ["simulate", "--cluster", str(out / "cluster.json"), "--trace", str(out / "trace.json")]
    assert main([*args, "--algorithm", "asrpt", "--out", str(tmp_path / "r.json")]) == 2
    assert "asrpt needs a history of past jobs" in capsys.readouterr().err
    assert main([*args, "--algorithm", "fifo", "--out", str(tmp_path / "r.json")]) == 0


def test_a_job_the_model_cannot_express_is_refused_with_its_id_and_reason(tmp_path):
    cluster = tmp_path / "c.json"
    cluster.write_text(json.dumps({**RIGID_CLUSTER, "worker_types": [{"id": "gpu", "demand": {"gpu": 1}}]}))
    trace = tmp_path / "t.csv"  # e1: an elastic job (no recorded GPUs and duration)
    trace.write_text("job_id,arrival,gpus,duration,group\nr1,0,2,3600,g\ne1,1,,,g\nr2,3,1,600,g\n")
    out = adapted(tmp_path, "zhou-allreduce", cluster, trace, fraction=None)
    record = json.loads((out / "adapt.json").read_text())
    assert record["refused"] == [{"job_id": "e1", "reason": "not a rigid GPU job (adapt needs gpus and duration)"}]
    assert [j.job_id for j in load(out).jobs] == ["r1", "r2"]
    only = tmp_path / "only-elastic.csv"
    only.write_text("job_id,arrival\ne1,0\n")
    with pytest.raises(InputError, match=r"no job is left to evaluate .* e1: not a rigid GPU job"):
        adapted(tmp_path, "oasis", cluster, only, fraction=None)


def test_the_clusters_restart_cost_is_kept(tmp_path):
    cluster = tmp_path / "c.json"
    cluster.write_text(json.dumps({**RIGID_CLUSTER, "restart_seconds": 90}))
    trace = tmp_path / "t.csv"
    trace.write_text("job_id,arrival,gpus,duration\nr1,0,2,3600\n")
    for model in MODELS:
        assert load(adapted(tmp_path, model, cluster, trace, fraction=None)).cluster.restart_seconds == 90, model


def test_bad_input_exits_2_naming_the_file_and_field(inputs, tmp_path, capsys):
    _, trace = inputs["rigid"]
    cpu_only = tmp_path / "cpu.json"
    cpu_only.write_text(
        json.dumps({"slot_seconds": 60, "resources": ["cpu"], "servers": [{"id": "a", "capacity": {"cpu": 4}}]})
    )
    tiny = tmp_path / "tiny.csv"
    tiny.write_text("job_id,arrival\nj1,0\n")
    base = ["adapt", "--model", "oasis", "--out", str(tmp_path / "out")]
    assert main([*base, "--cluster", str(cpu_only), "--trace", str(tiny)]) == 2
    assert f"{cpu_only}, field 'resources'" in capsys.readouterr().err
    rigid = inputs["rigid"][0]
    assert main([*base, "--cluster", str(rigid), "--trace", str(trace), "--history-fraction", "1.5"]) == 2
    assert "field '--history-fraction'" in capsys.readouterr().err
    missing = tmp_path / "missing.csv"
    assert main([*base, "--cluster", str(rigid), "--trace", str(missing)]) == 2
    assert str(missing) in capsys.readouterr().err
    with pytest.raises(InputError, match="unknown model"):
        adapt.run("dorm", rigid, trace, tmp_path / "x")
    with pytest.raises(SystemExit) as exc:
        main([*base[:2], "dorm", *base[3:], "--cluster", str(rigid), "--trace", str(trace)])
    assert exc.value.code == 2


def test_compare_adapt_runs_every_algorithm_on_the_same_adapted_instance(inputs, tmp_path):
    cluster, trace = inputs["rigid"]
    out = tmp_path / "cmp"
    args = ["compare", "--cluster", str(cluster), "--trace", str(trace), "--adapt", "edge-cloud", "--seed", "4"]
    assert main([*args, "--algorithms", "edge-cloud,fifo,srtf", "--out", str(out)]) == 0
    adapted_files = sorted(p.name for p in (out / "adapted").iterdir())
    assert adapted_files == ["adapt.json", "cluster.json", "trace.json"]
    instance = load(out / "adapted")
    digests = set()
    for name in ("edge-cloud", "fifo", "srtf"):
        doc = json.loads((out / f"{name}.json").read_text())
        assert validate(instance, doc) == []
        digests.add(json.dumps(doc["inputs"], sort_keys=True))
    assert len(digests) == 1  # one instance for every algorithm, the baselines included


def test_compare_adapt_refuses_a_history_file_and_a_history_fraction_needs_adapt(inputs, tmp_path, capsys):
    cluster, trace = inputs["rigid"]
    args = ["compare", "--cluster", str(cluster), "--trace", str(trace), "--algorithms", "fifo"]
    out = ["--out", str(tmp_path / "o")]
    assert main([*args, "--adapt", "asrpt", "--history", str(trace), *out]) == 2
    assert "field '--history': not with --adapt" in capsys.readouterr().err
    assert main([*args, "--history-fraction", "0.3", *out]) == 2
    assert "field '--history-fraction': only with --adapt" in capsys.readouterr().err


def test_compare_adapt_over_windows_adapts_each_window_on_its_own_reseeded(inputs, tmp_path):
    cluster, trace = inputs["rigid"]
    out = tmp_path / "windows"
    args = ["compare", "--cluster", str(cluster), "--trace", str(trace), "--adapt", "asrpt", "--history-fraction"]
    assert main([*args, "0.3", "--windows", "2", "--seed", "7", "--algorithms", "asrpt,fifo", "--out", str(out)]) == 0
    records = [json.loads((out / "adapted" / f"window-{i}" / "adapt.json").read_text()) for i in range(2)]
    assert [r["seed"] for r in records] == [7, 8]
    assert [r["jobs"]["input"] for r in records] == [15, 15] and all(r["jobs"]["history"] == 4 for r in records)
    rows = (out / "runs.csv").read_text().splitlines()
    assert len(rows) == 1 + 2 * 2  # both algorithms on both windows: asrpt had each window's own history
