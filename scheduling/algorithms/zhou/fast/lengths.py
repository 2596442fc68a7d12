"""Window lengths of the numpy path: the (L_j, N_j) lists of A_mincost1/2 (``spec.ps_lengths``,
vectorised and cached per job) and L_j per Phi' for A_RAmincost1/2 (Alg. 6/7 line 5)."""

from __future__ import annotations

import bisect
from collections.abc import Iterable

import numpy as np

from scheduling.algorithms.zhou.spec import EPS, JobSpec, Option
from scheduling.speed import is_edge_cloud, worker_bandwidth

_Lengths = dict[tuple[str, str | None], tuple[list[tuple[int, int]], list[int]]]  # per option: (L_j, N_j), L_j
_LENGTHS: dict[tuple[int, bool], tuple[JobSpec, _Lengths]] = {}


def _all_lengths(spec: JobSpec, rho: float) -> list[tuple[int, int]]:
    """``spec.ps_lengths(rho, tau)`` for an unbounded tau, vectorised (the same float operations)."""
    n = np.arange(spec.chunks, 0, -1)
    lengths = np.maximum(1.0, np.ceil(spec.work / (n * rho) - EPS))
    first = np.concatenate([[True], lengths[1:] != lengths[:-1]])
    kept = lengths[first]
    need = np.maximum(1.0, np.ceil(spec.work / (kept * rho) - EPS))
    return list(zip(kept.astype(int).tolist(), need.astype(int).tolist(), strict=True))


def _rho(spec: JobSpec, opt: Option, workers: int, colocated: bool) -> float:
    """``spec.rho`` without building allocations: the arithmetic of ``speed.rate`` for eq. (1) (PS)
    or eq. (14) (all-reduce) on the two placeholder servers of ``JobSpec._rate``, operation for
    operation (``_per_worker_rate``: 1 / (v + U + comm), n x that, / n). Other jobs (no PS type on
    a PS job, an edge-cloud cluster, rigid or pipeline jobs) go to ``spec.rho``."""
    job, ps_type = spec.job, opt.ps_type
    if job.rigid or is_edge_cloud(spec.cluster) or (not spec.allreduce and (ps_type is None or job.arch != "ps")):
        return spec.rho(opt, workers, colocated)
    v = job.batch_time_for(opt.worker_type)
    b = worker_bandwidth(spec.cluster, job, opt.worker_type)
    if spec.allreduce:
        together = colocated or workers == 1  # one worker is on one server ("x")
        comm = 0.0 if together or b <= 0 else 2.0 * job.gradient_mb / b
        share = (workers - 1) / workers
        step = v + job.ps_update_for("*") * share + comm * share
    else:
        comm = 0.0 if colocated or b <= 0 else 2.0 * job.gradient_mb / b
        assert ps_type is not None
        step = v + job.ps_update_for(ps_type) + comm
    rate: float = workers * (1.0 / step)
    return rate / workers


def _job_lengths(spec: JobSpec, colocated: bool) -> _Lengths:
    """``_all_lengths`` of every option of the job at once, one row per option: the same float
    operations element by element (n x rho, E_j D_j K_j / that, ceil), so the same lists."""
    rhos = np.array([_rho(spec, o, 1, colocated) for o in spec.options])
    n = np.arange(spec.chunks, 0, -1)
    lengths = np.maximum(1.0, np.ceil(spec.work / (n[None, :] * rhos[:, None]) - EPS))
    first = np.ones(lengths.shape, dtype=bool)
    first[:, 1:] = lengths[:, 1:] != lengths[:, :-1]
    need = np.maximum(1.0, np.ceil(spec.work / (lengths * rhos[:, None]) - EPS))
    kept = lengths[first].astype(int).tolist()  # row by row, as _all_lengths keeps them
    needs = need[first].astype(int).tolist()
    ends = np.cumsum(first.sum(axis=1)).tolist()
    out: _Lengths = {}
    lo = 0
    for opt, hi in zip(spec.options, ends, strict=True):
        out[(opt.worker_type, opt.ps_type)] = (list(zip(kept[lo:hi], needs[lo:hi], strict=True)), kept[lo:hi])
        lo = hi
    return out


def _lengths(spec: JobSpec, opt: Option, tau: int, colocated: bool) -> Iterable[tuple[int, int]]:
    """``spec.ps_lengths`` (cached per job, built for all its options at once: lengths grow
    strictly as N_j falls, so the ones up to tau - 1 are a prefix, found by bisection)."""
    key = (id(spec), colocated)
    got = _LENGTHS.get(key)
    if got is None or got[0] is not spec:
        if len(_LENGTHS) > 10_000:
            _LENGTHS.clear()
        got = _LENGTHS[key] = (spec, _job_lengths(spec, colocated))
    pairs, lengths = got[1][(opt.worker_type, opt.ps_type)]
    return pairs[: bisect.bisect_right(lengths, tau - 1)]


_RA_LENGTHS: dict[tuple[int, str, bool], tuple[JobSpec, list[int]]] = {}


def _ra_length(spec: JobSpec, opt: Option, phi: int, colocated: bool) -> int:
    """Alg. 6/7 line 5: L_j for Phi' workers (``spec.duration`` of eq. (14)'s rho), cached per job,
    worker type and placement for every Phi' = 1 .. D_j."""
    key = (id(spec), opt.worker_type, colocated)
    got = _RA_LENGTHS.get(key)
    if got is None or got[0] is not spec:
        if len(_RA_LENGTHS) > 100_000:
            _RA_LENGTHS.clear()
        lengths = [spec.duration(_rho(spec, opt, k, colocated), k) for k in range(1, spec.chunks + 1)]
        got = _RA_LENGTHS[key] = (spec, lengths)
    return got[1][phi - 1]
