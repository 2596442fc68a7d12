"""The CLI loads only what a command uses: the lazy registry (scheduling/registry.py)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from scheduling import registry
from tests.scenarios import RIGID_TRACE, TINY_CLUSTER

HEAVY = ("scipy", "sklearn", "pandas", "tqdm", "jsonschema")
# What only other commands use (generate, import, compare --seeds/--windows/--preset, reproduce):
# `simulate` starts without them (scheduling/cli.py declares a command's arguments only when it runs).
OTHER_COMMANDS_MODULES = (
    "scheduling.adapt",
    "scheduling.importers",
    "scheduling.presets",
    "scheduling.repeat",
    "scheduling.reproduce",
    "scheduling.stats",
)
PAPER_MODULES = (
    "scheduling.algorithms.oasis.online",
    "scheduling.algorithms.oasis.baselines",
    "scheduling.algorithms.oasis.opt",
    "scheduling.algorithms.edge.online",
    "scheduling.algorithms.edge.baselines",
    "scheduling.algorithms.zhou.online",
    "scheduling.algorithms.zhou.batch",
    "scheduling.algorithms.asrpt.scheduler",
)
OTHER_BASELINE_MODULES = (
    "scheduling.algorithms.antman",
    "scheduling.algorithms.drf",
    "scheduling.algorithms.tiresias",
    "scheduling.algorithms.asrpt",
    "scheduling.algorithms.edge",
    "scheduling.algorithms.oasis",
    "scheduling.algorithms.zhou",
)

# Runs the CLI in a fresh interpreter, then prints the names of every module it imported.
PROBE = """
import sys
from scheduling.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(" ".join(sorted(sys.modules)), file=sys.stderr)
"""  # (the names printed without json, which the run itself may not import)


def loaded_by(*argv: str) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, timeout=120, check=False
    )
    return set(proc.stderr.strip().splitlines()[-1].split(" "))


def top_level(modules: set[str]) -> set[str]:
    return {m.partition(".")[0] for m in modules}


@pytest.mark.parametrize("argv", [("--help",), ("algorithms",), ("algorithms", "--json")])
def test_help_and_the_algorithm_listing_load_no_scipy_sklearn_or_pandas(argv):
    assert not top_level(loaded_by(*argv)) & set(HEAVY)


def test_simulate_fifo_loads_no_paper_algorithm_and_no_heavy_library(tmp_path: Path):
    cluster, trace, out = tmp_path / "cluster.json", tmp_path / "trace.csv", tmp_path / "r.json"
    cluster.write_text(json.dumps(TINY_CLUSTER))
    trace.write_text(RIGID_TRACE)
    modules = loaded_by(
        "simulate", "--cluster", str(cluster), "--trace", str(trace), "--algorithm", "fifo", "--out", str(out)
    )
    assert json.loads(out.read_text())["algorithm"] == "fifo"  # the run did happen
    assert not top_level(modules) & set(HEAVY)
    assert not modules & set(PAPER_MODULES)
    assert not modules & set(OTHER_COMMANDS_MODULES)
    # fifo's entry is in baselines, the first module the registry probes; the other algorithms'
    # modules (their entries included) stay unloaded.
    assert not modules & set(OTHER_BASELINE_MODULES)
    # a built-in name is found without looking for plugins (importlib.metadata scans every package)
    assert not modules & {"scheduling.plugins", "importlib.metadata"}
    # the modules on this path take typing's names for the type checker only (TYPE_CHECKING = False):
    # importing typing took about 10 ms of a 300-job run's 130 (bench/RESULTS-tiresias.md)
    assert "typing" not in modules
    # nor argparse (with gettext and locale): a plain simulate command line is read by cli_quick.py
    assert not modules & {"argparse", "gettext", "locale"}
    # nor pathlib (with urllib.parse, ipaddress): the files are read and written with os
    assert not modules & {"pathlib", "urllib.parse", "ipaddress"}
    # nor json, csv.py and re (with enum): the cluster read and the result written through _json
    # (scheduling/cjson.py), the trace through _csv; nor weakref.py (provenance takes _weakref.ref)
    assert not modules & {"json", "csv", "re", "enum", "weakref"}


@pytest.mark.parametrize("algorithm", ["fifo", "srtf", "tiresias", "drf"])
def test_a_rigid_trace_on_a_small_cluster_runs_without_numpy(tmp_path: Path, algorithm: str):
    # numpy's import alone takes longer than a 300-job fifo run of the Tiresias authors' simulator:
    # rigid jobs need no random draw, and a cluster of at most capacity.SMALL_CLUSTER servers no arrays.
    cluster, trace, out = tmp_path / "cluster.json", tmp_path / "trace.csv", tmp_path / "r.json"
    cluster.write_text(json.dumps(TINY_CLUSTER))
    trace.write_text(RIGID_TRACE)
    argv = ("simulate", "--cluster", str(cluster), "--trace", str(trace), "--algorithm", algorithm, "--out", str(out))
    modules = loaded_by(*argv)
    assert json.loads(out.read_text())["metrics"]["completed"] == 4
    assert "numpy" not in top_level(modules)
    # the model's and the engine's classes are records (scheduling/records.py), not dataclasses:
    # dataclasses' import (inspect, ast, dis, ...) and its code generation are not paid either
    assert "dataclasses" not in modules
    assert "inspect" not in modules
    # nor subprocess (git runs by os.posix_spawnp), hashlib's OpenSSL (a small trace's digests use
    # CPython's own SHA-256) or shutil (the help formatter reads the terminal width itself)
    assert not modules & {"subprocess", "hashlib", "shutil"}


# What only running an algorithm needs: the engine, the registry, the result document and its provenance.
RUN_MODULES = ("scheduling.engine", "scheduling.registry", "scheduling.results", "scheduling.provenance")


@pytest.mark.parametrize("argv", [("--help",), ("simulate", "--help"), ("import", "--help")])
def test_help_loads_neither_the_engine_nor_the_registry(argv):
    modules = loaded_by(*argv)
    assert "argparse" in modules  # the probe did run the command line
    assert not modules & set(RUN_MODULES)


def test_validate_reads_the_inputs_without_the_engine_or_the_registry(tmp_path: Path):
    cluster, trace = tmp_path / "cluster.json", tmp_path / "trace.csv"
    cluster.write_text(json.dumps(TINY_CLUSTER))
    trace.write_text(RIGID_TRACE)
    modules = loaded_by("validate", "--cluster", str(cluster), "--trace", str(trace))
    assert "scheduling.loaders" in modules  # the inputs were read
    assert not modules & set(RUN_MODULES)


def test_the_commands_that_need_them_still_load_presets_and_import_formats(tmp_path: Path):
    assert "scheduling.presets" in loaded_by("generate", "--help")
    assert "scheduling.importers" in loaded_by("import", "--help")
    assert "scheduling.reproduce" in loaded_by("reproduce", "--list")


@pytest.mark.parametrize(
    "command", ["algorithms", "validate", "generate", "import", "simulate", "compare", "reproduce", "check"]
)
def test_declaring_only_the_running_command_keeps_its_usage(command: str):
    """A command's parser is the same whether it is declared alone or with all the others."""
    from scheduling.cli import _parser

    def usage(parser: argparse.ArgumentParser) -> str:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        return sub.choices[command].format_help()

    assert usage(_parser(command)) == usage(_parser())


