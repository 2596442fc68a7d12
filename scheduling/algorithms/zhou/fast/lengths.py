"""Window lengths of the numpy path: the (L_j, N_j) lists of A_mincost1/2 (``spec.ps_lengths``,
vectorised and cached per job) and L_j per Phi' for A_RAmincost1/2 (Alg. 6/7 line 5)."""

from __future__ import annotations

import bisect
from collections.abc import Iterable

import numpy as np

from scheduling.algorithms.zhou.spec import EPS, JobSpec, Option

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


def _job_lengths(spec: JobSpec, colocated: bool) -> _Lengths:
    """``_all_lengths`` of every option of the job at once, one row per option: the same float
    operations element by element (n x rho, E_j D_j K_j / that, ceil), so the same lists."""
    rhos = np.array([spec.rho(o, 1, colocated=colocated) for o in spec.options])
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
        lengths = [spec.duration(spec.rho(opt, k, colocated=colocated), k) for k in range(1, spec.chunks + 1)]
        got = _RA_LENGTHS[key] = (spec, lengths)
    return got[1][phi - 1]
