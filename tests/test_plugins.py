"""Plugins (scheduling/plugins.py, docs/plugins.md): the docs' example, as written there, named in
MLSCHED_PLUGINS from a folder outside the repository, is listed and runs valid schedules from the
command line; a plugin that fails or takes a name is reported and leaves the others loaded; a
built-in run never looks for plugins."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from scheduling import plugins, registry
from scheduling.cli import main
from tests.scenarios import RIGID_TRACE, TINY_CLUSTER

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "plugins.md"


def python_blocks() -> list[str]:
    """The ```python blocks of docs/plugins.md, in order."""
    return re.findall(r"^```python\n(.*?)^```$", DOCS.read_text(encoding="utf-8"), re.M | re.S)


def cli(*argv: str, folder: Path, plugins: str) -> subprocess.CompletedProcess[str]:
    """``python -m scheduling ARGV`` from the repository, with ``folder`` on the Python path."""
    env = {**os.environ, "PYTHONPATH": str(folder), "MLSCHED_PLUGINS": plugins}
    return subprocess.run(
        [sys.executable, "-m", "scheduling", *argv],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder outside the repository holding the docs' two examples and a tiny instance."""
    example, limited = python_blocks()[:2]
    (tmp_path / "largest_first.py").write_text(example, encoding="utf-8")
    (tmp_path / "largest_limited.py").write_text(limited, encoding="utf-8")
    (tmp_path / "cluster.json").write_text(json.dumps(TINY_CLUSTER), encoding="utf-8")
    (tmp_path / "trace.csv").write_text(RIGID_TRACE, encoding="utf-8")
    return tmp_path


def test_the_docs_example_is_one_file_of_at_most_30_lines():
    example = python_blocks()[0]
    assert len(example.splitlines()) <= 30
    assert 'name="largest-first"' in example


def test_the_docs_example_named_in_mlsched_plugins_is_listed_with_where_it_came_from(outside: Path):
    listing = cli("algorithms", folder=outside, plugins="largest_first")
    assert listing.returncode == 0, listing.stderr
    assert re.search(r"^largest-first +Largest job first", listing.stdout, re.M)
    assert "(plugin largest_first from MLSCHED_PLUGINS)" in listing.stdout
    described = json.loads(cli("algorithms", "--json", folder=outside, plugins="largest_first").stdout)
    assert described["largest-first"]["plugin"] == "largest_first from MLSCHED_PLUGINS"
    assert described["fifo"]["plugin"] is None
    assert listing.stderr == ""


def test_the_docs_example_runs_a_valid_simulate_and_compare(outside: Path):
    result = outside / "r.json"
    run = cli(
        "simulate",
        "--cluster",
        str(outside / "cluster.json"),
        "--trace",
        str(outside / "trace.csv"),
        "--algorithm",
        "largest-first",
        "--out",
        str(result),
        folder=outside,
        plugins="largest_first",
    )
    assert run.returncode == 0, run.stderr
    doc = json.loads(result.read_text())
    assert doc["algorithm"] == "largest-first" and doc["metrics"]["completed"] == 4
    check = cli(
        "check",
        "--cluster",
        str(outside / "cluster.json"),
        "--trace",
        str(outside / "trace.csv"),
        "--result",
        str(result),
        folder=outside,
        plugins="",
    )
    assert check.returncode == 0 and "valid" in check.stdout, check.stdout + check.stderr
    compared = cli(
        "compare",
        "--cluster",
        str(outside / "cluster.json"),
        "--trace",
        str(outside / "trace.csv"),
        "--algorithms",
        "fifo,largest-first",
        "--out",
        str(outside / "cmp"),
        folder=outside,
        plugins="largest_first",
    )
    assert compared.returncode == 0, compared.stderr
    assert (outside / "cmp" / "largest-first.json").exists()


def test_the_docs_example_with_a_parameter_rejects_the_jobs_above_it(outside: Path):
    result = outside / "r.json"
    run = cli(
        "simulate",
        "--cluster",
        str(outside / "cluster.json"),
        "--trace",
        str(outside / "trace.csv"),
        "--algorithm",
        "largest-first-limited",
        "--param",
        "max_workers=1",
        "--out",
        str(result),
        folder=outside,
        plugins="largest_limited",
    )
    assert run.returncode == 0, run.stderr
    jobs = {j["job_id"]: j for j in json.loads(result.read_text())["jobs"]}
    # rigid jobs run as one-GPU workers: max_workers=1 admits only r4 (1 GPU)
    assert {job_id for job_id, j in jobs.items() if j["admitted"]} == {"r4"}
    assert jobs["r4"]["completion"] is not None and jobs["r1"]["start"] is None


def test_a_broken_plugin_and_one_that_takes_a_name_are_reported_and_the_others_still_load(outside: Path):
    (outside / "takes_fifo.py").write_text(
        "from scheduling.policy import list_algorithm, register\n"
        "register(list_algorithm('mine-too', 'Mine.', lambda job, config: 0))\n"
        "register(list_algorithm('fifo', 'Not fifo.', lambda job, config: 0))\n",
        encoding="utf-8",
    )
    (outside / "broken.py").write_text("import not_a_module_anywhere\n", encoding="utf-8")
    listing = cli("algorithms", folder=outside, plugins="broken, takes_fifo,largest_first,")
    assert listing.returncode == 0
    assert re.search(r"^largest-first ", listing.stdout, re.M)
    assert re.search(r"^fifo +First in, first out", listing.stdout, re.M)
    assert "mine-too" not in listing.stdout  # a plugin loads whole or not at all
    warnings = listing.stderr.splitlines()
    assert warnings == [
        "warning: plugin broken from MLSCHED_PLUGINS is not loaded: ModuleNotFoundError: "
        "No module named 'not_a_module_anywhere'",
        "warning: plugin takes_fifo from MLSCHED_PLUGINS is not loaded: ValueError: "
        "algorithm 'fifo' is already registered (built-in)",
    ]


def test_an_unknown_algorithm_names_the_known_ones_and_where_plugins_come_from(tmp_path: Path, capsys):
    (tmp_path / "c.json").write_text(json.dumps(TINY_CLUSTER))
    (tmp_path / "t.csv").write_text(RIGID_TRACE)
    argv = ["simulate", "--cluster", str(tmp_path / "c.json"), "--trace", str(tmp_path / "t.csv")]
    assert main([*argv, "--algorithm", "largest-frist", "--out", str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err
    assert "unknown algorithm 'largest-frist' (known: " in err and "fifo" in err
    assert "MLSCHED_PLUGINS" in err and "mlsched.algorithms" in err


def test_a_built_in_run_never_looks_for_plugins(outside: Path):
    # The broken plugin would be reported if the plugins were loaded at all.
    (outside / "broken.py").write_text("raise RuntimeError('loaded')\n", encoding="utf-8")
    probe = (
        "import sys; from scheduling.cli import main; code = main(sys.argv[1:]); "
        "print(sorted(m for m in sys.modules if m in ('importlib.metadata', 'scheduling.plugins')), file=sys.stderr)"
    )
    argv = ["--cluster", str(outside / "cluster.json"), "--trace", str(outside / "trace.csv")]
    proc = subprocess.run(
        [sys.executable, "-c", probe, "simulate", *argv, "--algorithm", "fifo", "--out", str(outside / "r.json")],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(outside), "MLSCHED_PLUGINS": "broken"},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert proc.stderr.strip().splitlines()[-1] == "[]"
    assert "loaded" not in proc.stderr


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """A folder on sys.path for plugin modules; the plugins are looked for afresh, and forgotten after."""
    monkeypatch.syspath_prepend(str(tmp_path))
    plugins.reset()
    yield tmp_path
    plugins.reset()


def test_a_plugin_may_name_an_entry_or_a_list_of_entries_instead_of_registering_them(fresh, monkeypatch):
    (fresh / "lab_entries.py").write_text(
        "from scheduling.policy import list_algorithm\n"
        "ONE = list_algorithm('lab-one', 'One.', lambda job, config: 0)\n"
        "BOTH = [list_algorithm(f'lab-{n}', 'N.', lambda job, config: 0) for n in ('two', 'three')]\n",
        encoding="utf-8",
    )
    monkeypatch.setenv(plugins.ENV, "lab_entries:ONE,lab_entries:BOTH")
    names = list(registry.all_specs())
    assert names[-3:] == ["lab-one", "lab-two", "lab-three"]  # after the built-in ones, in load order
    assert registry.PLUGIN_OF["lab-two"] == "lab_entries:BOTH from MLSCHED_PLUGINS"
    assert "lab-one" not in registry.all_specs(plugins=False)
    assert plugins.problems() == ()


def test_a_plugin_that_names_something_else_or_registers_nothing_is_reported(fresh, monkeypatch):
    (fresh / "lab_helper.py").write_text("def helper(job, config):\n    return 0\n", encoding="utf-8")
    (fresh / "lab_idle.py").write_text("from scheduling.policy import list_algorithm\n", encoding="utf-8")
    monkeypatch.setenv(plugins.ENV, "lab_helper:helper, lab_idle")
    registry.all_specs()
    assert plugins.problems() == (
        "plugin lab_helper:helper from MLSCHED_PLUGINS is not loaded: TypeError: it names a function: "
        "name a module, an AlgorithmSpec or a list of them",
        "plugin lab_idle from MLSCHED_PLUGINS is not loaded: ValueError: it registers no algorithm "
        "(a module calls scheduling.registry.register)",
    )
