"""Each job's fixed configuration for the fixed-size baselines (fifo, srtf, tiresias, drf, ...):
the worker rules and ``FixedConfigs``."""

from __future__ import annotations

from collections.abc import Mapping

from scheduling.algorithms.common import Config, ideal_config, place
from scheduling.capacity import Ledger
from scheduling.model import Cluster, Instance, Job
from scheduling.speed import demand_of

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)

if TYPE_CHECKING:
    import numpy as np


WORKER_RULES = ("drawn", "most", "chunks", "request")
"""How a fixed-size baseline chooses an elastic job's worker count (parameter ``worker_rule``, one
value for every fixed-size baseline of a comparison, DESIGN section 9): ``drawn`` uniformly in
[lo, hi] per job (Zhou et al. Sec. 7 and OASiS Sec. V-A: "fixed to a number within [1, 30]");
``most`` hi; ``chunks`` D_j, one worker per data chunk (the most an elastic algorithm may use);
``request`` the trace's ``gpu_request`` where it states one (else drawn). Each is capped at D_j
and at what an empty cluster holds."""


class FixedConfigs:
    """One configuration per job, fixed for its lifetime (the papers' FIFO/DRF setups).

    Rigid jobs get their requested GPUs. Elastic jobs get the ideal-case worker/PS types and a
    worker count by ``rule`` (WORKER_RULES), capped by the job's worker limit D_j and by what an
    empty cluster can hold. A count is drawn for every job whatever the rule, so the run's
    generator is left in the same state.
    """

    def __init__(
        self, instance: Instance, rng: np.random.Generator, lo: int, hi: int, ps: int, rule: str = "drawn"
    ) -> None:
        if rule not in WORKER_RULES:
            raise ValueError(f"unknown worker rule {rule!r}")
        self.cluster = instance.cluster
        self.rule = rule
        self.configs: dict[str, Config] = {}
        # A rigid job's configuration is its GPUs: a trace of rigid jobs only needs no draw (and so
        # no numpy, whose import alone takes longer than a short run of fifo).
        draw = not all(job.rigid for job in instance.jobs)
        for job in instance.jobs:  # drawn in trace order so that the same seed gives the same counts
            workers = int(rng.integers(lo, hi + 1)) if draw else 1  # drawn for every job: the others' draws never move
            if rule == "request" and job.gpu_request is not None:
                workers = job.gpu_request
            elif rule == "most":
                workers = hi
            elif rule == "chunks":
                workers = job.max_workers()
            self.configs[job.job_id] = self._feasible(job, ideal_config(self.cluster, job, workers, ps))

    def _feasible(self, job: Job, cfg: Config) -> Config:
        if cfg.workers > 32 and place(Ledger(self.cluster), job, cfg) is None:
            # Many workers (worker_rule=chunks): the largest count an empty cluster holds, by
            # bisection (the placeable counts are downward closed, as common._most_on_empty assumes).
            lo, hi = 1, cfg.workers
            while hi - lo > 1:
                mid = (lo + hi) // 2
                lo, hi = (mid, hi) if place(Ledger(self.cluster), job, _sized(cfg, mid)) is not None else (lo, mid)
            return _sized(cfg, lo)
        while cfg.workers > 1 and place(Ledger(self.cluster), job, cfg) is None:
            cfg = Config(cfg.worker_type, cfg.workers - 1, cfg.ps_type, cfg.ps)
        return cfg

    def __getitem__(self, job_id: str) -> Config:
        return self.configs[job_id]


def _sized(cfg: Config, workers: int) -> Config:
    return Config(cfg.worker_type, workers, cfg.ps_type, cfg.ps)


Configs = FixedConfigs | Mapping[str, Config]
"""Each job's fixed configuration by job id."""


def worker_gpus(cluster: Cluster, job: Job, cfg: Config) -> float:
    """GPUs the workers of ``cfg`` need: a job cannot fit while the servers accepting workers have
    fewer free GPUs than this."""
    return (demand_of(cluster, job, "worker", cfg.worker_type) or {}).get("gpu", 0.0) * cfg.workers
