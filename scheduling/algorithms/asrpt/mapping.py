"""The job graph and the Heavy-Edge GPU mapping of A-SRPT (Luo et al., Sec. IV-B).

A job is a graph whose vertices are stage replicas (stage order, replica order) and whose edge
weights are the data two replicas exchange per iteration (MB):

* between every replica pair of stages s-1 and s: 2 d^out_{s-1} / k_s (= 2 d^in_s / k_{s-1});
* within a replicated stage s (AllReduce): a ring over its replicas with 2 (k_s - 1)/k_s h_s per
  edge (RAR), or the edges of two binary trees with (k_s - 1)/k_s h_s per tree edge (TAR).

Heavy-Edge partitions the graph over servers with given free GPUs so that heavy edges stay inside
a server; ``alpha_min_estimate`` is the paper's alpha~_i^min: Heavy-Edge on the fewest servers
(full servers and one partial one) and eq. (7) on the result.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from scheduling.model import Stage
from scheduling.pipeline import Link, alpha


@dataclass(frozen=True)
class JobGraph:
    stages: tuple[Stage, ...]
    stage_of: tuple[int, ...]  # vertex -> 0-based stage index
    adjacency: tuple[dict[int, float], ...]  # vertex -> {neighbour: edge weight, MB}

    @property
    def size(self) -> int:
        return len(self.stage_of)

    def edges(self) -> list[tuple[int, int, float]]:
        return [(u, v, w) for u, nbrs in enumerate(self.adjacency) for v, w in nbrs.items() if u < v]

    @cached_property
    def ranked_edges(self) -> tuple[tuple[int, int], ...]:
        """Edges (u < v) in the order ``_heaviest_edge`` prefers them: heavier first, then by u,
        then by position in u's adjacency (its scan keeps the first of equal weights)."""
        ranked = sorted(
            (-w, u, i, v) for u, nbrs in enumerate(self.adjacency) for i, (v, w) in enumerate(nbrs.items()) if u < v
        )
        return tuple((u, v) for _w, u, _i, v in ranked)


