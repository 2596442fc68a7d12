"""Named placements: where a job's fixed configuration goes, all-or-nothing.

A placement books a job's configuration on a ledger, or returns None and books nothing. The list
scheduler (priority.ListScheduler, ``placement=``) and Tiresias' walk take one by name:

* ``pool`` (the default): one server for the whole job if one holds it, else first-fit over the
  servers in cluster order (common.place). Under GPU counting (rigid one-GPU workers) it starts the
  jobs of the Tiresias simulator's ``--scheme=count``.
* ``consolidated``: the Tiresias simulator's ``--scheme=yarn`` (SymbioticLab/Tiresias at 959f9b0,
  simulator/switch.py ``ms_yarn_alloc_res`` lines 197-213, ``try_single_node_alloc`` 150-175,
  ``try_cross_node_alloc`` 46-147): a job of at most one server's workers goes on the first server
  with room for all of it, or waits; a larger job takes whole idle servers, the first in cluster
  order, and the first other server with room for the rest, or waits. Preemptive walks under it
  re-place every active job in priority order from an empty cluster at every decision, as the
  simulator's preemptive loops do (``CLUSTER.empty_infra()`` before the placement pass, run_sim.py
  ``shortest_first_sim_jobs`` lines 678-697): a running job may move (free at restart time 0, as
  there). docs/formats.md "Placement" has the details and what of the simulator is not modelled.
* ``packed``: best-fit: the fullest server that holds the whole job (fewest free workers' places
  left, ties in cluster order); a job no server holds is spread over the emptiest servers first
  (fewest servers). It fits exactly when ``pool`` fits.

``consolidated`` and ``packed`` place jobs without parameter servers (rigid and all-reduce jobs);
``check`` says so, and names a job no empty cluster can hold under the placement.

The list scheduler also takes a ``Placement`` object built for one run: the A-SRPT baselines'
Heavy-Edge placement (asrpt/cluster.py ``heavy_edge_placement``), which needs each job's stage
graph and the ``selection`` parameter and so is not one of the names here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from scheduling.algorithms.common import Config, place
from scheduling.capacity import TOLERANCE, Ledger
from scheduling.errors import InputError, UnsupportedInstance
from scheduling.model import Cluster, Job
from scheduling.records import record
from scheduling.speed import Allocation, demand_of

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Literal


PLACEMENT_NAMES = ("pool", "consolidated", "packed")
"""The names of PLACEMENTS (a ``placement`` parameter's choices)."""
if TYPE_CHECKING:
    PlacementName = Literal["pool", "consolidated", "packed"]  # PLACEMENT_NAMES
else:
    PlacementName = str  # (the Literal of PLACEMENT_NAMES, for the type checker)

Place = Callable[[Ledger, Job, Config], tuple[Allocation, ...] | None]


@record
class Placement:
    """One named placement."""

    name: str
    place: Place  # books the configuration all-or-nothing; None (nothing booked) if it does not fit
    # Preemptive walks re-place every active job on an empty cluster at every decision (else a
    # running job keeps its servers and only waiting or evicted jobs are placed).
    repack: bool
    # Whether, on this cluster, a job that does not fit implies that no job with the same
    # per-worker demand and more workers fits on the same ledger (common.FitMemo may then skip them).
    monotone: Callable[[Cluster], bool]
    summary: str  # one line for the parameter's help


def _worker_demand(ledger: Ledger, job: Job, cfg: Config) -> dict[str, float] | None:
    assert cfg.ps_type is None or cfg.ps == 0, f"job {job.job_id!r}: this placement has no PSs (check)"
    demand = demand_of(ledger.cluster, job, "worker", cfg.worker_type)
    return dict(demand) if demand is not None else None


_CAPACITY: dict[int, tuple[Cluster, dict[tuple[tuple[str, float], ...], dict[str, int]]]] = {}


def capacities(cluster: Cluster, demand: dict[str, float]) -> dict[str, int]:
    """Server id -> how many workers of ``demand`` the server holds when empty (servers that accept
    workers and hold at least one; unlimited ones a large number), in cluster order; cached."""
    entry = _CAPACITY.get(id(cluster))
    if entry is None or entry[0] is not cluster:
        if len(_CAPACITY) > 64:
            _CAPACITY.clear()
        entry = _CAPACITY[id(cluster)] = (cluster, {})
    key = tuple(sorted(demand.items()))
    caps = entry[1].get(key)
    if caps is None:
        caps = entry[1][key] = dict(Ledger(cluster).room("worker", demand))
    return caps


def _idle(ledger: Ledger, server_id: str) -> bool:
    """Nothing is booked on the server."""
    server = ledger.server(server_id)
    assert server is not None
    return all(ledger.used(server_id, r) <= TOLERANCE for r in server.capacity)


def consolidated(ledger: Ledger, job: Job, cfg: Config) -> tuple[Allocation, ...] | None:
    """The Tiresias simulator's ``yarn`` placement (module docstring)."""
    demand = _worker_demand(ledger, job, cfg)
    n = cfg.workers
    if demand is None or not ledger.could_fit("worker", demand, n):
        return None
    caps = capacities(ledger.cluster, demand)
    if n <= max(caps.values(), default=0):
        # try_single_node_alloc: the first server with room for all of it, else the job waits.
        home = ledger.first_fit(("worker",), {r: a * n for r, a in demand.items()})
        if home is None:
            return None
        ledger.book(home, demand, n)
        return (Allocation(job.job_id, home, "worker", cfg.worker_type, n),)
    # try_cross_node_alloc: whole idle servers in cluster order while the rest fills one (with
    # servers of G workers: the first floor(n / G)), then the first other server with room for the rest.
    whole: list[tuple[str, int]] = []
    left = n
    for server_id, cap in caps.items():
        if cap <= left and _idle(ledger, server_id):
            whole.append((server_id, cap))
            left -= cap
            if left == 0:
                break
    parts = list(whole)
    if left:
        taken = {s for s, _ in whole}
        rest = next((s for s, k in ledger.room("worker", demand) if k >= left and s not in taken), None)
        if rest is None:
            return None
        parts.append((rest, left))
    for server_id, k in parts:
        ledger.book(server_id, demand, k)
    return tuple(Allocation(job.job_id, s, "worker", cfg.worker_type, k) for s, k in parts)


def packed(ledger: Ledger, job: Job, cfg: Config) -> tuple[Allocation, ...] | None:
    """Best-fit (module docstring)."""
    demand = _worker_demand(ledger, job, cfg)
    n = cfg.workers
    if demand is None or not ledger.could_fit("worker", demand, n):
        return None
    rooms = ledger.room("worker", demand)  # cluster order
    holding = [(k, i, s) for i, (s, k) in enumerate(rooms) if k >= n]
    if holding:
        _k, _i, home = min(holding)
        ledger.book(home, demand, n)
        return (Allocation(job.job_id, home, "worker", cfg.worker_type, n),)
    if sum(k for _s, k in rooms) < n:
        return None
    parts: list[tuple[str, int]] = []
    left = n
    for _neg, _i, server_id in sorted((-k, i, s) for i, (s, k) in enumerate(rooms)):
        k = min(left, -_neg)
        parts.append((server_id, k))
        left -= k
        if left == 0:
            break
    for server_id, k in parts:
        ledger.book(server_id, demand, k)
    return tuple(Allocation(job.job_id, s, "worker", cfg.worker_type, k) for s, k in parts)


def _uniform(cluster: Cluster) -> bool:
    """Every server that accepts workers has the same capacity and is limited (consolidated is then
    monotone: docs/formats.md "Placement")."""
    servers = [s for s in cluster.servers if s.accepts("worker")]
    return all(not s.unlimited and s.capacity == servers[0].capacity for s in servers)


PLACEMENTS: dict[str, Placement] = {
    p.name: p
    for p in (
        Placement(
            "pool",
            place,
            repack=False,
            monotone=lambda cluster: True,
            summary="one server if one holds the job, else first-fit over servers (GPU counting)",
        ),
        Placement(
            "consolidated",
            consolidated,
            repack=True,
            monotone=_uniform,
            summary=(
                "the Tiresias simulator's yarn: up to one server's GPUs on one server, larger jobs on whole "
                "idle servers; a job waits rather than split"
            ),
        ),
        Placement(
            "packed",
            packed,
            repack=False,
            monotone=lambda cluster: True,
            summary="best-fit: the fullest server that holds the job, else the emptiest servers first",
        ),
    )
}
assert tuple(PLACEMENTS) == PLACEMENT_NAMES


def placement_of(name: str) -> Placement:
    """The placement of that name, else InputError."""
    found = PLACEMENTS.get(name)
    if found is None:
        raise InputError(f"{name!r} is not one of {', '.join(PLACEMENTS)}", field="param placement")
    return found


def check(placement: Placement, cluster: Cluster, jobs: Iterable[tuple[Job, Config]]) -> None:
    """UnsupportedInstance (exit code 2) unless every job can run under ``placement``: no PSs (for a
    placement other than pool), and its configuration fits an empty cluster (else it would wait
    forever)."""
    if placement.name == "pool":
        return
    seen: dict[tuple[object, ...], bool] = {}
    for job, cfg in jobs:
        if cfg.ps_type is not None and cfg.ps > 0:
            raise UnsupportedInstance(
                f"param placement: job {job.job_id!r} needs parameter servers; placement={placement.name} "
                "places jobs without them (rigid or all-reduce jobs): use placement=pool"
            )
        demand = demand_of(cluster, job, "worker", cfg.worker_type)
        key = (tuple(sorted((demand or {}).items())), cfg.workers)
        if key not in seen:
            seen[key] = placement.place(Ledger(cluster), job, cfg) is not None
        if not seen[key]:
            raise UnsupportedInstance(
                f"param placement: job {job.job_id!r}: its {cfg.workers} workers do not fit an empty "
                f"cluster under placement={placement.name}"
            )
