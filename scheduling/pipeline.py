"""Per-iteration time of a stage-graph (pipeline) job from its placement: A-SRPT eqs. (4)-(7).

Luo et al., "Prediction-Assisted Online Distributed Deep Learning Workload Scheduling in GPU
Clusters", Sec. III-B. A job has stages s = 1..S with k_s replicas each (one GPU per replica);
``x[s][m]`` is the number of replicas of stage s on server m. With the NIC of server m shared per
GPU (a replica gets B_inter / g of it) and intra-server bandwidth B_intra:

* (4) comp_s^m = p^f_s + p^b_s if x_s^m > 0;
* (5) comm_s^m = remote_s^m * x_s^m / ((x_s^m / g) B_inter) + local_s^m / B_intra, where remote
  (local) is the activation/gradient data 2 d^in_s (k_{s-1} - x_{s-1}^m) / k_{s-1}
  + 2 d^out_s (k_{s+1} - x_{s+1}^m) / k_{s+1} (resp. with x^m instead of k - x^m) that one replica
  exchanges with replicas of the neighbouring stages on other servers (resp. on server m);
* (6) AllReduce_s^m = 2 (k_s - 1)/k_s h_s / ((x_s^m / g) B_inter) if x_s^m < k_s (the stage's
  share of the NIC is the bottleneck), else 2 (k_s - 1)/k_s h_s / B_intra;
* (7) alpha = max over (s, m) with x_s^m > 0 of comp + comm + AllReduce.

Units: stage times in slots, data in MB, bandwidths in MB per slot, so alpha is in slots. A server
without a stated NIC (intra-server) bandwidth adds no inter- (intra-) server communication time.

Allocations name the stage a replica belongs to through the worker type id ``stage<s>`` (s from
1, as in the paper), so that the engine, the validator and the algorithms see the same x_s^m.
Allocations of any other type (e.g. the one-GPU ``gpu`` type other algorithms use) are mapped
canonically: replicas in stage order fill the job's GPUs on its servers in cluster order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from scheduling.model import Cluster, Stage
from scheduling.records import record

STAGE_TYPE_PREFIX = "stage"

Counts = Sequence[Mapping[str, int]]
"""Per stage (0-based index), server id -> replicas of that stage on that server (x_s^m)."""


def stage_type(index: int) -> str:
    """Worker type id of the replicas of stage ``index`` (0-based): "stage1" for the first stage."""
    return f"{STAGE_TYPE_PREFIX}{index + 1}"


def stage_index(type_id: str) -> int | None:
    """0-based stage index of a ``stage<s>`` type id, else None."""
    if not type_id.startswith(STAGE_TYPE_PREFIX):
        return None
    digits = type_id[len(STAGE_TYPE_PREFIX) :]
    if not digits.isdigit() or int(digits) < 1:
        return None
    return int(digits) - 1


@record
class Link:
    """What eqs. (5)-(6) need of a server."""

    gpus: float  # g: GPUs of the server
    nic: float | None  # B_inter, MB per slot (None: no NIC cost)
    intra: float | None  # B_intra, MB per slot (None: no intra-server cost)


_LINKS: dict[int, tuple[Cluster, dict[str, Link], dict[str, int]]] = {}


def links(cluster: Cluster) -> tuple[dict[str, Link], dict[str, int]]:
    """Server id -> Link and server id -> position in the cluster (cached per cluster object)."""
    cached = _LINKS.get(id(cluster))
    if cached is None or cached[0] is not cluster:
        info = {s.id: Link(float(s.capacity.get("gpu", 0.0)), s.nic_bw, s.intra_bw) for s in cluster.servers}
        order = {s.id: i for i, s in enumerate(cluster.servers)}
        if len(_LINKS) > 64:
            _LINKS.clear()
        cached = _LINKS[id(cluster)] = (cluster, info, order)
    return cached[1], cached[2]


def stage_time(stages: Sequence[Stage], counts: Counts, s: int, link: Link, server: str) -> float:
    """beta_s^m of eq. (7): comp (4) + comm (5) + AllReduce (6) of stage ``s`` on ``server``."""
    st = stages[s]
    x = counts[s].get(server, 0)
    if x <= 0:
        return 0.0
    comp = st.forward + st.backward  # (4)
    remote = local = 0.0  # (5): per-replica data to/from the neighbouring stages
    for j, d in ((s - 1, st.activation_in), (s + 1, st.activation_out)):
        if 0 <= j < len(stages) and d > 0:
            kj = stages[j].replicas
            here = counts[j].get(server, 0)
            remote += 2.0 * d * (kj - here) / kj
            local += 2.0 * d * here / kj
    comm = 0.0
    if remote > 0 and link.nic:
        comm += remote * x / (x / link.gpus * link.nic)
    if local > 0 and link.intra:
        comm += local / link.intra
    k = st.replicas
    allreduce = 0.0  # (6)
    share = 2.0 * (k - 1) / k * st.params
    if k > 1 and share > 0:
        if x < k:
            allreduce = share / (x / link.gpus * link.nic) if link.nic else 0.0
        else:
            allreduce = share / link.intra if link.intra else 0.0
    return comp + comm + allreduce


_NO_COST = Link(1.0, None, None)


def alpha(stages: Sequence[Stage], counts: Counts, server_links: Mapping[str, Link]) -> float:
    """alpha_i of eq. (7): the bottleneck stage time over every (stage, server) that hosts replicas.

    A server id the cluster does not know (planning estimates on placeholder servers) adds no
    communication time."""
    best = 0.0
    for s in range(len(stages)):
        for server in counts[s]:
            link = server_links.get(server, _NO_COST)
            best = max(best, stage_time(stages, counts, s, link, server))
    return best


def alpha_max(stages: Sequence[Stage], link: Link) -> float:
    """alpha_i^max (Sec. III-B): every replica on its own server with B_inter / g of its NIC."""
    counts: list[dict[str, int]] = [{} for _ in stages]
    server_links: dict[str, Link] = {}
    n = 0
    for s, st in enumerate(stages):
        for _ in range(st.replicas):
            counts[s][f"m{n}"] = 1
            server_links[f"m{n}"] = link
            n += 1
    return alpha(stages, counts, server_links)


def counts_from_allocations(
    stages: Sequence[Stage], allocations: Iterable[tuple[str, str, int]], order: Mapping[str, int]
) -> list[dict[str, int]] | None:
    """x_s^m from (server, type, count) worker allocations; None unless every replica is placed.

    Stage-typed allocations give x_s^m directly. Otherwise (any allocation of another type) the
    job's GPUs per server are filled canonically: servers in cluster order, replicas in stage order.
    """
    allocs = [a for a in allocations if a[2] > 0]
    counts: list[dict[str, int]] = [{} for _ in stages]
    if allocs and all(stage_index(t) is not None for _srv, t, _n in allocs):
        for server, type_id, n in allocs:
            s = stage_index(type_id)
            assert s is not None
            if s >= len(stages):
                return None
            counts[s][server] = counts[s].get(server, 0) + n
        if any(sum(c.values()) != st.replicas for c, st in zip(counts, stages, strict=True)):
            return None
        return counts
    per_server: dict[str, int] = {}
    for server, _t, n in allocs:
        per_server[server] = per_server.get(server, 0) + n
    if sum(per_server.values()) < sum(st.replicas for st in stages):
        return None
    servers = sorted(per_server, key=lambda m: (order.get(m, len(order)), m))
    pos, left = 0, per_server[servers[0]] if servers else 0
    for s, st in enumerate(stages):
        for _ in range(st.replicas):
            while left == 0:
                pos += 1
                left = per_server[servers[pos]]
            counts[s][servers[pos]] = counts[s].get(servers[pos], 0) + 1
            left -= 1
    return counts
