"""How far a simulation has got: the one progress measure of the dashboard's runs and the CLI's bar.

The engine knows nothing of progress; an algorithm is wrapped in ``Tracked``, which reports the
fraction done before each decision. The fraction is (jobs arrived + jobs finished or rejected) /
(2 x jobs): arrivals alone reach 1 early when a trace is submitted in a batch; finishes alone stay
at 0 while the first jobs train. It only grows, from 0 to 1 once every job has ended.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping

from scheduling.engine import Algorithm, Decision, View
from scheduling.model import Instance

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Any


class Tracked:
    """An algorithm wrapper: calls ``on_progress(fraction)`` before each decision of ``inner``."""

    def __init__(self, inner: Algorithm, instance: Instance, on_progress: Callable[[float], None]) -> None:
        self.inner = inner
        self.arrivals = sorted(j.arrival for j in instance.jobs)
        self.on_progress = on_progress

    def decide(self, view: View) -> Decision:
        if self.arrivals:
            arrived = bisect.bisect_right(self.arrivals, view.t)
            ended = arrived - len(view.jobs)  # view.jobs: arrived, not finished, not rejected
            self.on_progress((arrived + ended) / (2 * len(self.arrivals)))
        return self.inner.decide(view)

    def report(self) -> Mapping[str, Any]:
        return self.inner.report()

    def __getattr__(self, name: str) -> Any:  # anything else an algorithm exposes
        return getattr(self.inner, name)