def test_the_help_is_laid_out_as_argparse_lays_it_out(monkeypatch: pytest.MonkeyPatch):
    """The CLI's own formatter finds the width as shutil.get_terminal_size does (COLUMNS, else the
    terminal's, else 80): the help is the same as with argparse's formatter, at every width."""
    from scheduling import cli

    def both() -> tuple[str, str]:
        ours = cli._parser("simulate").format_help() + _command_help(cli._parser("simulate"), "simulate")
        with monkeypatch.context() as m:
            m.setattr(cli, "_help_formatter", lambda: argparse.HelpFormatter)
            theirs = cli._parser("simulate").format_help() + _command_help(cli._parser("simulate"), "simulate")
        return ours, theirs

    lines = {}
    for columns in ("50", "100", "x", "-3"):
        monkeypatch.setenv("COLUMNS", columns)
        ours, theirs = both()
        assert ours == theirs, columns
        lines[columns] = len(ours.splitlines())
    assert lines["50"] > lines["x"] > lines["100"]  # the width took effect (80 without a valid COLUMNS)


def _command_help(parser: argparse.ArgumentParser, command: str) -> str:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[command].format_help()


@pytest.mark.parametrize("name", sorted(registry.all_specs()))
def test_every_registry_entry_names_a_factory_that_imports(name):
    assert callable(registry.get(name).make)


