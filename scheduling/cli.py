"""Command line: ``python -m scheduling COMMAND`` (DESIGN section 4).

Exit codes: 0 success; 1 an invalid schedule (``check``) or an internal error; 2 bad input or an
instance the algorithm does not support, with a message naming the file, line/field and problem;
141 the reader of standard output went away (``... | head``), without a traceback.

``simulate`` and ``compare`` show a progress bar with the estimated time left on stderr while each
algorithm simulates, only when stderr is a terminal (scheduling.progress measures it; the bar is
cleared when the run ends, so the output is the same as without a terminal).

Each command imports what it uses when it runs: ``--help`` and the commands that only read or write
inputs (``validate``, ``generate``, ``import``) start without the engine, the registry or the
result document (``tests/test_cli_startup.py``).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from scheduling import collector
from scheduling.bounds import MAX_RESTART_SECONDS, MAX_SLOTS
from scheduling.errors import InputError, ScheduleError, UnsupportedInstance

if TYPE_CHECKING:
    from scheduling import repeat
    from scheduling.model import Instance

BAR_FORMAT = "{desc}: {percentage:3.0f}%|{bar}| {elapsed} elapsed, {remaining} left"

SUMMARY_METRICS = (
    "completed",
    "avg_jct",
    "avg_wait",  # first start - arrival: what Zhou et al.'s doubling rounds cost (docs/results-zhou.md)
    "total_weighted_completion",
    "completed_weight",  # Zhou et al.'s Fig. 8 figure (compare zhou-maxweight with jain-greedy)
    "total_utility",
    "makespan",
    "preemptions",
)
CENSORED_SUMMARY = ("avg_jct_censored", "total_jct_censored", "total_weighted_completion_censored")
"""summary.csv's censored columns: an unfinished job counted at the end of its run (docs/formats.md)."""


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


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's help layout, with the width ``shutil.get_terminal_size`` gives (``COLUMNS``, else
    the terminal's, else 80) found without importing shutil: argparse makes a formatter for every
    argument declared, and shutil (with bz2, lzma, fnmatch) took about 2 ms of every run."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None):
        super().__init__(prog, indent_increment, max_help_position, _columns() - 2 if width is None else width)


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
    p = argparse.ArgumentParser(
        prog="python -m scheduling", description="ML-cluster scheduling lab", formatter_class=_HelpFormatter
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (summary, description, declare) in _COMMANDS.items():
        command = sub.add_parser(name, help=summary, description=description, formatter_class=_HelpFormatter)
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
    p.add_argument("--out", required=True, type=Path)
    p.set_defaults(handler=cmd_generate)


def _declare_import(p: argparse.ArgumentParser) -> None:
    from scheduling import importers

    p.add_argument("--format", required=True, choices=sorted(importers.FORMATS))
    p.add_argument("--input", required=True, type=Path)
    p.add_argument("--out", required=True, type=Path, help="trace .csv/.json, or cluster .json for node-list")
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
    p.add_argument("--out", required=True, type=Path)
    p.set_defaults(handler=cmd_simulate)


def _declare_compare(p: argparse.ArgumentParser) -> None:
    from scheduling import presets

    p.add_argument("--cluster", type=Path, help="cluster spec (or --preset)")
    p.add_argument("--trace", type=Path, help="job trace (or --preset)")
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
    p.add_argument("--out", required=True, type=Path)
    p.set_defaults(handler=cmd_compare)


def _declare_reproduce(p: argparse.ArgumentParser) -> None:
    from scheduling import reproduce

    p.add_argument("figure", nargs="?", choices=sorted(reproduce.FIGURES), metavar="FIGURE")
    p.add_argument("--list", action="store_true", help="list the reproducible figures")
    p.add_argument("--seeds", default=None, help="number of seeds N (0..N-1, default per figure) or a list like 0-9")
    p.add_argument("--out", type=Path, default=None)
    p.set_defaults(handler=cmd_reproduce)


def _declare_adapt(p: argparse.ArgumentParser) -> None:
    from scheduling import adapt

    adapt.declare(p)


def _declare_check(p: argparse.ArgumentParser) -> None:
    _instance_args(p)
    p.add_argument("--result", required=True, type=Path)
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


def _restart_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--restart-seconds",
        type=_seconds,
        default=None,
        help="time a job loses at each restart on another allocation (default: the cluster's restart_seconds)",
    )


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 <= value <= MAX_RESTART_SECONDS:
        raise argparse.ArgumentTypeError(f"{text!r} must be between 0 and {MAX_RESTART_SECONDS:g} seconds")
    return value


