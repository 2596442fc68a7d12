"""Raw CSV tables of the importers (scheduling/importers.py): read whole as text, checked column by column.

Every problem raises ``InputError`` naming the file, the line (the header is line 1), the column and
what is wrong; ``write_atomically`` writes an import's output through a temporary file and a rename,
so a failed import never leaves a partial file.
"""

from __future__ import annotations

import csv
import os
import re
import secrets
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import numpy as np

from scheduling.errors import InputError
from scheduling.lazy import LazyModule
from scheduling.loaders import decode

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = LazyModule("pandas")  # imported at its first use: the CLI starts without pandas

MAX_RAW_BYTES = 1 << 30
"""Largest raw file accepted (1 GiB); the loaders' 32 MiB limit is for cluster specs and traces."""


def read_raw(path: Path) -> pd.DataFrame:
    """The whole raw CSV as text cells (header names stripped), or InputError."""
    label = str(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise InputError(f"cannot read the file ({exc.strerror})", file=label) from None
    if size > MAX_RAW_BYTES:
        raise InputError(f"file is {size / 2**20:.0f} MiB, larger than the {MAX_RAW_BYTES >> 20} MiB limit", file=label)
    refuse_compressed(path, label)
    try:
        with warnings.catch_warnings():
            # index_col=False: never take a first column as the index (pandas does when a row has one
            # more field than the header, shifting every column); rows with extra fields only warn.
            warnings.simplefilter("error", pd.errors.ParserWarning)
            # compression=None: the bytes uploaded are the bytes read, whatever the file's name
            # (pandas infers gzip/zip/bz2/xz/zstd from the suffix by default, with no bound on the
            # inflated size).
            table = pd.read_csv(
                path,
                dtype=str,
                keep_default_na=False,
                na_filter=False,
                encoding="utf-8-sig",
                index_col=False,
                compression=None,
            )
    except pd.errors.ParserWarning:
        raise longer_row(path, label) from None
    except OSError as exc:  # a folder, no permission
        raise InputError(f"cannot read the file ({exc.strerror})", file=label) from None
    except pd.errors.EmptyDataError:
        raise InputError("file is empty", file=label) from None
    except pd.errors.ParserError as exc:
        found = re.search(r"line (\d+)", str(exc))
        raise InputError(
            f"malformed CSV ({str(exc).strip()})", file=label, line=int(found.group(1)) if found else None
        ) from None
    except UnicodeDecodeError:
        decode(path.read_bytes(), label)  # raises, naming the line of the first bad byte
        raise
    table.columns = [str(c).strip() for c in table.columns]
    if table.empty:
        raise InputError("the file has a header but no rows", file=label, line=2)
    for column in table.columns:  # one column at a time: a million rows' copy is not held twice
        table[column] = table[column].str.strip()
    return table


COMPRESSED_MAGIC = {
    b"\x1f\x8b": "gzip",
    b"PK\x03\x04": "zip",
    b"BZh": "bzip2",
    b"\xfd7zXZ\x00": "xz",
    b"\x28\xb5\x2f\xfd": "zstd",
    b"7z\xbc\xaf\x27\x1c": "7z",
}


def refuse_compressed(path: Path, label: str) -> None:
    """InputError for a compressed archive, recognised by its first bytes (not its name): raw
    traces are imported as the plain CSV text uploaded, so that the work done is bounded by the
    upload's size (a small archive may inflate to gigabytes)."""
    try:
        with path.open("rb") as f:
            head = f.read(8)
    except OSError as exc:
        raise InputError(f"cannot read the file ({exc.strerror})", file=label) from None
    for magic, kind in COMPRESSED_MAGIC.items():
        if head.startswith(magic):
            raise InputError(
                f"a {kind}-compressed file: upload the uncompressed CSV (up to {MAX_RAW_BYTES >> 20} MiB)", file=label
            )


def longer_row(path: Path, label: str) -> InputError:
    """The error for the first row with more fields than the header."""
    with path.open(encoding="utf-8-sig", newline="") as f:
        reader = csv.reader(f)
        width = len(next(reader))
        for row in reader:
            if len(row) > width:
                return InputError(f"{len(row)} values for {width} columns", file=label, line=reader.line_num)
    return InputError(f"a row has more values than the {width} columns", file=label)


def resolve_columns(
    table: pd.DataFrame,
    label: str,
    fields: Mapping[str, Sequence[str]],
    mapping: Mapping[str, str],
) -> dict[str, str]:
    """Our field name -> the raw column holding it: ``mapping`` first, then built-in aliases."""
    columns = list(table.columns)
    by_lower = {c.lower(): c for c in reversed(columns)}  # first occurrence wins
    out: dict[str, str] = {}
    for key, column in mapping.items():
        if key not in fields:
            raise InputError(f"unknown field {key!r} (fields: {', '.join(fields)})", field="--map")
        found = column if column in columns else by_lower.get(column.lower())
        if found is None:
            raise InputError(
                f"no column {column!r} for {key} (columns: {', '.join(columns)})", file=label, line=1, field=column
            )
        out[key] = found
    for key, aliases in fields.items():
        if key in out:
            continue
        hit = next((by_lower[a] for a in aliases if a in by_lower and by_lower[a] not in out.values()), None)
        if hit is not None:
            out[key] = hit
    return out


def require(resolved: Mapping[str, str], field: str, label: str, columns: Sequence[str]) -> str:
    if field not in resolved:
        raise InputError(
            f"missing column for {field} (columns: {', '.join(columns)}); map one with --map {field}=COLUMN",
            file=label,
            line=1,
            field=field,
        )
    return resolved[field]


def numbers(table: pd.DataFrame, column: str, label: str) -> np.ndarray:
    """A column as floats; InputError at the first empty, non-numeric or infinite cell."""
    text = table[column]
    values: np.ndarray = np.asarray(pd.to_numeric(text, errors="coerce"), dtype=float)
    bad = ~np.isfinite(values)
    if bad.any():
        row = int(np.argmax(bad))
        cell = text.iloc[row]
        problem = "missing value" if cell == "" else f"{cell!r} is not a number"
        raise InputError(problem, file=label, line=row + 2, field=column)
    return values


def submit_seconds(table: pd.DataFrame, column: str, label: str) -> tuple[np.ndarray, bool]:
    """Submit times as float seconds and whether they were datetimes (then: seconds since 1970, UTC)."""
    text = table[column]
    empty = (text == "").to_numpy()
    if empty.any():
        raise InputError("missing value", file=label, line=int(np.argmax(empty)) + 2, field=column)
    numeric: np.ndarray = np.asarray(pd.to_numeric(text, errors="coerce"), dtype=float)
    if np.isfinite(numeric[0]):
        bad = ~np.isfinite(numeric)
        if bad.any():
            row = int(np.argmax(bad))
            raise InputError(
                f"{text.iloc[row]!r} is not a number of seconds like line 2's", file=label, line=row + 2, field=column
            )
        return numeric, False
    stamps = pd.to_datetime(text, format="mixed", utc=True, errors="coerce")
    bad = stamps.isna().to_numpy()
    if bad.any():
        row = int(np.argmax(bad))
        raise InputError(
            f"{text.iloc[row]!r} is not a datetime or a number of seconds", file=label, line=row + 2, field=column
        )
    seconds = (stamps - pd.Timestamp(0, tz="UTC")) / pd.Timedelta(seconds=1)
    return np.asarray(seconds, dtype=float), True


def bound(value: str | None, flag: str, datetimes: bool, trace_start: float) -> float | None:
    """A --start/--end value in the submit times' scale: seconds from the trace start, or a datetime."""
    if value is None:
        return None
    try:
        return trace_start + float(value)
    except ValueError:
        pass
    if not datetimes:
        raise InputError(f"{value!r}: the submit times are numbers, so give seconds from the trace start", field=flag)
    stamp = pd.to_datetime(value, format="mixed", utc=True, errors="coerce")
    if pd.isna(stamp):
        raise InputError(f"{value!r} is neither seconds from the trace start nor a datetime", field=flag)
    return float((stamp - pd.Timestamp(0, tz="UTC")) / pd.Timedelta(seconds=1))


def check_ids(ids: np.ndarray, keep: np.ndarray, label: str, column: str) -> None:
    seen: dict[str, int] = {}
    for row in np.flatnonzero(keep):
        value = str(ids[row])
        if value == "":
            raise InputError("missing value", file=label, line=int(row) + 2, field=column)
        if value in seen:
            raise InputError(
                f"duplicate id {value!r} (first on line {seen[value]})", file=label, line=int(row) + 2, field=column
            )
        seen[value] = int(row) + 2


def non_negative(table: pd.DataFrame, column: str, label: str) -> np.ndarray:
    values = numbers(table, column, label)
    if (values < 0).any():
        row = int(np.argmax(values < 0))
        raise InputError(f"{table[column].iloc[row]!r} must be >= 0", file=label, line=row + 2, field=column)
    return values


def write_atomically(path: Path, text: str | Callable[[TextIO], None]) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and a rename
    (``text`` may be a function writing to the open file: a large output is not held whole).

    The temporary file is opened with mode "x" (not mkstemp) so that the result gets the usual
    permissions from the umask.
    """
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tmp.open("x", encoding="utf-8", newline="") as f:
            if isinstance(text, str):
                f.write(text)
            else:
                text(f)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise InputError(f"cannot write the output ({exc.strerror})", file=str(path)) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