def _tree_edges(k: int) -> set[tuple[int, int]]:
    """Edges of the double binary tree over ranks 0..k-1: a heap-ordered tree, and the same tree
    over the ranks shifted by one (NCCL's two complementary trees, simplified)."""
    out: set[tuple[int, int]] = set()
    for shift in (0, 1):
        for r in range(1, k):
            a, b = (r + shift) % k, ((r - 1) // 2 + shift) % k
            out.add((min(a, b), max(a, b)))
    return out


def job_graph(stages: Sequence[Stage], allreduce: str = "ring") -> JobGraph:
    """The communication graph Omega = (V, E) of Sec. IV-B."""
    stage_of: list[int] = []
    first: list[int] = []  # vertex of replica 0 of each stage
    for s, st in enumerate(stages):
        first.append(len(stage_of))
        stage_of.extend([s] * st.replicas)
    adj: list[dict[int, float]] = [{} for _ in stage_of]

    def add(u: int, v: int, w: float) -> None:
        if w > 0 and u != v:
            adj[u][v] = adj[u].get(v, 0.0) + w
            adj[v][u] = adj[v].get(u, 0.0) + w

    for s in range(1, len(stages)):
        prev, cur = stages[s - 1], stages[s]
        w = max(2.0 * prev.activation_out / cur.replicas, 2.0 * cur.activation_in / prev.replicas)
        for a in range(prev.replicas):
            for b in range(cur.replicas):
                add(first[s - 1] + a, first[s] + b, w)
    for s, st in enumerate(stages):
        k = st.replicas
        if k < 2 or st.params <= 0:
            continue
        if allreduce == "tree":
            for a, b in sorted(_tree_edges(k)):
                add(first[s] + a, first[s] + b, (k - 1) / k * st.params)
        else:
            ring = {(min(r, (r + 1) % k), max(r, (r + 1) % k)) for r in range(k)}
            for a, b in sorted(ring):
                add(first[s] + a, first[s] + b, 2.0 * (k - 1) / k * st.params)
    return JobGraph(tuple(stages), tuple(stage_of), tuple(adj))


def heavy_edge(graph: JobGraph, servers: Sequence[tuple[str, int]]) -> list[str]:
    """Heavy-Edge (Sec. IV-B): vertex -> server id, for servers with free GPUs summing to |V|.

    Servers are taken by free GPUs, descending (ties keep the given order). A server that can take
    every remaining vertex takes them all; a one-GPU server takes the remaining vertex with the
    least edge weight to the other remaining vertices (edges to already placed vertices are cut
    whatever this server takes). Otherwise the server's node_set grows by the heaviest edge between
    it and the unplaced vertices, starting from the heaviest edge among unplaced vertices; where no
    edge connects, the paper takes a random vertex, here the lowest-numbered one (deterministic).
    Ties go to the lowest-numbered vertex.
    """
    n = graph.size
    if sum(c for _, c in servers) != n:
        raise ValueError(f"servers offer {sum(c for _, c in servers)} GPUs for {n} replicas")
    where: list[str | None] = [None] * n
    remaining = set(range(n))
    order = sorted(range(len(servers)), key=lambda i: -servers[i][1])
    for i in order:
        server, cap = servers[i]
        if cap <= 0:
            continue
        if len(remaining) <= cap:  # case 1: every remaining replica fits here
            for v in remaining:
                where[v] = server
            remaining.clear()
            break
        if cap == 1:  # case 2: the replica that cuts the least
            v = min(remaining, key=lambda u: (sum(w for x, w in graph.adjacency[u].items() if x in remaining), u))
            where[v] = server
            remaining.discard(v)
            continue
        for v in _grow(graph, remaining, cap):
            where[v] = server
            remaining.discard(v)
    assert all(w is not None for w in where)
    return [w for w in where if w is not None]


def _grow(graph: JobGraph, remaining: set[int], cap: int) -> list[int]:
    """One server's node_set: seed with the heaviest unplaced edge, then add heaviest neighbours."""
    node_set: list[int] = []
    free = set(remaining)
    gain: dict[int, float] = {}  # unplaced vertex -> weight of its edges into node_set

    def take(v: int) -> None:
        node_set.append(v)
        free.discard(v)
        gain.pop(v, None)
        for u, w in graph.adjacency[v].items():
            if u in free:
                gain[u] = gain.get(u, 0.0) + w

    while len(node_set) < cap:
        if gain:
            v = min(gain, key=lambda u: (-gain[u], u))
            take(v)
            continue
        seed = _heaviest_edge(graph, free) if cap - len(node_set) >= 2 else None
        if seed is None:
            take(min(free))
        else:
            take(seed[0])
            take(seed[1])
    return node_set


def _heaviest_edge(graph: JobGraph, free: set[int]) -> tuple[int, int] | None:
    best: tuple[float, int, int] | None = None
    for u in sorted(free):
        for v, w in graph.adjacency[u].items():
            if u < v and v in free and (best is None or w > best[0]):
                best = (w, u, v)
    return None if best is None else (best[1], best[2])


def heavy_edge_fast(graph: JobGraph, servers: Sequence[tuple[str, int]]) -> list[str]:
    """``heavy_edge`` with the same result, for large jobs spread over many servers.

    Two scans of ``heavy_edge`` repeat over the whole graph at every server: the one-GPU case sums
    each remaining vertex's edges to the other remaining vertices, and every seed scans all edges
    for the heaviest unplaced one. Here a vertex's sum is recomputed (in the same order, so to the
    same float) only after one of its neighbours was placed and kept in a heap, and seeds come from the edges ranked
    once per graph (``JobGraph.ranked_edges``) through a pointer that only moves forward: placed
    vertices never return, so an edge passed over never qualifies again.
    """
    n = graph.size
    if sum(c for _, c in servers) != n:
        raise ValueError(f"servers offer {sum(c for _, c in servers)} GPUs for {n} replicas")
    adjacency = graph.adjacency
    where: list[str | None] = [None] * n
    remaining = set(range(n))
    cut = [0.0] * n  # vertex -> weight of its edges to remaining vertices (valid unless dirty)
    dirty = set(range(n))
    edges = graph.ranked_edges
    ptr = 0
    least: list[tuple[float, int]] = []  # (cut, vertex) entries, stale ones dropped when met

    def place(v: int, server: str) -> None:
        where[v] = server
        remaining.discard(v)
        dirty.update(adjacency[v])

    for i in sorted(range(len(servers)), key=lambda i: -servers[i][1]):
        server, cap = servers[i]
        if cap <= 0:
            continue
        if len(remaining) <= cap:  # case 1
            for v in remaining:
                where[v] = server
            remaining.clear()
            break
        if cap == 1:  # case 2: the least (cut, vertex) of a heap holding each remaining vertex's current one
            for u in dirty & remaining:
                cut[u] = sum(w for x, w in adjacency[u].items() if x in remaining)
                heapq.heappush(least, (cut[u], u))
            dirty.clear()
            while least[0][1] not in remaining or least[0][0] != cut[least[0][1]]:
                heapq.heappop(least)  # placed, or its cut has changed since (a newer entry holds it)
            place(heapq.heappop(least)[1], server)
            continue
        # _grow with the ranked edges as seeds.
        node_set = 0
        gain: dict[int, float] = {}
        while node_set < cap:
            if gain:
                v = min(gain, key=lambda u: (-gain[u], u))
                take = [v]
            elif cap - node_set >= 2:
                while ptr < len(edges) and not (edges[ptr][0] in remaining and edges[ptr][1] in remaining):
                    ptr += 1
                take = list(edges[ptr]) if ptr < len(edges) else [min(remaining)]
            else:
                take = [min(remaining)]
            for v in take:
                place(v, server)
                node_set += 1
                gain.pop(v, None)
                for u, w in adjacency[v].items():
                    if u in remaining:
                        gain[u] = gain.get(u, 0.0) + w
    assert all(w is not None for w in where)
    return [w for w in where if w is not None]


def counts_of(graph: JobGraph, where: Sequence[str]) -> list[dict[str, int]]:
    """x_s^m from a vertex -> server mapping."""
    counts: list[dict[str, int]] = [{} for _ in graph.stages]
    for v, server in enumerate(where):
        s = graph.stage_of[v]
        counts[s][server] = counts[s].get(server, 0) + 1
    return counts


def fewest_servers(gpus: int, per_server: int) -> list[tuple[str, int]]:
    """Servers m_1..m_{|M|-1} with all g GPUs and m_|M| with the rest (Sec. IV-B, alpha~_min)."""
    full, rest = divmod(gpus, per_server)
    out = [(f"m{i}", per_server) for i in range(full)]
    if rest:
        out.append((f"m{full}", rest))
    return out


def alpha_min_estimate(graph: JobGraph, link: Link) -> float:
    """alpha~_i^min: eq. (7) of the Heavy-Edge mapping onto the fewest servers."""
    servers = fewest_servers(graph.size, max(1, int(link.gpus)))
    where = heavy_edge(graph, servers)
    return alpha(graph.stages, counts_of(graph, where), {m: link for m, _ in servers})
