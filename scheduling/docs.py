"""Generate docs/algorithms.md from the registry: ``python -m scheduling.docs > docs/algorithms.md``,
and docs/formats.md's field tables from the input schema (scheduling/schema.py):
``python -m scheduling.docs --formats docs/formats.md`` rewrites the text between each pair of
``<!-- schema:NAME -->`` / ``<!-- /schema:NAME -->`` markers. ``make docs`` runs both.

tests/test_docs.py checks that the committed files equal this output, so the docs cannot drift
from the code.
"""

from __future__ import annotations

import argparse
import inspect
import math
import re
from pathlib import Path

from scheduling import registry, schema, speed
from scheduling.schema import Field

INTRO = """# Algorithms

Generated from the algorithm registry (`scheduling/registry.py`) by `make docs`; do not edit by hand.
Every algorithm receives the same read-only view of the world at each event (arrival, completion or
a slot it asked to be woken at) and returns the complete allocation from then on; the engine
commits it and the validator checks every result (docs/formats.md, DESIGN section 5).

## Common ground

- **Elastic vs rigid jobs.** A job with `gpus` and `duration` (an imported production trace) is
  *rigid*: it needs exactly `gpus` one-GPU workers and then runs for `duration` slots (longer when
  spread over servers on a cluster declaring `network.spread_slowdown`). Every other
  job is *elastic*: its work is E_j x D_j x K_j mini-batches and its speed depends on how many
  workers and PSs of which type it gets.
- **Ideal-case configuration** (Zhou et al. Sec. 7, used by the baselines): the fastest worker
  type (smallest v_jm) and the fastest PS type (smallest U_j^p) that an empty cluster can hold.
- **Placement** (baselines): all-or-nothing; every worker and PS on one server when possible
  (no gradient traffic, eq. (1) with q_j = 1), else first-fit over servers in cluster order,
  honouring server pools. `fifo`, `srtf` and `tiresias` take `placement` (`pool`, this default;
  `consolidated`, the Tiresias simulator's `yarn`; `packed`, best-fit; docs/formats.md, Placement).
- **Preemption** is counted when a running job is left with no resources before it completes
  (a suspension); resizing a job is not a preemption.
"""


def render() -> str:
    parts = [INTRO, "## Work rates (`scheduling/speed.py`)\n", inspect.cleandoc(speed.rate.__doc__ or "") + "\n"]
    parts.append("## Registered algorithms\n")
    parts.append("| name | kind | summary |\n|---|---|---|")
    specs = registry.all_specs(plugins=False)  # the repository's own entries, whatever is installed
    parts += [f"| `{s.name}` | {s.kind} | {s.summary} |" for s in specs.values()]
    for s in specs.values():
        parts.append(f"\n### `{s.name}`\n")
        parts.append(f"{s.summary}\n")
        parts.append(f"**Semantics.** {s.semantics}\n")
        parts.append(f"**Reference.** {s.reference}\n")
        if s.needs:
            parts.append("**Needs.** " + "; ".join(f"{f.name}: {f.description}" for f in s.needs) + "\n")
        if s.params:
            parts.append("| parameter | type | default | range | help |\n|---|---|---|---|---|")
            for p in s.params:
                rng = ", ".join(p.choices) if p.choices else _range(p.min, p.max)
                parts.append(f"| `{p.name}` | {p.type.__name__} | `{p.default}` | {rng} | {p.help} |")
    return "\n".join(parts) + "\n"


def _range(lo: float | None, hi: float | None) -> str:
    if lo is None and hi is None:
        return ""
    return f"{'' if lo is None else f'{lo:g}'} .. {'' if hi is None else f'{hi:g}'}"


# ---------------------------------------------------------------------------------------------
# docs/formats.md: the field tables of the input schema


def _num(x: float) -> str:
    """A bound as the docs write it: 0.001, 604,800, 10^9, 10^-6."""
    if x == 0:
        return "0"
    k = math.log10(abs(x))
    if k.is_integer() and (abs(x) >= 1e6 or abs(x) < 1e-3):
        return f"{'-' if x < 0 else ''}10^{int(k)}"
    return f"{int(x):,}" if float(x).is_integer() else f"{x:g}"


