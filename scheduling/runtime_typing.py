"""What ``typing``'s ``overload``, ``cast``, ``dataclass_transform`` and ``Protocol`` do at run time,
for the modules a plain ``simulate`` loads: they import these names from ``typing`` under
``TYPE_CHECKING`` (for the type checker) and from here otherwise, so that a short run starts
without importing ``typing`` (about 10 ms; docs/architecture.md, tests/test_cli_startup.py)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def overload(f: Any) -> Any:
    """As ``typing.overload`` at run time: the last definition of the name stands."""
    return f


def cast(_type: object, value: object) -> object:
    """As ``typing.cast`` at run time: ``value`` itself."""
    return value


def dataclass_transform(**kwargs: Any) -> Any:
    """As ``typing.dataclass_transform`` at run time: the decorated object unchanged."""
    return lambda f: f


Protocol = object
"""A protocol class's base at run time (its methods are checked by the type checker only)."""
