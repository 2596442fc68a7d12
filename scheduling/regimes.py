"""Where each paper's headline was measured, and whether a preset instance is in that regime.

A headline of docs/results.md holds (or fails) in the setting it was measured in: its job count per
cluster, its offered load, its cluster size. A preset instance outside that setting may compare the
algorithms differently (e.g. OASiS leads rrh at 60 jobs and falls below it at 200; A-SRPT is
separated from its baselines at 500-job windows on 125 servers, not at 250). ``outside`` says so in
words, for the dashboard's result page and the CLI; it judges the instance a preset builds, by the
preset's arguments (job count, size, load), with the preset's own defaults for those not given.

Job counts are compared per full cluster (``jobs / size``): a preset at size s has s of the
servers, so ``jobs / size`` is the job count the same contention would take at size 1.
"""

from __future__ import annotations

from dataclasses import dataclass

from scheduling import presets
from scheduling.figures import ZHOU_JOBS
from scheduling.presets.asrpt import ASRPT_LOAD
from scheduling.presets.zhou import ZHOU_LOAD


@dataclass(frozen=True)
class Regime:
    """The measured setting of one preset's headline (docs/results.md)."""

    headline: str  # the figure and what it found there, in words
    jobs: tuple[float | None, float | None]  # jobs per full cluster (jobs / size), inclusive bounds
    load: tuple[float | None, float | None] = (None, None)  # offered load, inclusive bounds
    default_load: float | None = None  # the preset's load when none is given (None: no load knob)
    min_size: float = 0.0  # smallest cluster share measured

    def problems(self, jobs: float, size: float, load: float | None) -> list[str]:
        out = []
        per = jobs / size
        low, high = self.jobs
        if (low is not None and per < low - 1e-9) or (high is not None and per > high + 1e-9):
            shown = f"{jobs:g} jobs" if size == 1 else f"{jobs:g} jobs at size {size:g} ({per:g} per full cluster)"
            out.append(f"{shown}, measured at {_range(low, high)} jobs per full cluster")
        if size < self.min_size - 1e-9:
            out.append(f"size {size:g}, measured at size {self.min_size:g} or more")
        offered = self.default_load if load is None else load
        low, high = self.load
        if offered is not None and (
            (low is not None and offered < low - 1e-9) or (high is not None and offered > high + 1e-9)
        ):
            out.append(f"offered load {offered:g}, measured at {_range(low, high)}")
        return out


def _range(low: float | None, high: float | None) -> str:
    if low is not None and high is not None:
        return f"{low:g}" if low == high else f"{low:g}-{high:g}"
    if low is not None:
        return f"{low:g} or more"
    return f"{high:g} or fewer"


_ZHOU_JOBS = ZHOU_JOBS  # the job count zhou-fig2 / zhou-fig5 run

REGIMES: dict[str, Regime] = {
    "zhou-ps": Regime(
        f"Zhou et al. Fig. 2 (reproduce zhou-fig2): {_ZHOU_JOBS} jobs on the full cluster at offered load "
        f"{ZHOU_LOAD:g}, where the baselines are short of resources",
        (_ZHOU_JOBS, None),
        (ZHOU_LOAD, None),
        ZHOU_LOAD,
    ),
    "zhou-allreduce": Regime(
        f"Zhou et al. Fig. 5 (reproduce zhou-fig5): {_ZHOU_JOBS} jobs on the full cluster at offered load "
        f"{ZHOU_LOAD:g}",
        (_ZHOU_JOBS, None),
        (ZHOU_LOAD, None),
        ZHOU_LOAD,
    ),
    "zhou-batch": Regime("Zhou et al. Fig. 8 (reproduce zhou-fig8): 40 and 60 jobs at slot 0, tau = 64", (40, 60)),
    "oasis": Regime(
        "OASiS Fig. 3 (reproduce oasis-fig3): 60 jobs, where oasis has the highest utility; at 200 jobs rrh "
        "leads (docs/results-oasis.md)",
        (None, 100),
    ),
    "edge-cloud": Regime(
        "edge-cloud Figs. 7, 9, 11 (reproduce edge-fig7): 300 jobs on 100 edge servers at one job per slot",
        (300, None),
        (1.0, None),
        1.0,
    ),
    "asrpt": Regime(
        "A-SRPT Fig. 6 (reproduce asrpt-fig6): 500-job windows on 125 servers (1,000 per full cluster) after a "
        "history of as many, where asrpt is separated from every baseline; at 250-job windows it is not",
        (1000, None),
        (ASRPT_LOAD, None),
        ASRPT_LOAD,
        min_size=0.5,
    ),
}


def outside(preset: str, jobs: int | None = None, size: float = 1.0, load: float | None = None) -> str | None:
    """None if the instance ``presets.build(preset, jobs, size=size, load=load)`` is in the regime of
    its paper's headline (or the preset has none: demo); else a sentence saying what differs."""
    regime = REGIMES.get(preset)
    if regime is None:
        return None
    n = jobs if jobs is not None else max(1, round(presets.PRESETS[preset].default_jobs * size))
    problems = regime.problems(float(n), size, load)
    if not problems:
        return None
    return (
        f"This {preset} instance is outside the regime of its paper's headline, {regime.headline}: "
        f"{'; '.join(problems)}. The algorithms may compare differently here than docs/results.md reports."
    )