def _instance_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cluster", required=True, type=Path)
    p.add_argument("--trace", required=True, type=Path)
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
        type=Path,
        default=None,
        help="a separate trace of past jobs that estimators may calibrate on (never the evaluated trace)",
    )


def _pairs(items: Sequence[str], what: str) -> dict[str, str]:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InputError(f"{item!r} is not KEY=VALUE", field=what)
        out[key.strip()] = value.strip()
    return out


def cmd_algorithms(args: argparse.Namespace) -> int:
    from scheduling import registry

    specs = registry.all_specs()
    if args.json:
        print(json.dumps({name: spec.describe() for name, spec in specs.items()}, indent=2))
        return 0
    for name, spec in specs.items():
        print(f"{name:14} {spec.summary}")
        if name in registry.PLUGIN_OF:
            print(f"{'':14}   (plugin {registry.PLUGIN_OF[name]})")
        for p in spec.params:
            rng = (
                ""
                if p.min is None and p.max is None
                else f" [{p.min:g}..{p.max:g}]"
                if p.min is not None and p.max is not None
                else ""
            )
            print(f"{'':14}   {p.name}={p.default!r} ({p.type.__name__}{rng}) {p.help}")
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    from scheduling import api

    instance = api.load_instance(args.cluster, args.trace, convert_slots=args.convert_slots)
    print(f"OK: {len(instance.cluster.servers)} servers, {len(instance.jobs)} jobs")
    return 0


def _out_folder(path: Path) -> None:
    if path.exists() and not path.is_dir():
        raise InputError("exists and is not a folder", file=str(path), field="--out")


def _out_file(path: Path) -> None:
    if path.is_dir():
        raise InputError("is a folder: give the name of the file to write", file=str(path), field="--out")


@contextmanager
def _writing(path: Path) -> Iterator[None]:
    """An OSError while writing ``path`` (no permission, a file in the way) is bad input naming it."""
    try:
        yield
    except OSError as exc:
        raise InputError(f"cannot write ({exc.strerror})", file=str(exc.filename or path), field="--out") from None


def cmd_generate(args: argparse.Namespace) -> int:
    from scheduling import presets

    _out_folder(args.out)
    with _writing(args.out):
        written = presets.generate(
            args.preset,
            jobs=args.jobs,
            seed=args.seed,
            size=args.size,
            out=args.out,
            load=args.load,
            history=args.history,
        )
    for path in written:
        print(path)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from scheduling import importers

    summary = importers.run(
        args.format,
        args.input,
        args.out,
        seed=args.seed,
        mapping=_pairs(args.map, "--map"),
        slot_seconds=args.slot_seconds,
        start=args.start,
        end=args.end,
        limit=args.limit,
    )
    print(summary)
    return 0


def cmd_simulate(args: argparse.Namespace) -> int:
    from scheduling import api, provenance, results

    _out_file(args.out)
    provenance.prefetch()  # the code version (git) is looked up while the run goes on
    instance = api.load_instance(args.cluster, args.trace, args.history, convert_slots=args.convert_slots)
    params = _pairs(args.param, "--param")
    with _progress_bar(args.algorithm) as progress:
        doc = api.run(
            instance,
            args.algorithm,
            params,
            args.seed,
            args.horizon,
            progress=progress,
            restart_seconds=args.restart_seconds,
            compact=len(instance.jobs) >= results.COMPACT_FROM,  # a large run's rows stay compact
        )
    with _writing(args.out):
        results.write(doc, args.out)
    _print_metrics(args.algorithm, doc["metrics"])
    _print_notes(args.algorithm, doc)
    return 0


def _repeating(args: argparse.Namespace) -> bool:
    return args.preset is not None or args.seeds is not None or args.windows is not None


def _compare_instance(args: argparse.Namespace) -> Instance | None:
    """The one instance of --cluster/--trace (None with --preset), after checking the flags agree."""
    if args.preset is not None:
        given_flags = (
            ("--cluster", args.cluster),
            ("--trace", args.trace),
            ("--windows", args.windows),
            ("--history", args.history),
            ("--adapt", args.adapt),
        )
        for flag, given in given_flags:
            if given is not None:
                raise InputError(
                    "--preset generates the instance: leave out --cluster, --trace, --windows, --history, --adapt",
                    field=flag,
                )
        return None
    from scheduling import api

    for flag, given in (("--jobs", args.jobs), ("--size", args.size)):
        if given is not None:
            raise InputError("only with --preset", field=flag)
    missing = [flag for flag, given in (("--cluster", args.cluster), ("--trace", args.trace)) if given is None]
    if missing:
        raise InputError(f"missing: give --cluster and --trace, or --preset (missing {', '.join(missing)})")
    if not _repeating(args) and args.reference is not None:
        raise InputError("a reference needs a repetition: add --seeds, --windows or --preset", field="--reference")
    if args.adapt is not None:
        from scheduling import adapt

        return adapt.compare_instance(args)
    if args.history_fraction is not None:
        raise InputError("only with --adapt", field="--history-fraction")
    return api.load_instance(args.cluster, args.trace, args.history, convert_slots=args.convert_slots)


