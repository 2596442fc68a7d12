"""Generate docs/algorithms.md from the registry: ``python -m scheduling.docs > docs/algorithms.md``.

A test checks that the committed file equals this output, so the docs cannot drift from the code.
"""

from __future__ import annotations

import inspect

from scheduling import registry, speed

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


if __name__ == "__main__":
    print(render(), end="")
