"""The subroutines of ``mincost`` with numpy: the same schedules, found faster.

Each block of candidates (one option and window length, every start t^- and PS server n) is first
screened with vectorised, approximate costs (window sums from prefix sums, cheapest-first fills
from cumulative sums). Only the candidates whose approximate cost is within a small band of the
block's minimum are then rebuilt by ``mincost``'s own code, with its exact cost, and scanned in
the pseudo-code's order with the same ``cheaper`` rule. Candidates outside the band can never be
the one the sequential scan ends on, so the result is the transcription's. Feasibility (how many
instances fit) is computed exactly: sliding-window minima of omega are the same floats.

Modules, by idea:

* ``tables``: the tables of one price state (window minima and sums of the duals, shared caches),
  the fit screens (``fit_counts``, ``fits_one``, the PS screens of Alg. 4 lines 15-17) and the
  band scan (``pick``);
* ``lengths``: the window lengths L_j (with N_j for A_mincost1/2, per Phi' for A_RAmincost1/2);
* ``workers``: A_mincost1's worker blocks (fit counts, unit costs, cheapest-first fills per worker
  demand and L_j), also used by A_RAmincost1/2, and the line-8 order and spread;
* ``spread_ps``: Alg. 4 lines 10-29 for one candidate, the exact rebuild of A_mincost1's band;
* ``a_mincost2``, ``a_mincost1``, ``a_ramincost``: the subroutines ``mincost2``, ``mincost1`` and
  ``ra_mincost``;
* ``bound``: ``declines``, a scan against a bar at the job's weight that proves Alg. 3 line 9 fails.

Every name is re-exported here (``fast.mincost1``, ``fast.fit_counts``, ...). The modules import
each other relatively, so that ``bench/zhou_scale.py --against`` can load an older commit's
package beside this one under another name.
"""

from __future__ import annotations

from .a_mincost1 import mincost1
from .a_mincost2 import mincost2
from .a_ramincost import ra_mincost
from .bound import SLACK, declines
from .lengths import _LENGTHS, _RA_LENGTHS, _all_lengths, _job_lengths, _Lengths, _lengths, _ra_length, _rho
from .spread_ps import spread_with_ps
from .tables import _NEED, BAND, KEEP, Tables, _host_limits, _limit, _ps_needed, fit_counts, fits_one, pick, tables_for
from .workers import _block, _fill_cost, _sorted_fill, _Workers, cheapest_first, spread

__all__ = [
    "BAND",
    "KEEP",
    "SLACK",
    "_LENGTHS",
    "_NEED",
    "_RA_LENGTHS",
    "Tables",
    "_Lengths",
    "_Workers",
    "_all_lengths",
    "_block",
    "_fill_cost",
    "_host_limits",
    "_job_lengths",
    "_lengths",
    "_limit",
    "_ps_needed",
    "_ra_length",
    "_rho",
    "_sorted_fill",
    "cheapest_first",
    "declines",
    "fit_counts",
    "fits_one",
    "mincost1",
    "mincost2",
    "pick",
    "ra_mincost",
    "spread",
    "spread_with_ps",
    "tables_for",
]