def cmd_compare(args: argparse.Namespace) -> int:
    from scheduling import api, registry, results

    instance = _compare_instance(args)
    names = [n.strip() for n in args.algorithms.split(",") if n.strip()]
    if not names:
        raise InputError(f"{args.algorithms!r} names no algorithm", field="--algorithms")
    for name in names:
        registry.get(name)  # fail on an unknown name before running anything
    params: dict[str, dict[str, str]] = {n: {} for n in names}
    for key, value in _pairs(args.param, "--param").items():
        algo, dot, name = key.partition(".")
        if not dot or algo not in params:
            raise InputError(f"{key!r} must be ALGORITHM.KEY with an algorithm from --algorithms", field="--param")
        params[algo][name] = value
    for name in names:
        registry.get(name).parse_params(params[name])  # every bad parameter before any run or file
    if _repeating(args):
        return _compare_repeated(args, instance, names, params)
    assert instance is not None
    _out_folder(args.out)
    with _writing(args.out):
        args.out.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    for name in names:
        try:
            with _progress_bar(name) as progress:
                doc = api.run(
                    instance,
                    name,
                    params[name],
                    args.seed,
                    args.horizon,
                    progress=progress,
                    restart_seconds=args.restart_seconds,
                )
        except UnsupportedInstance as exc:
            print(f"{name}: skipped: {exc}", file=sys.stderr)
            continue
        with _writing(args.out):
            results.write(doc, args.out / f"{name}.json")
        columns = (*SUMMARY_METRICS, "jobs", *CENSORED_SUMMARY)
        rows.append({"algorithm": name, **{k: doc["metrics"].get(k) for k in columns}})
        _print_metrics(name, doc["metrics"])
        _print_notes(name, doc)
    with _writing(args.out), (args.out / "summary.csv").open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=["algorithm", *SUMMARY_METRICS, "jobs", *CENSORED_SUMMARY])
        writer.writeheader()
        writer.writerows(rows)
    if note := counts_note(rows):
        print(note)
    return 0


def counts_note(rows: Sequence[Mapping[str, Any]]) -> str:
    """What ``compare`` says when its runs completed different numbers of jobs: their metrics over
    completed jobs only are not comparable (DESIGN section 9), the censored ones are."""
    from scheduling import stats

    if len({r["completed"] for r in rows}) < 2:
        return ""
    counts = ", ".join(f"{r['algorithm']} completed {r['completed']} of {r['jobs']}" for r in rows)
    names = ", ".join(sorted(stats.COMPLETED_ONLY))
    return (
        f"not comparable: {counts}; {names} count completed jobs only. "
        "The *_censored metrics count an unfinished job as completing at the end of its run (docs/formats.md)."
    )


@contextmanager
def _progress_bar(label: str) -> Iterator[Callable[[float], None] | None]:
    """A progress callback drawing a bar on stderr if stderr is a terminal, else None (no bar)."""
    if not sys.stderr.isatty():
        yield None
        return
    from tqdm import tqdm  # imported only for a terminal

    with tqdm(total=1.0, desc=label, file=sys.stderr, leave=False, bar_format=BAR_FORMAT, mininterval=0.2) as bar:

        def update(fraction: float) -> None:
            bar.update(fraction - bar.n)  # drawn at most every 0.2 s

        yield update
        bar.refresh()  # the final state, before the bar is cleared


