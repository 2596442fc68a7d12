"""A module imported at its first use, so that ``python -m scheduling`` starts without it."""

from __future__ import annotations

import importlib
from typing import Any


class LazyModule:
    """Stands for the module ``name``: the first attribute read imports it (later reads are a
    dictionary look-up in ``sys.modules``). Declare the real import under ``TYPE_CHECKING`` so
    that type checkers see the module itself."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self._name), attr)
