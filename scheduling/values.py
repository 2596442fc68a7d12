"""Reading input files and their values: the size and encoding checks of a whole file, the JSON
parser's errors, and small typed readers of one value that raise ``InputError`` naming the field
(callers add the file, line and job). Used by every loader (scheduling.loaders, scheduling.cluster_spec,
scheduling.job_rows, and the tables of scheduling.failures, gpu_types and restart_costs).
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence

from scheduling import cjson
from scheduling.bounds import MAX_AMOUNT
from scheduling.errors import InputError
from scheduling.schema import Field

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from json import JSONDecodeError
    from pathlib import Path
    from typing import Any


MAX_INPUT_BYTES = 256 * 1024 * 1024
"""Largest cluster spec or trace file the CLI and the library read (a 150,000-job A-SRPT trace is
65 MiB); raw imports have their own limit."""
MAX_UPLOAD_BYTES = 32 * 1024 * 1024
"""Largest cluster spec or trace the dashboard and the JSON API accept: the text is stored in the
database, and the whole Philly trace imported is about 4 MiB. Larger traces run with the CLI."""


def read_text(path: Path | str, name: str | None = None, max_bytes: int = MAX_INPUT_BYTES) -> str:
    """A whole input file as text, refusing empty, oversized and non-UTF-8 files."""
    label = name or str(path)
    try:  # (os, not pathlib: a short run starts without importing pathlib)
        size = os.stat(path).st_size
        if size > max_bytes:
            raise InputError(
                f"file is {size / 2**20:.1f} MiB, larger than the {max_bytes // 2**20} MiB limit", file=label
            )
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:  # missing, a folder, no permission
        raise InputError(f"cannot read the file ({exc.strerror})", file=label) from None
    return decode(data, label)


def decode(data: bytes, label: str) -> str:
    try:  # as data.decode("utf-8-sig") (an error's offset after the BOM), without loading that codec
        text = (data[3:] if data.startswith(b"\xef\xbb\xbf") else data).decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(
            f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})", file=label, line=line
        ) from exc
    if not text.strip():
        raise InputError("file is empty", file=label)
    if "\x00" in text:
        raise InputError("contains a NUL byte", file=label, line=text.count("\n", 0, text.index("\x00")) + 1)
    return text


# Small typed readers for one field; they raise InputError without the file, which callers add.


def number(
    value: Any, field: str, *, minimum: float | None = 0.0, strict: bool = False, maximum: float = MAX_AMOUNT
) -> float:
    """A finite number >= ``minimum`` (> with ``strict``; None: any sign) and at most ``maximum`` in magnitude."""
    if isinstance(value, bool) or value is None or value == "":
        raise InputError("missing number" if value in (None, "") else f"{shown(value)} is not a number", field=field)
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{shown(value)} is not a number", field=field) from None
    except OverflowError:  # a JSON integer beyond the float range
        raise InputError(f"{shown(value)} is not a finite number", field=field) from None
    if not math.isfinite(x):
        raise InputError(f"{shown(value)} is not a finite number", field=field)
    if minimum is not None and (x <= minimum if strict else x < minimum):
        raise InputError(f"{shown(value)} must be {'>' if strict else '>='} {minimum:g}", field=field)
    if abs(x) > maximum:
        bound = f"<= {maximum:g}" if x > 0 else f">= {-maximum:g}"
        raise InputError(f"{shown(value)} must be {bound}", field=field)
    return x


def shown(value: Any) -> str:
    """``repr(value)``, cut short: a value with thousands of digits is named, not printed."""
    shown = repr(value)
    return shown if len(shown) <= 40 else f"{shown[:30]}... ({len(shown)} characters)"


def integer(value: Any, field: str, *, minimum: int = 0, maximum: float = MAX_AMOUNT) -> int:
    x = number(value, field, minimum=None, maximum=maximum)
    if x != int(x):
        raise InputError(f"{shown(value)} is not a whole number", field=field)
    if x < minimum:
        raise InputError(f"{shown(value)} must be >= {minimum}", field=field)
    return int(x)


def text(value: Any, field: str) -> str:
    if value is None or (isinstance(value, str) and not value.strip()):
        raise InputError("missing value", field=field)
    if not isinstance(value, (str, int)) or isinstance(value, bool):
        raise InputError(f"{shown(value)} is not a string", field=field)
    return no_nul(str(value).strip(), field)


def first_duplicate(values: Iterable[str]) -> str | None:
    """The first value seen a second time, or None: one pass with a set (the inputs may hold
    100,000 names, where comparing each with all earlier ones takes minutes)."""
    seen: set[str] = set()
    for v in values:
        if v in seen:
            return v
        seen.add(v)
    return None


def listed(names: Sequence[str], most: int = 20) -> str:
    """Names for a message: the first ``most`` of them and how many more."""
    shown = ", ".join(names[:most])
    return shown if len(names) <= most else f"{shown}, ... ({len(names) - most:,} more)"


def no_nul(value: str, field: str) -> str:
    """``value``, unless it holds a NUL character (JSON's "\\u0000"), which no database text column stores."""
    if "\x00" in value:
        raise InputError(f"{shown(value)} contains a NUL character", field=field)
    return value


def choice(value: Any, field: str, options: tuple[str, ...]) -> str:
    v = text(value, field)
    if v not in options:
        raise InputError(f"{v!r} is not one of {', '.join(options)}", field=field)
    return v


def amounts(value: Any, field: str, resources: frozenset[str] | set[str] | None = None) -> dict[str, float]:
    if not isinstance(value, Mapping):
        raise InputError("expected an object of resource amounts", field=field)
    out = {}
    for k, v in value.items():
        if resources is not None and k not in resources:
            raise InputError(
                f"unknown resource {shown(k)} (declared: {listed(sorted(resources))})", field=f"{field}.{k}"
            )
        out[str(k)] = number(v, f"{field}.{k}")
    return out


def _decode_error() -> type[JSONDecodeError]:
    """json.JSONDecodeError, imported only once an error is raised (json imports re: start-up)."""
    from json import JSONDecodeError

    return JSONDecodeError


def parse_json(content: str, label: str) -> Any:
    """The JSON document in ``content``, or InputError naming the line of a syntax error."""
    try:
        return cjson.loads(content)  # json.loads without importing json (its errors are json's)
    except _decode_error() as exc:
        raise InputError(f"invalid JSON: {exc.msg} (column {exc.colno})", file=label, line=exc.lineno) from None
    except ValueError:  # an integer of more digits than Python converts
        raise InputError(
            f"invalid JSON: a number has more than {sys.get_int_max_str_digits()} digits", file=label
        ) from None
    except RecursionError:
        raise InputError("invalid JSON: nested too deeply", file=label) from None


def check_strings(doc: Any, field: str = "") -> None:
    """InputError naming the field of the first string (key or value) of a JSON document holding
    a NUL character ("\\u0000": PostgreSQL text refuses it) or an unpaired surrogate ("\\ud800":
    not encodable as UTF-8, so no CSV or page could show it). Iterative, linear in the document."""
    stack: list[tuple[str, Any]] = [(field, doc)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                raise InputError(f"{shown(item)} contains a NUL character", field=where or None)
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise InputError(
                    f"{shown(item)} contains an unpaired surrogate character", field=where or None
                ) from None
        elif isinstance(item, dict):
            for k, v in reversed(item.items()):
                key = f"{where}.{k}" if where else str(k)
                stack.append((key, v))
                stack.append((key, k))
        elif isinstance(item, list):
            stack.extend((f"{where}[{i}]", v) for i, v in reversed(list(enumerate(item))))


def reader_of(field: Field) -> Callable[[Any, str], Any]:
    """The reader of ``field`` of scheduling.schema (a field of kind integer, number, seconds,
    utility_term, seconds_per_type (one number), choice, id or flag): ``read(value, where)`` reads
    ``value`` by the field's bounds or choices, ``where`` naming the field in messages. Made once per
    field by the loaders (a trace reads it on every row)."""
    kind = field.kind
    lowest, most, strict = field.minimum, field.maximum, field.strict
    top = most if math.isfinite(most) else sys.float_info.max  # an infinite value: number() refuses it
    if kind == "integer":
        least = int(lowest or 0)

        def read_integer(value: Any, where: str) -> int:
            if type(value) is int and least <= value <= top:  # a JSON integer in bounds, as integer() reads it
                return value
            return integer(value, where, minimum=least, maximum=most)

        return read_integer
    if kind in ("number", "seconds", "utility_term", "seconds_per_type"):
        floor = -top if lowest is None else lowest

        def read_number(value: Any, where: str) -> float:
            if (type(value) is float or type(value) is int) and (  # a JSON number in bounds, as number() reads it
                (floor < value if strict else floor <= value) and value <= top
            ):
                return float(value)
            return number(value, where, minimum=lowest, strict=strict, maximum=most)

        return read_number
    if kind == "choice":
        choices = field.choices

        def read_choice(value: Any, where: str) -> str:
            return choice(value, where, choices)

        return read_choice
    if kind == "id":
        return text
    if kind == "flag":
        return flag
    raise ValueError(f"{field.name}: no reader for a field of kind {kind!r}")


def flag(value: Any, field: str) -> bool:
    if not isinstance(value, bool):
        raise InputError(f"{shown(value)} is not true or false", field=field)
    return value


def read_field(field: Field, value: Any, where: str | None = None) -> Any:
    """``value`` read as ``field`` (see ``reader_of``), for one-off reads."""
    return reader_of(field)(value, field.name if where is None else where)
