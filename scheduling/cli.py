"""Command line: ``python -m scheduling COMMAND`` (DESIGN section 4).

Exit codes: 0 success; 1 an invalid schedule (``check``) or an internal error; 2 bad input or an
instance the algorithm does not support, with a message naming the file, line/field and problem;
141 the reader of standard output went away (``... | head``), without a traceback.

``simulate`` and ``compare`` show a progress bar with the estimated time left on stderr while each
algorithm simulates, only when stderr is a terminal (scheduling.progress measures it; the bar is
cleared when the run ends, so the output is the same as without a terminal).

This module declares the commands and their arguments; what each command does is in
scheduling/cli_commands.py. Each command imports what it uses when it runs: ``--help`` and the
commands that only read or write inputs (``validate``, ``generate``, ``import``) start without the
engine, the registry or the result document (``tests/test_cli_startup.py``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence

from scheduling import collector
from scheduling.bounds import MAX_RESTART_SECONDS, MAX_SLOTS
from scheduling.cli_commands import (
    cmd_algorithms,
    cmd_check,
    cmd_compare,
    cmd_generate,
    cmd_import,
    cmd_reproduce,
    cmd_simulate,
    cmd_validate,
)
from scheduling.cli_quick import quick_simulate
from scheduling.errors import InputError, ScheduleError, UnsupportedInstance

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    import argparse
    from pathlib import Path
    from typing import Any, NoReturn


BROKEN_PIPE = 141  # 128 + SIGPIPE: the exit code of a tool whose output reader went away


def entry() -> NoReturn:
    """``python -m scheduling``: run the command line and exit with its code.

    The garbage collector is set for one command first (``collector.for_one_command``): what is
    imported so far is frozen (about 10% of a short run's CPU, bench/RESULTS-tiresias.md) and
    collections are rarer (about a fifth of a long run's time, bench/RESULTS.md); what the
    command imported and built is frozen before the interpreter shuts down
    (``collector.before_exit``).
    """
    collector.for_one_command()
    try:
        code = main()
        sys.stdout.flush()  # a reader gone shows here, not in the interpreter's last flush
    except BrokenPipeError:
        # The reader of the output went away (``... | head``): stop without a traceback, with the
        # code of a process ended by SIGPIPE, as other command-line tools; what is still buffered
        # goes to /dev/null so that the interpreter's last flush has nothing to complain about.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = BROKEN_PIPE
    collector.before_exit()
    sys.exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = argv[0] if argv and not argv[0].startswith("-") else ""
    args: Any = quick_simulate(argv) if command == "simulate" else None  # (scheduling/cli_quick.py)
    if args is None:
        args = _parser(command).parse_args(argv)
    try:
        code: int = args.handler(args)
        return code
    except (InputError, UnsupportedInstance) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except ScheduleError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


_FORMATTER: list[type[argparse.HelpFormatter]] = []


def _help_formatter() -> type[argparse.HelpFormatter]:
    """argparse's help layout, with the width ``shutil.get_terminal_size`` gives (``COLUMNS``, else
    the terminal's, else 80) found without importing shutil: argparse makes a formatter for every
    argument declared, and shutil (with bz2, lzma, fnmatch) took about 2 ms of every run. Made at
    its first use: argparse is imported only when a parser is built (not by a plain ``simulate``)."""
    if not _FORMATTER:
        import argparse

        class HelpFormatter(argparse.HelpFormatter):
            def __init__(
                self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None
            ):
                width = _columns() - 2 if width is None else width
                super().__init__(prog, indent_increment, max_help_position, width)

        _FORMATTER.append(HelpFormatter)
    return _FORMATTER[0]


def _columns() -> int:
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def _parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line parser. Every command is listed, but only the arguments of ``only`` (all
    commands' when None) are declared: declaring them can import what their choices list (presets,
    import formats, figures), which a run of another command does not need."""
    import argparse

    formatter = _help_formatter()
    p = argparse.ArgumentParser(
        prog="python -m scheduling", description="ML-cluster scheduling lab", formatter_class=formatter
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (summary, description, declare) in _COMMANDS.items():
        command = sub.add_parser(name, help=summary, description=description, formatter_class=formatter)
        if only is None or only == name:
            declare(command)
    return p


def _declare_algorithms(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=cmd_algorithms)


def _declare_validate(p: argparse.ArgumentParser) -> None:
    _instance_args(p)
    p.set_defaults(handler=cmd_validate)


def _declare_generate(p: argparse.ArgumentParser) -> None:
    from scheduling import presets

    p.add_argument("--preset", required=True, choices=sorted(presets.PRESETS))
    p.add_argument("--jobs", type=int, default=None, help="number of jobs (default: the paper's)")
    p.add_argument("--seed", type=_whole(0), default=0)
    p.add_argument("--size", type=float, default=1.0, help="scale the cluster (0 < size <= 1) for quick runs")
    p.add_argument(
        "--load", type=float, default=None, help="offered load (default: the preset's; docs/formats.md, Presets)"
    )
    p.add_argument(
        "--history",
        action="store_true",
        help="also write DIR/history.csv (or .json): the preset drawn from another seed, for simulate --history",
    )
    p.add_argument("--out", required=True, type=_path)
    p.set_defaults(handler=cmd_generate)


def _declare_import(p: argparse.ArgumentParser) -> None:
    from scheduling import importers

    p.add_argument("--format", required=True, choices=sorted(importers.FORMATS))
    p.add_argument("--input", required=True, type=_path)
    p.add_argument("--out", required=True, type=_path, help="trace .csv/.json, or cluster .json for node-list")
    p.add_argument("--seed", type=_whole(0), default=0)
    p.add_argument("--map", action="append", default=[], metavar="FIELD=COLUMN", help="column mapping, repeatable")
    p.add_argument("--slot-seconds", type=float, default=None, help="slot length (default: per format)")
    p.add_argument("--start", default=None, help="keep jobs submitted at/after this time (seconds or datetime)")
    p.add_argument("--end", default=None, help="keep jobs submitted before this time (seconds or datetime)")
    p.add_argument("--limit", type=int, default=None, help="keep at most this many jobs (earliest first)")
    p.set_defaults(handler=cmd_import)


def _declare_simulate(p: argparse.ArgumentParser) -> None:
    _instance_args(p)
    _history_arg(p)
    p.add_argument("--algorithm", required=True)
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--seed", type=_whole(0), default=0)
    p.add_argument(
        "--horizon", type=_whole(1, MAX_SLOTS), default=None, help="stop at this slot (default: the cluster's)"
    )
    _restart_arg(p)
    p.add_argument("--out", required=True, type=_path)
    p.set_defaults(handler=cmd_simulate)


def _declare_compare(p: argparse.ArgumentParser) -> None:
    from scheduling import presets

    p.add_argument("--cluster", type=_path, help="cluster spec (or --preset)")
    p.add_argument("--trace", type=_path, help="job trace (or --preset)")
    p.add_argument("--preset", choices=sorted(presets.PRESETS), help="generate the instance per seed instead")
    p.add_argument("--jobs", type=_whole(1), default=None, help="with --preset: number of jobs")
    p.add_argument("--size", type=float, default=None, help="with --preset: scale the cluster (0 < size <= 1)")
    _convert_arg(p)
    _history_arg(p)
    p.add_argument("--algorithms", required=True, help="comma-separated names")
    p.add_argument("--param", action="append", default=[], metavar="ALGO.KEY=VALUE")
    p.add_argument("--seed", type=_whole(0), default=0)
    p.add_argument(
        "--seeds",
        default=None,
        metavar="SEEDS",
        help="repeat over seeds, e.g. 0-9 or 0,3,5: trace seeds with --preset (also the algorithms' seed), "
        "else algorithm seeds",
    )
    p.add_argument(
        "--windows",
        default=None,
        metavar="K|START:END,...",
        help="repeat over K windows of --trace cut evenly by job count, or the given arrival-slot ranges",
    )
    p.add_argument(
        "--adapt",
        default=None,
        metavar="MODEL",
        help="run every algorithm on the trace adapted to this paper's model (as `adapt`; DIR/adapted/)",
    )
    p.add_argument("--history-fraction", type=float, default=None, help="with --adapt: as `adapt --history-fraction`")
    p.add_argument("--reference", default=None, help="algorithm the others are paired with (default: the first)")
    p.add_argument("--horizon", type=_whole(1, MAX_SLOTS), default=None)
    _restart_arg(p)
    p.add_argument("--out", required=True, type=_path)
    p.set_defaults(handler=cmd_compare)


def _declare_reproduce(p: argparse.ArgumentParser) -> None:
    from scheduling import reproduce

    p.add_argument("figure", nargs="?", choices=sorted(reproduce.FIGURES), metavar="FIGURE")
    p.add_argument("--list", action="store_true", help="list the reproducible figures")
    p.add_argument("--seeds", default=None, help="number of seeds N (0..N-1, default per figure) or a list like 0-9")
    p.add_argument("--out", type=_path, default=None)
    p.set_defaults(handler=cmd_reproduce)


def _declare_adapt(p: argparse.ArgumentParser) -> None:
    from scheduling import adapt

    adapt.declare(p)


def _declare_check(p: argparse.ArgumentParser) -> None:
    _instance_args(p)
    p.add_argument("--result", required=True, type=_path)
    p.set_defaults(handler=cmd_check)


# name -> (help, description, declaration of its arguments)
_COMMANDS: dict[str, tuple[str, str | None, Callable[[argparse.ArgumentParser], None]]] = {
    "algorithms": ("list the registered algorithms and their parameters", None, _declare_algorithms),
    "validate": ("check a cluster spec and a trace", None, _declare_validate),
    "generate": ("write a preset's cluster.json and trace to a folder", None, _declare_generate),
    "import": ("convert a raw production trace into a job trace or cluster spec", None, _declare_import),
    "simulate": ("run one algorithm and write its result JSON", None, _declare_simulate),
    "compare": (
        "run several algorithms on one instance, or repeated over seeds or trace windows",
        "Without --seeds, --windows and --preset: one run per algorithm on --cluster/--trace "
        "(DIR/<algorithm>.json, DIR/summary.csv). With them: a repetition experiment (docs/statistics.md): "
        "DIR/runs.csv (one row per repetition and algorithm), DIR/stats.csv (median, mean and 95% CIs, "
        "paired differences against --reference with win/tie/loss counts), DIR/jct_cdf.csv, DIR/results/.",
        _declare_compare,
    ),
    "reproduce": (
        "rerun a paper figure over seeds, with 95%% CIs beside the paper's numbers",
        "Writes runs.csv, summary.csv, table.md, figure.html and provenance.json to --out "
        "(default runs/reproduce/FIGURE); docs/statistics.md.",
        _declare_reproduce,
    ),
    "check": ("validate a result file against its cluster and trace", None, _declare_check),
    "adapt": (
        "turn a rigid GPU cluster and trace into one paper's model (zhou-ps, zhou-allreduce, oasis, edge-cloud, asrpt)",
        "Writes DIR/cluster.json, DIR/trace.json, DIR/history.json (with --history-fraction) and DIR/adapt.json "
        "(every assumption, refused and changed job); docs/formats.md, Adapting.",
        _declare_adapt,
    ),
}


def _whole(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number from ``minimum`` to ``maximum`` (argparse exits 2 otherwise)."""

    def parse(text: str) -> int:
        import argparse  # (loaded already when argparse calls this; cli_quick's callers catch the error)

        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{value} must be >= {minimum}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"{value} must be <= {maximum:,}")
        return value

    return parse


def _path(text: str) -> Path:
    """An argparse type: ``Path(text)`` (pathlib imported only when a parser is built)."""
    from pathlib import Path

    return Path(text)


def _restart_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--restart-seconds",
        type=_seconds,
        default=None,
        help="time a job loses at each restart on another allocation (default: the cluster's restart_seconds)",
    )


def _seconds(text: str) -> float:
    import argparse

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 <= value <= MAX_RESTART_SECONDS:
        raise argparse.ArgumentTypeError(f"{text!r} must be between 0 and {MAX_RESTART_SECONDS:g} seconds")
    return value


def _instance_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cluster", required=True, type=_path)
    p.add_argument("--trace", required=True, type=_path)
    _convert_arg(p)


def _convert_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--convert-slots",
        action="store_true",
        help="convert a trace written in other slots than the cluster's (its slot_seconds) instead of refusing it",
    )


def _history_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--history",
        type=_path,
        default=None,
        help="a separate trace of past jobs that estimators may calibrate on (never the evaluated trace)",
    )