def test_a_lazily_named_factory_is_imported_when_the_algorithm_is_built():
    spec = registry.get("oasis")
    assert spec.factory == "scheduling.algorithms.oasis.online:make_oasis"
    from scheduling.algorithms.oasis.online import make_oasis

    assert spec.make is make_oasis


def test_the_process_entry_point_freezes_what_was_imported_before_running_and_what_the_command_made(monkeypatch):
    """`python -m scheduling` moves the start-up objects out of the collector's generations, and
    before exit also what the command imported and built (the shutdown's collections skip them)."""
    import gc

    from scheduling import cli

    seen = []
    made: list[list[int]] = []

    def command() -> int:
        seen.append(gc.get_freeze_count())
        made.extend([i] for i in range(1_000))  # tracked objects the command leaves behind
        return 0

    monkeypatch.setattr(cli, "main", command)
    try:
        with pytest.raises(SystemExit) as exit_:
            cli.entry()
        collected = {id(o) for o in gc.get_objects()}  # every generation but the frozen objects
    finally:
        gc.unfreeze()
    assert exit_.value.code == 0
    assert seen and seen[0] > 0
    assert made and not any(id(o) in collected for o in made)


def test_the_listing_order_does_not_depend_on_the_algorithm_asked_for_first():
    # The registry imports the algorithm modules in a declared order, only as far as a name needs;
    # asking for any algorithm first must leave the listing (CLI, forms, docs) in the same order.
    probe = "import json, sys; from scheduling import registry; {get}print(json.dumps(list(registry.all_specs())))"

    def listing(first: str | None) -> list[str]:
        code = probe.format(get=f"registry.get({first!r}); " if first else "")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
        return json.loads(out.stdout)

    full = listing(None)
    assert full[:4] == ["fifo", "srtf", "tiresias", "drf"]
    for name in ("fifo", "antman", "asrpt", "tiresias-l", "oasis", "zhou", "jain-greedy"):
        assert listing(name) == full, name
    # A paper module imported directly (as a test file or a factory does) registers its entries
    # before the registry loads the others: the listing keeps the modules' order all the same.
    for module in ("scheduling.algorithms.asrpt.scheduler", "scheduling.algorithms.zhou.online"):
        code = f"import json; import {module}; from scheduling import registry; "
        code += "print(json.dumps(list(registry.all_specs())))"
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
        assert json.loads(out.stdout) == full, module


@pytest.mark.parametrize("name", sorted(registry.all_specs(plugins=False)))
def test_every_entry_belongs_to_a_declared_algorithm_module(name):
    # The listing orders entries by the module of their factory (registry.all_specs).
    from scheduling.algorithms import MODULES

    assert registry._home(registry.get(name)) in MODULES


def test_a_reader_gone_from_standard_output_ends_the_command_without_a_traceback():
    # The pipe's read end is closed before the command writes: every write fails (EPIPE), as when
    # `head` has read what it wanted and exited.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "scheduling", "algorithms"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        os.close(write_end)
    assert proc.returncode == 141, proc.stderr
    assert proc.stderr == ""


def test_the_listing_imports_importlib_metadata_only_when_a_package_declares_a_plugin():
    # importlib.metadata takes 25-100 ms to import and scan: scheduling/plugins.py first looks at the
    # entry_points.txt files on sys.path, and no installed package declares mlsched.algorithms here
    # (tests/test_plugins_web.py installs one and sees it).
    modules = loaded_by("algorithms")
    assert "scheduling.plugins" in modules  # the plugins were looked for
    assert "importlib.metadata" not in modules