def _compare_repeated(
    args: argparse.Namespace, instance: Instance | None, names: list[str], params: dict[str, dict[str, str]]
) -> int:
    """``compare`` over seeds or windows (docs/statistics.md)."""
    from scheduling import registry, repeat, results

    if len(set(names)) != len(names):
        raise InputError(f"{args.algorithms!r} names an algorithm twice", field="--algorithms")
    reference = args.reference or names[0]
    if reference not in names:
        raise InputError(f"{reference!r} is not among --algorithms {','.join(names)}", field="--reference")
    seeds = repeat.parse_seeds(args.seeds) if args.seeds is not None else [args.seed]
    if args.preset is not None:
        # The preset's own history (the preset from another seed) for algorithms that learn from one.
        history = any(registry.learns_from_history(name) for name in names)
        size = 1.0 if args.size is None else args.size
        cases = repeat.preset_cases(args.preset, args.jobs, seeds, size, history)
    else:
        assert instance is not None
        if args.windows is not None and args.adapt is not None:
            from scheduling import adapt

            cases = adapt.window_cases(args, instance, seeds)  # each window adapted on its own
        elif args.windows is not None:
            cases = repeat.window_cases(instance, repeat.parse_windows(args.windows), seeds)
        else:
            cases = repeat.instance_cases(instance, seeds)
    _out_folder(args.out)
    with _writing(args.out):
        (args.out / "results").mkdir(parents=True, exist_ok=True)

    def keep(row: repeat.Row, doc: dict[str, Any]) -> None:
        name = f"{row.label}_{row.case.key.replace('=', '').replace(' ', '_')}.json"
        with _writing(args.out):
            results.write(doc, args.out / "results" / name)
        print(f"{row.case.key} {row.label}: " + _metric_text(row.metrics), file=sys.stderr, flush=True)
        _print_notes(f"{row.case.key} {row.label}", doc)

    rows = repeat.run(
        cases, [(n, n, params[n]) for n in names], args.horizon, progress=keep, restart_seconds=args.restart_seconds
    )
    if not any(r.label == reference for r in rows):
        raise UnsupportedInstance(f"the reference {reference} ran on no repetition")
    reports = repeat.reports(rows, reference)
    with _writing(args.out):
        repeat.write_runs(rows, args.out / "runs.csv")
        repeat.write_summary(reports, args.out / "stats.csv")
        repeat.write_cdfs(repeat.jct_cdfs(rows), args.out / "jct_cdf.csv")
    print(repeat.format_reports(reports))
    return 0


def cmd_reproduce(args: argparse.Namespace) -> int:
    from scheduling import reproduce

    if args.list:
        for f in reproduce.listing():
            cost = f"{f['default_seeds']} seeds, ~{f['minutes']:g} min"
            print(f"{f['name']:12} {f['paper']} {f['figure']}: {f['title']} ({cost})")
        return 0
    if args.figure is None:
        raise InputError("name a figure (reproduce --list shows them)", field="FIGURE")
    fig = reproduce.FIGURES[args.figure]
    seeds = reproduce.seeds_of(args.seeds, fig)
    out = args.out if args.out is not None else Path("runs") / "reproduce" / fig.name
    _out_folder(out)

    def show(point: str, row: repeat.Row, _doc: dict[str, Any]) -> None:
        print(
            f"{point} {row.case.key} {row.label}: {fig.metric}={row.metrics.get(fig.metric)}",
            file=sys.stderr,
            flush=True,
        )

    run = reproduce.run_figure(fig, seeds, progress=show)
    with _writing(out):
        written = reproduce.write(run, out)
    print(reproduce.markdown(run))
    for path in written:
        print(path)
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from scheduling import api, provenance, results
    from scheduling.validator import PROBLEMS_SHOWN, MalformedResult, check_document

    instance = api.load_instance(args.cluster, args.trace, convert_slots=args.convert_slots)
    label = str(args.result)
    try:
        doc = results.read(args.result)
    except OSError as exc:
        raise InputError(f"cannot read the result ({exc.strerror})", file=label) from None
    except (ValueError, RecursionError) as exc:  # not UTF-8, not JSON
        raise InputError(f"not a result document (invalid JSON or text: {exc})", file=label) from None
    problems: list[str] = []
    try:
        check_document(instance, doc, problems)
    except MalformedResult as exc:
        raise InputError(f"not a result document ({exc})", file=label) from None
    problems = problems[:PROBLEMS_SHOWN]
    for note in provenance.notes(doc, instance):
        print(f"note: {note}")
    for problem in problems:
        print(problem)
    print("OK: the schedule is valid" if not problems else f"INVALID: {len(problems)} problem(s)")
    return 0 if not problems else 1


def _metric_text(metrics: dict[str, Any]) -> str:
    parts = []
    for key in SUMMARY_METRICS:
        value = metrics[key]
        parts.append(f"{key}={value:.6g}" if isinstance(value, float) else f"{key}={value}")
    return " ".join(parts)


def _print_metrics(name: str, metrics: dict[str, Any]) -> None:
    print(f"{name}: " + _metric_text(metrics))


def _print_notes(name: str, doc: Mapping[str, Any]) -> None:
    """Notes on the run for the user (stderr): a fitted predictor without a history."""
    report = doc.get("prediction")
    if isinstance(report, Mapping):
        from scheduling.algorithms.asrpt.predictors import no_history_note

        if note := no_history_note(report):
            print(f"{name}: note: {note}", file=sys.stderr)
