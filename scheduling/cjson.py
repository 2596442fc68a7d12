"""``json.loads`` and compact ``json.dumps`` through CPython's ``_json`` directly (start-up).

Importing the ``json`` package imports ``re`` (its decoder, scanner and encoder compile patterns),
with ``enum`` and ``re``'s compiler: about 5 ms of a 70-ms ``simulate`` process that reads one
cluster file and writes one result (bench/RESULTS.md, "Start-up without git processes and
re"). The work itself is done by ``_json``'s C scanner and encoder, which ``json`` calls with
the arguments below for these calls: the same functions, so the same values and bytes.

- ``loads(s)`` is ``json.loads(s)`` for a ``str``: leading and trailing JSON whitespace skipped
  as ``json.decoder.WHITESPACE`` does, the value scanned by ``_json.make_scanner`` with
  ``JSONDecoder()``'s settings. Anything else (bytes, a byte-order mark, a syntax error, extra
  data, a number too long, nesting too deep) is passed to ``json.loads``, which gives its own
  value or raises its own error.
- ``compact(o)`` is ``json.JSONEncoder(separators=(",", ":")).encode(o)`` (``json.dumps(o,
  separators=(",", ":"))``): ``_json.make_encoder`` with that encoder's settings (ASCII output,
  circular check, NaN allowed, keys unsorted), its message for a value JSON cannot hold.

Without ``_json`` (another Python) both are ``json``'s. tests/test_cjson.py compares them with
``json`` on many documents.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_make_scanner: Any = None
_make_encoder: Any = None
_ascii: Any = None
try:
    from _json import encode_basestring_ascii as _ascii
    from _json import make_encoder as _make_encoder
    from _json import make_scanner as _make_scanner
except ImportError:  # pragma: no cover - CPython has _json
    pass

_WHITESPACE = " \t\n\r"  # json.decoder.WHITESPACE's characters
_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}


class _Decoder:
    """The attributes ``_json.make_scanner`` reads, as ``json.JSONDecoder()`` sets them."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = _CONSTANTS.__getitem__


_scan = _make_scanner(_Decoder()) if _make_scanner is not None else None


def loads(s: str) -> Any:
    """``json.loads(s)`` (see the module docstring)."""
    if _scan is None or not isinstance(s, str) or s.startswith("\ufeff"):
        return _json_loads(s)
    start = len(s) - len(s.lstrip(_WHITESPACE))
    try:
        value, end = _scan(s, start)
    except Exception:  # json.loads raises its own error (or reads what this does not)
        return _json_loads(s)
    if end != len(s) and s[end:].strip(_WHITESPACE):
        return _json_loads(s)  # extra data: json's error
    return value


def _python_ascii(s: str) -> str:  # pragma: no cover - CPython has _json
    from json.encoder import encode_basestring_ascii as python_ascii

    return python_ascii(s)


encode_basestring_ascii: Callable[[str], str] = _ascii if _ascii is not None else _python_ascii
"""``json.encoder.encode_basestring_ascii``, the same ``_json`` function: a string as JSON, ASCII only."""


def _json_loads(s: Any) -> Any:
    import json

    return json.loads(s)


def _default(o: Any) -> Any:
    """``json.JSONEncoder.default``: a value JSON cannot hold."""
    raise TypeError(f"Object of type {o.__class__.__name__} is not JSON serializable")


def compact(o: Any) -> str:
    """``json.JSONEncoder(separators=(",", ":")).encode(o)``."""
    if _make_encoder is None:
        import json

        return json.JSONEncoder(separators=(",", ":")).encode(o)
    if isinstance(o, str):
        return str(_ascii(o))
    encode = _make_encoder({}, _default, _ascii, None, ":", ",", False, False, True)
    return "".join(encode(o, 0))
