"""A module imported at its first use, so that ``python -m scheduling`` starts without it."""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Any


class LazyModule:
    """Stands for the module ``name``: the first attribute read imports it. Each attribute read is
    then kept on this object, so later reads are plain attribute look-ups (``__getattr__`` runs
    only for a name not read before; hot loops read ``np.minimum`` and the like thousands of times).
    Declare the real import under ``TYPE_CHECKING`` so that type checkers see the module itself."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        value = getattr(importlib.import_module(self._name), attr)
        setattr(self, attr, value)
        return value


class LazyGenerator:
    """numpy's ``default_rng(seed)``, created at its first use: an algorithm that draws nothing
    (e.g. fifo on a trace of rigid jobs) never imports numpy for it. Every attribute is the
    generator's, so the draws are exactly those of ``numpy.random.default_rng(seed)``."""

    def __init__(self, seed: int | None) -> None:
        self._seed = seed
        self._generator: Any = None

    def __getattr__(self, attr: str) -> Any:
        if self._generator is None:
            import numpy

            self._generator = numpy.random.default_rng(self._seed)
        return getattr(self._generator, attr)
