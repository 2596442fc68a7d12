"""What each ``python -m scheduling`` command does (the handlers ``scheduling.cli`` dispatches to).

scheduling/cli.py declares the command line (commands, arguments, their types); each handler here
takes the parsed arguments, imports what it uses when it runs (``tests/test_cli_startup.py``) and
returns the exit code. Bad input raises ``InputError`` (exit code 2, scheduling/cli.py).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager

from scheduling.errors import InputError, UnsupportedInstance

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)

if TYPE_CHECKING:
    import argparse
    from pathlib import Path
    from typing import Any

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
        import json  # (not on simulate's path: json imports re, scheduling/cjson.py)

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


def _out_folder(path: Path | str) -> None:
    if os.path.exists(path) and not os.path.isdir(path):
        raise InputError("exists and is not a folder", file=str(path), field="--out")


def _out_file(path: Path | str) -> None:
    if os.path.isdir(path):
        raise InputError("is a folder: give the name of the file to write", file=str(path), field="--out")


@contextmanager
def _writing(path: Path | str) -> Iterator[None]:
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
    import csv  # (not on simulate's path: csv imports re)

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
        from scheduling import regimes

        if (note := regimes.outside(args.preset, args.jobs, size)) is not None:
            print(f"note: {note}", file=sys.stderr)  # scheduling/regimes.py
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
    from pathlib import Path

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
