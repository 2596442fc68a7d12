"""The runs a new experiment asks for, as text: "Also run" lines (``algorithm key=value ...``,
parsed by the algorithm's registry entry), what makes two runs the same, a sweep's values, and the
limits on how many."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from scheduling import registry
from scheduling.errors import InputError

MAX_SWEEP_VALUES = 50


MAX_RUNS = 120  # runs one experiment may queue (algorithms x sweep values)


Chosen = list[tuple[str, dict[str, Any]]]  # (algorithm, parsed parameters), in order


def parse_run_line(line: str, specs: Mapping[str, registry.AlgorithmSpec]) -> tuple[str, dict[str, Any]]:
    """ "drf fixed=true" -> ("drf", every parameter of drf parsed, defaults for those not named);
    InputError whose problem names the algorithm or key and what is wrong."""
    name, *pairs = line.split()
    spec = specs.get(name)
    if spec is None:
        raise InputError(
            f"unknown algorithm {name!r} (known: {', '.join(specs)}; {registry.PLUGIN_HINT})", field="algorithm"
        )
    raw: dict[str, str] = {}
    for pair in pairs:
        key, eq, value = pair.partition("=")
        if not (key and eq and value):
            raise InputError(f"{name}: {pair!r} is not KEY=VALUE", field="param")
        if key in raw:
            raise InputError(f"{name}: {key} is given twice", field=f"param {key}")
        raw[key] = value
    try:
        return name, spec.parse_params(raw)
    except InputError as exc:
        raise InputError(f"{name} {param_name(exc)}: {exc.problem}", field=exc.field) from None


def param_name(exc: InputError) -> str:
    """The parameter a registry error is about (its field is "param <name>")."""
    return (exc.field or "").removeprefix("param ")


def run_identity(name: str, params: Mapping[str, Any], swept: str | None = None) -> tuple[str, str]:
    """What makes two runs the same (the swept parameter aside): algorithm and parameter values."""
    values = {k: v for k, v in params.items() if k != swept}
    return name, json.dumps(values, sort_keys=True)


def sweep_values(text: str) -> list[str]:
    """ "1, 2, 4" or "start:stop:step" (stop included) -> the values as strings; ValueError if bad."""
    text = text.strip()
    if not text:
        raise ValueError("Give the values: a list (1, 2, 4) or a range start:stop:step.")
    if ":" in text:
        parts = [x.strip() for x in text.split(":")]
        if len(parts) != 3:
            raise ValueError(f"{text!r}: a range is start:stop:step")
        try:
            start, stop, step = (float(x) for x in parts)
        except ValueError:
            raise ValueError(f"{text!r}: start, stop and step must be numbers") from None
        if not all(math.isfinite(x) for x in (start, stop, step)):
            raise ValueError(f"{text!r}: start, stop and step must be finite numbers")
        if step <= 0 or stop < start:
            raise ValueError(f"{text!r}: the step must be positive and stop at least start")
        span = (stop - start) / step  # inf for 0:1e308:1e-10, which int() cannot convert
        if not span < MAX_SWEEP_VALUES:
            raise ValueError(f"{text!r} has more than {MAX_SWEEP_VALUES} values")
        count = int(span + 1e-9) + 1
        if count > MAX_SWEEP_VALUES:
            raise ValueError(f"{text!r} has {count} values, more than {MAX_SWEEP_VALUES}")
        integral = all(float(x).is_integer() for x in (start, step))
        return [f"{int(start + i * step)}" if integral else f"{start + i * step:.10g}" for i in range(count)]
    values = [x.strip() for x in text.replace(";", ",").split(",") if x.strip()]
    if len(values) > MAX_SWEEP_VALUES:
        raise ValueError(f"{len(values)} values, more than {MAX_SWEEP_VALUES}")
    unique: dict[float, str] = {}  # by value: "1, 1.0, 01" is one value
    for v in values:
        try:
            x = float(v)
        except ValueError:
            raise ValueError(f"{v!r} is not a number") from None
        if not math.isfinite(x):
            raise ValueError(f"{v!r} is not a finite number")
        unique.setdefault(x, v)
    return list(unique.values())