def _bounds(f: Field) -> str:
    """The bounds or the choices of a field, in words ("" for kinds without them)."""
    lo = f.minimum
    if f.kind == "choice":
        shown = [f"`{c}`" for c in f.choices]
        return ", ".join(shown[:-1]) + f" or {shown[-1]}"
    if f.kind == "duration":
        return f"> {_num(lo or 0)}, at most {_num(f.maximum)} slots once rounded up"
    if f.kind in ("integer", "upload_delay"):
        return f"{_num(lo or 0)} to {_num(f.maximum)}"
    if f.kind in ("number", "seconds", "utility_term", "seconds_per_type", "amounts") or (
        f.kind == "stated" and f.strict
    ):
        if lo is None:
            return f"{_num(-f.maximum)} to {_num(f.maximum)}"
        return f"> {_num(lo)} and <= {_num(f.maximum)}" if f.strict else f"{_num(lo)} to {_num(f.maximum)}"
    return ""


def _placed(text: str, f: Field) -> str:
    return text.replace("{range}", _bounds(f)).replace("{maximum}", _num(f.maximum))


def _type_cell(f: Field) -> str:
    """A trace column's "unit, type" cell: its unit and form, with its bounds or choices."""
    if "{range}" in f.unit:
        return _placed(f.unit, f)
    bound = _bounds(f)
    if f.kind == "integer":
        bound = f"integer {bound}"
    elif f.kind in ("number", "utility_term") and not f.unit:
        bound = f"number {bound}"
    elif f.kind == "amounts":
        bound = f"each {bound}"
    return ", ".join(part for part in (f.unit, bound) if part)


def _meaning(f: Field) -> str:
    return f"{f.meaning} ({f.source})" if f.source else f.meaning


def _escaped(text: str) -> str:
    return text.replace("|", "\\|")


def _trace_table(fields: tuple[Field, ...]) -> str:
    rows = ["| field | unit, type | meaning | default |", "|---|---|---|---|"]
    for f in fields:
        if f.kind == "utility":  # the terms' rows say it
            continue
        rows.append(f"| `{f.name}` | {_escaped(_type_cell(f))} | {_escaped(_meaning(f))} | {f.default} |")
    return "\n".join(rows)


def _spec_table(fields: tuple[Field, ...]) -> str:
    rows = ["| field | required | meaning, unit | default |", "|---|---|---|---|"]
    for f in fields:
        meaning = _placed(_meaning(f), f)
        if "{range}" not in f.meaning and "{maximum}" not in f.meaning and (bound := _bounds(f)):
            meaning += f" ({bound})"
        rows.append(f"| `{f.name}` | {'yes' if f.required else 'no'} | {_escaped(meaning)} | {f.default} |")
    return "\n".join(rows)


FORMATS_TABLES = {
    "cluster": lambda: _spec_table(schema.CLUSTER_FIELDS),
    "server": lambda: _spec_table(schema.SERVER_FIELDS),
    "type": lambda: _spec_table(schema.TYPE_FIELDS),
    "trace": lambda: _trace_table(schema.TRACE_COLUMNS),
    "stage": lambda: _trace_table(schema.STAGE_FIELDS),
}
"""The generated tables of docs/formats.md, by marker name."""

_MARKED = re.compile(r"(<!-- schema:(\w+) -->\n)(.*?)(<!-- /schema:\2 -->)", re.S)


def render_formats(text: str) -> str:
    """``text`` (docs/formats.md) with the tables between its schema markers generated again."""
    names = [m.group(2) for m in _MARKED.finditer(text)]
    if sorted(names) != sorted(FORMATS_TABLES):
        raise ValueError(f"docs/formats.md has the schema tables {sorted(names)}, expected {sorted(FORMATS_TABLES)}")
    return _MARKED.sub(lambda m: f"{m.group(1)}{FORMATS_TABLES[m.group(2)]()}\n{m.group(4)}", text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--formats", type=Path, help="rewrite the schema tables of this file (docs/formats.md) in place")
    args = ap.parse_args()
    if args.formats is None:
        print(render(), end="")
        return
    text = args.formats.read_text(encoding="utf-8")
    args.formats.write_text(render_formats(text), encoding="utf-8")


if __name__ == "__main__":
    main()
