"""The reproducible paper figures: each ``Figure`` (paper, setting, algorithms, metric, the
paper's numbers, the frame) and the instance builders its x-axis points use. ``FIGURES`` maps a
figure name to it; ``scheduling.reproduce`` runs and writes them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from scheduling import presets, records, repeat
from scheduling.loaders import parse_cluster, parse_trace
from scheduling.model import Instance
from scheduling.presets._common import PAPER_RESTART_SECONDS

Algorithm = tuple[str, str, Mapping[str, Any]]  # (label, registry name, parameters)
Builder = Callable[[int], Instance]  # seed -> instance


@dataclass(frozen=True)
class Figure:
    name: str  # "zhou-fig2"
    paper: str  # "Zhou et al. (TCC'23)"
    figure: str  # "Fig. 2"
    title: str
    setting: str  # the setting run, and how it differs from the paper's
    metric: str  # a result metric (scheduling.stats.direction knows its direction)
    scale: float  # the metric is shown divided by this
    unit: str
    algorithms: tuple[Algorithm, ...]
    reference: str  # label the others are paired with
    claimed_best: str  # label of the algorithm the paper finds best
    points: tuple[tuple[str, Builder], ...]  # x-axis label -> instance per seed
    x_label: str
    paper_claim: str  # what the paper reports, in words and numbers
    paper_values: Mapping[str, str] = field(default_factory=dict)  # label -> the paper's number
    default_seeds: int = 10
    minutes: float = 1.0  # wall time at the default seeds measured on 2 cores at load average ~9 (a shared machine)
    horizon: int | None = None  # the slot every run ends at; None: when every job is done or rejected
    # The frame every algorithm of the figure runs in (DESIGN section 9): the fixed-size baselines'
    # worker rule, the restart cost, the load; printed with every table.
    frame: str = ""
    # Point label -> the labels of the algorithms run at that point (a category of the paper's, e.g.
    # edge-cloud's with-cloud and edge-only comparisons); a point not named runs every algorithm.
    only: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # Point label -> the label the paper finds best there; a point not named: claimed_best.
    best_at: Mapping[str, str] = field(default_factory=dict)
    # Metrics shown beside ``metric`` (median [95% CI] per algorithm; "utilization.gpu" reads a resource).
    also: tuple[str, ...] = ()

    def algorithms_at(self, point: str) -> tuple[Algorithm, ...]:
        """The algorithms run at ``point``."""
        labels = self.only.get(point)
        return self.algorithms if labels is None else tuple(a for a in self.algorithms if a[0] in labels)

    def claimed_at(self, point: str) -> str:
        return self.best_at.get(point, self.claimed_best)


# ---- instance builders ------------------------------------------------------------------------


def preset_builder(name: str, jobs: int, size: float = 1.0) -> Builder:
    """seed -> the preset's instance with ``jobs`` jobs at cluster scale ``size``."""

    def build(seed: int) -> Instance:
        return repeat.preset_instance(name, jobs, seed, size)

    return build


@contextmanager
def _single_gpu_share(share: float | None) -> Iterator[None]:
    """The asrpt preset with ``share`` of single-GPU job groups (None: the preset's own); the other
    groups keep the preset's distribution of multi-GPU demands (A-SRPT Sec. V-B-2, Fig. 7)."""
    module = presets.asrpt
    original = module.ASRPT_GPU_SHARES
    if share is not None:
        multi = [(g, p) for g, p in original if g > 1]
        total = sum(p for _, p in multi)
        module.ASRPT_GPU_SHARES = ((1, share), *((g, (1 - share) * p / total) for g, p in multi))
    try:
        yield
    finally:
        module.ASRPT_GPU_SHARES = original


def asrpt_window(
    jobs: int,
    seed: int,
    size: float = 1.0,
    share: float | None = None,
    nic_gbps: float | None = None,
    predictor: str = "random-forest",
) -> tuple[Instance, float | None]:
    """A-SRPT's setting (Sec. V-B-2): the asrpt preset with ``jobs`` history jobs then ``jobs``
    window jobs; ``predictor`` fitted on the history predicts the window's iterations (out of
    sample, no look-ahead: DESIGN section 9), and the window alone is simulated with those
    predictions (``predictor=trace``). ``share``: share of single-GPU job groups (Fig. 7);
    ``nic_gbps``: every server's NIC bandwidth (Fig. 8). Returns the instance and the predictor's
    mean absolute error on the window (iterations)."""
    from scheduling.algorithms.asrpt.predictors import predict

    with _single_gpu_share(share):
        files = presets.build("asrpt", jobs=2 * jobs, seed=seed, size=size)
    cluster_doc = json.loads(files.cluster)
    if nic_gbps is not None:
        for server in cluster_doc["servers"]:
            server["nic_bw_gbps"] = nic_gbps
    cluster = parse_cluster(json.dumps(cluster_doc), "cluster.json")
    rows: list[dict[str, Any]] = json.loads(files.trace)
    every = parse_trace(files.trace, cluster, "trace.json", "json")
    half = len(rows) // 2
    pred = predict(every[:half], every, predictor, 1.0, np.random.default_rng(seed))  # fitted on the history half only
    win = [dict(r, predicted_iterations=round(pred.values[r["job_id"]])) for r in rows[half:]]
    instance = Instance(cluster, parse_trace(json.dumps(win), cluster, "trace.json", "json"))
    error = pred.errors(instance.jobs)["mean_abs_error"]
    return instance, None if error is None else float(error)


def edge_only_builder(jobs: int, size: float = 1.0, preset: str = "edge-cloud") -> Builder:
    """seed -> the edge-cloud preset's instance with the cloud taking PSs only (pool "ps"): every
    algorithm's workers train on the edge servers alone (the paper's edge-only category: A_online-E
    beside SRTF and Tiresias-L restricted to the edge)."""

    def build(seed: int) -> Instance:
        files = presets.build(preset, jobs=jobs, seed=seed, size=size)
        doc = json.loads(files.cluster)
        for server in doc["servers"]:
            if server.get("site") == "cloud":
                server["pool"] = "ps"
        cluster = parse_cluster(json.dumps(doc), "cluster.json")
        return Instance(cluster, parse_trace(files.trace, cluster, files.trace_name, "csv"))

    return build


def restart_builder(build: Builder, seconds: float) -> Builder:
    """seed -> ``build``'s instance with the cluster's restart cost set to ``seconds`` (a figure's
    sensitivity row: 0 reproduces the rigid replays of the authors' simulators)."""

    def rebuilt(seed: int) -> Instance:
        inst = build(seed)
        return Instance(records.replace(inst.cluster, restart_seconds=seconds), inst.jobs, history=inst.history)

    return rebuilt


def variant_builder(
    preset: str,
    jobs: int,
    size: float = 1.0,
    load: float | None = None,
    bandwidth: float = 1.0,
    restart_seconds: float | None = None,
) -> Builder:
    """seed -> the preset's instance with ``jobs`` jobs at cluster scale ``size``, offered load
    ``load`` (None: the preset's), every server's bandwidth (resource ``bw``) times ``bandwidth`` and
    the cluster's ``restart_seconds`` replaced by ``restart_seconds`` (None: the preset's): the
    figures' sensitivity points (restart cost 0, load 1, (2i)'s bandwidth) on the same draws."""

    def build(seed: int) -> Instance:
        files = presets.build(preset, jobs=jobs, seed=seed, size=size, load=load)
        doc = json.loads(files.cluster)
        for server in doc["servers"]:
            if "bw" in server["capacity"]:
                server["capacity"]["bw"] = server["capacity"]["bw"] * bandwidth
        if restart_seconds is not None:
            doc["restart_seconds"] = restart_seconds
        cluster = parse_cluster(json.dumps(doc), "cluster.json")
        return Instance(cluster, parse_trace(files.trace, cluster, files.trace_name, "csv"))

    return build


def bandwidth_builder(preset: str, jobs: int, size: float, factor: float) -> Builder:
    """seed -> the Zhou preset's instance with every server's bandwidth (resource ``bw``, Gbps) times
    ``factor``: how hard Zhou et al.'s (2i) binds (the PSs of a job on one server carry the bandwidth
    of its remote workers) is the preset's choice of EC2 network figures, swept here."""
    return variant_builder(preset, jobs, size, bandwidth=factor)


def _asrpt(jobs: int, size: float) -> Builder:
    def build(seed: int) -> Instance:
        return asrpt_window(jobs, seed, size)[0]

    return build


# ---- the figures ------------------------------------------------------------------------------

_ZHOU_ALGOS: tuple[Algorithm, ...] = (
    ("zhou", "zhou", {}),
    ("zhou[start=now]", "zhou", {"start": "now"}),
    ("fifo", "fifo", {}),
    ("drf", "drf", {}),
    ("antman", "antman", {}),
    ("tiresias", "tiresias", {}),
)
OASIS_JOBS = (50, 100, 200, 400)  # OASiS Fig. 3's x-axis
ZHOU_JOBS = 100  # the presets' default: contended for the baselines (docs/results-zhou.md, "Offered load")
_ZHOU_CLAIM = "A_online's total weighted completion time is at least 30% below FIFO, DRF, AntMan and Tiresias"
_ASRPT_ALGOS: tuple[Algorithm, ...] = tuple(
    (a, a, {"predictor": "trace"}) for a in ("asrpt", "spjf", "spwf", "wcs-duration", "wcs-workload", "wcs-subtime")
)


# The shortage measured on seeds 0-9 (bench/zhou_shortage.py; docs/results-zhou.md): fifo's mean wait
# / mean JCT, fifo's GPU utilisation during the arrival period, GPU-slots held / (GPUs x arrival period).
_ZHOU_SHORTAGE = {
    "zhou-ps": "load 4: fifo's mean wait 0.31-0.52 of its mean JCT, GPU utilisation during the arrival period "
    "0.56-0.65 ((2i) binds before the GPUs: 0.70-0.79 with every server's bandwidth x 2, figure zhou-bandwidth), "
    "GPU-slots held 3.6-3.8 x the GPUs over the arrival period; load 1: wait 0.06-0.29 of JCT, utilisation "
    "0.52-0.62, held 0.93-0.98",
    "zhou-allreduce": "load 4: fifo's mean wait 0.43-0.69 of its mean JCT, GPU utilisation during the arrival "
    "period 0.76-0.85, GPU-slots held 4.2-4.4 x the GPUs over the arrival period; load 1: wait 0.08-0.42 of "
    "JCT, utilisation 0.71-0.82, held 1.07-1.12",
}


def _zhou_frame(preset: str) -> str:
    return (
        "fixed-size baselines (fifo, antman, tiresias) with worker_rule=drawn [1, 30] (drf: progressive filling "
        "up to D_j); restart cost 30 s per restart (the preset's, Pollux's simulator) except at the point marked "
        "restart 0; offered load 4 (the preset's default) except at the point marked load 1. Measured for fifo "
        f"over seeds 0-9 (bench/zhou_shortage.py): {_ZHOU_SHORTAGE[preset]}"
    )


def _zhou_points(preset: str) -> tuple[tuple[str, Builder], ...]:
    """The contended default, the same draws with restart cost 0, and at offered load 1."""
    return (
        (f"{ZHOU_JOBS} jobs, load 4, restart 30 s", preset_builder(preset, ZHOU_JOBS)),
        (f"{ZHOU_JOBS} jobs, load 4, restart 0", variant_builder(preset, ZHOU_JOBS, restart_seconds=0.0)),
        (f"{ZHOU_JOBS} jobs, load 1, restart 30 s", variant_builder(preset, ZHOU_JOBS, load=1.0)),
    )


def _zhou_figure(name: str, figure: str, architecture: str, preset: str, minutes: float, note: str = "") -> Figure:
    """Zhou et al.'s main claim on one architecture (Figs. 2 and 5 differ only by it)."""
    title = "PS architecture" if architecture == "PS" else "Ring-AllReduce architecture"
    return Figure(
        name=name,
        paper="Zhou et al. (TCC'23)",
        figure=figure,
        title=f"Total weighted completion time, {title}",
        setting=f"preset {preset}, {ZHOU_JOBS} jobs, 150 servers, uniform arrivals scaled onto the window of the "
        f"offered load (the preset's default 4, and 1){note}; the default's draws also with restart cost 0 (a "
        "sensitivity point); zhou[start=now] runs each round's schedule from tau_i with prices from the committed "
        "load (a named option)",
        metric="total_weighted_completion",
        scale=1e6,
        unit="10^6 weight x slots",
        algorithms=_ZHOU_ALGOS,
        reference="zhou",
        claimed_best="zhou",
        points=_zhou_points(preset),
        x_label="setting",
        paper_claim=f"{_ZHOU_CLAIM} ({architecture}).",
        paper_values={"zhou": "lowest", "fifo": ">= 1.3 x zhou", "drf": ">= 1.3 x zhou"},
        minutes=minutes,
        frame=_zhou_frame(preset),
    )


def _edge_figure(name: str, restart: float, rule: str = "drawn") -> Figure:
    """The edge-cloud paper's two categories (Figs. 7, 9, 11) at restart cost ``restart`` seconds, every
    fixed-size baseline at worker rule ``rule`` (``drawn``: the preset's; ``chunks``: the equal-width
    frame, D_j workers per job, as wide as A_online may go)."""
    cost = (
        "restart cost 30 s per restart (the preset's, Pollux's simulator constant; A_online makes up the "
        "progress a restart costs its plan: docs/algorithms-edge.md, 'Restart cost')"
        if restart
        else "restart cost 0 (sensitivity row: the paper's and the former preset's rigid replay)"
    )

    def at(build: Builder) -> Builder:
        return build if restart == PAPER_RESTART_SECONDS else restart_builder(build, restart)

    fixed: dict[str, Any] = {} if rule == "drawn" else {"worker_rule": rule}
    width = (
        "worker_rule=drawn, [1, 30] workers per job capped at D_j (the simulator paragraph's [10] [11])"
        if rule == "drawn"
        else f"worker_rule={rule} (sensitivity row: one worker per data chunk, D_j, as wide as A_online may go)"
    )

    return Figure(
        name=name,
        paper="Edge-cloud paper",
        figure="Figs. 7, 9, 11",
        title="Total JCT (JCT rate = total JCT / SRTF's), with cloud and on the edge alone"
        + ("" if restart else ", restart cost 0")
        + ("" if rule == "drawn" else f", baselines at worker_rule={rule}"),
        setting="preset edge-cloud, 300 jobs, 100 edge servers and an unlimited cloud (the paper's setting); "
        "the edge-only category runs on the same instance with the cloud taking no workers (PSs only), so "
        "A_online-E, srtf and tiresias-l train on the edge servers alone",
        metric="total_jct",
        scale=1.0,
        unit="slots",
        algorithms=(
            ("edge-cloud", "edge-cloud", {}),
            ("edge-only", "edge-cloud", {"edge_only": True}),
            ("srtf", "srtf", fixed),
            ("tiresias-l", "tiresias-l", fixed),
            ("batchsche", "batchsche", fixed),
        ),
        reference="srtf",
        claimed_best="edge-cloud",
        points=(
            ("with cloud", at(preset_builder("edge-cloud", 300))),
            ("edge only", at(edge_only_builder(300))),
        ),
        x_label="category",
        paper_claim="A_online has the lowest total JCT, up to 30-50% below the baselines; A_online-E is "
        "below SRTF and Tiresias-L (Fig. 7). Fig. 9: A_online preempts more often than SRTF, A_online-E "
        "more than A_online. Fig. 11: A_online's and A_online-E's utilisation reaches 100%, and A_online's "
        "makespan is about 0.76x SRTF's and 0.74x Tiresias-L's.",
        paper_values={
            "edge-cloud": "lowest; up to 30-50% below the baselines; makespan 0.76 x srtf",
            "edge-only": "below srtf and tiresias-l",
            "srtf": "JCT rate 1",
        },
        minutes=12.0,
        frame=f"every fixed-size baseline (srtf, tiresias-l, batchsche) with {width}; every algorithm waits for "
        f"a job's data to reach the servers its workers use (r_j + Delta_js); {cost}; offered load 1 job per slot (the "
        "preset's Poisson arrivals)",
        only={
            "with cloud": ("edge-cloud", "srtf", "tiresias-l", "batchsche"),
            "edge only": ("edge-only", "srtf", "tiresias-l"),
        },
        best_at={"edge only": "edge-only"},
        also=("completed", "makespan", "utilization.gpu", "preemptions", "restarts"),
    )


def _edge_figures() -> tuple[Figure, ...]:
    return (
        _edge_figure("edge-fig7", PAPER_RESTART_SECONDS),
        _edge_figure("edge-fig7-restart0", 0.0),
        _edge_figure("edge-fig7-chunks", PAPER_RESTART_SECONDS, "chunks"),
    )


FIGURES: dict[str, Figure] = {
    f.name: f
    for f in (
        _zhou_figure(
            "zhou-fig2",
            "Fig. 2",
            "PS",
            "zhou-ps",
            15.0,  # 3 points x the 246 s one point took at load 6-9 (22 min in 6 processes at load 17-30)
            " (the paper's job count did not survive extraction: docs/results-zhou.md)",
        ),
        _zhou_figure("zhou-fig5", "Fig. 5", "all-reduce", "zhou-allreduce", 5.0),  # 3 x 95 s (43 min at load 10-30)
        Figure(
            name="zhou-bandwidth",
            paper="Zhou et al. (TCC'23)",
            figure="Figs. 2, 5 (server bandwidth swept)",
            title="Total weighted completion time vs the servers' bandwidth, PS architecture",
            setting=f"preset zhou-ps at its contended default ({ZHOU_JOBS} jobs, 150 servers, load 4, restart 30 s), "
            "every server's bandwidth x 0.5, 1 (the EC2 figures) and 2: how hard (2i) binds (a job's PSs on a "
            "server carry the bandwidth of its remote workers) is the preset's choice of network figures; the "
            "paper does not vary it",
            metric="total_weighted_completion",
            scale=1e6,
            unit="10^6 weight x slots",
            algorithms=(
                ("zhou", "zhou", {}),
                ("zhou[start=now]", "zhou", {"start": "now"}),
                ("fifo", "fifo", {}),
                ("tiresias", "tiresias", {}),
            ),
            reference="zhou",
            claimed_best="zhou",
            points=tuple((f"bw x {f:g}", variant_builder("zhou-ps", ZHOU_JOBS, bandwidth=f)) for f in (0.5, 1.0, 2.0)),
            x_label="server bandwidth",
            paper_claim=f"{_ZHOU_CLAIM} (PS); the paper does not vary the servers' bandwidth.",
            paper_values={"zhou": "lowest"},
            minutes=12.0,
            frame="fixed-size baselines with worker_rule=drawn [1, 30]; restart cost 30 s; offered load 4 computed "
            "on the unscaled cluster (the bandwidth factor changes no arrival); fifo's GPU utilisation during the "
            "arrival period by factor: docs/results-zhou.md",
            also=("utilization.gpu", "utilization.bw"),
        ),
        Figure(
            name="zhou-fig8",
            paper="Zhou et al. (TCC'23)",
            figure="Fig. 8",
            title="Total scheduled weight of the offline batch problem (7)",
            setting="preset zhou-batch (the zhou-ps jobs of the seed, all at slot 0), 40 and 60 jobs, tau = 64; "
            "zhou-maxweight in arrival order (its default) and with order=weight (largest weight first, a named "
            "option: the paper does not state the loop order)",
            metric="completed_weight",
            scale=1.0,
            unit="weight",
            algorithms=(
                ("zhou-maxweight", "zhou-maxweight", {"tau": 64}),
                ("zhou-maxweight[weight]", "zhou-maxweight", {"tau": 64, "order": "weight"}),
                ("jain-greedy", "jain-greedy", {"tau": 64}),
            ),
            reference="jain-greedy",
            claimed_best="zhou-maxweight",
            points=(("40 jobs", preset_builder("zhou-batch", 40)), ("60 jobs", preset_builder("zhou-batch", 60))),
            x_label="jobs",
            paper_claim="A_maxweight schedules more total weight than Jain et al.'s greedy algorithm.",
            paper_values={"zhou-maxweight": "more than jain-greedy"},
            minutes=2.0,
        ),
        Figure(
            name="oasis-fig3",
            paper="OASiS (INFOCOM'18)",
            figure="Fig. 3",
            title="Total utility vs number of jobs",
            setting="preset oasis (50 worker + 50 PS servers, T = 300, the paper's setting) with 50, 100 and 200 "
            "jobs; the paper's 400 jobs as their load, 8 jobs per server, at half the scale (200 jobs on 25 + 25 "
            "servers, size 0.5: a 400-job run of oasis and dorm takes minutes on the shared 2-core machine); the "
            "100 jobs' draws also with restart cost 0 (a sensitivity point); oasis with its online default "
            "bounds=arrived (U/L over the jobs arrived so far)",
            metric="total_utility",
            scale=1.0,
            unit="utility",
            algorithms=(
                ("oasis", "oasis", {}),
                ("fifo", "fifo", {}),
                # OASiS' DRF re-divides every job's workers at each event (its Sec. V baseline), not the
                # fixed-once-started DRF of record of Zhou et al. (docs/algorithms-oasis.md)
                ("drf", "drf", {"fixed": False}),
                ("rrh", "rrh", {}),
                ("dorm", "dorm", {}),
            ),
            reference="oasis",
            claimed_best="oasis",
            points=(
                *((f"{n} jobs", preset_builder("oasis", n)) for n in OASIS_JOBS[:-1]),
                ("400 jobs' load at size 0.5", preset_builder("oasis", OASIS_JOBS[-1] // 2, 0.5)),
                ("100 jobs, restart 0", variant_builder("oasis", 100, restart_seconds=0.0)),
            ),
            x_label="jobs",
            paper_claim="OASiS achieves the highest total utility, well above FIFO, DRF, RRH and Dorm, "
            "at every job count (50-400).",
            paper_values={"oasis": "highest"},
            minutes=40.0,  # 31 min in 8 processes at load 17-30; the points: 1, 4, 4-5, 4-5, 4 min a seed there
            frame="fixed-size baselines (fifo, rrh) with worker_rule=drawn [1, 30] (Sec. V-A); drf and dorm "
            "re-divide at events; restart cost 30 s per restart (Pollux's simulator constant, as the Zhou presets) "
            "except at the point marked restart 0; oasis plans each job's workload to cover its own plan's "
            "restarts (docs/algorithms-oasis.md); load = the job count in T = 300 slots; utility counts completed "
            "jobs only, so completed counts differ by design (a rejected or late job earns little or nothing)",
            also=("completed", "admitted", "utilization.gpu"),
        ),
        *_edge_figures(),
        Figure(
            name="asrpt-fig6",
            paper="A-SRPT (Luo et al.)",
            figure="Fig. 6",
            title="Total JCT vs number of jobs",
            setting="preset asrpt at size 0.5 (125 servers x 8 GPUs instead of 250), windows of 250 and 500 jobs "
            "after a history of as many (the paper: 37,500-150,000 jobs); random-forest predictions",
            metric="total_jct",
            scale=1.0,
            unit="slots",
            algorithms=_ASRPT_ALGOS,
            reference="asrpt",
            claimed_best="asrpt",
            points=(("250 jobs", _asrpt(250, 0.5)), ("500 jobs", _asrpt(500, 0.5))),
            x_label="window jobs",
            paper_claim="A-SRPT's total JCT is 31-91% below every baseline.",
            paper_values={"asrpt": "31-91% below every baseline"},
            minutes=1.0,
            frame="every algorithm on each job's rigid GPUs (its pipeline stages x replicas; no worker rule: "
            "nothing is elastic); restart cost 30 s (the preset's, Pollux's simulator; no algorithm of the figure "
            "preempts, so none is charged and restart 0 gives the same schedules: the restarts column); offered "
            "load 0.8 of the GPUs over the arrival window (the preset's); predictions fitted on a separate "
            "history of as many jobs (no look-ahead)",
            also=("completed", "preemptions", "restarts"),
        ),
    )
}


def listing() -> list[dict[str, Any]]:
    """The reproducible figures, for ``reproduce --list`` and the dashboard."""
    return [
        {
            "name": f.name,
            "paper": f.paper,
            "figure": f.figure,
            "title": f.title,
            "metric": f.metric,
            "algorithms": [label for label, _, _ in f.algorithms],
            "default_seeds": f.default_seeds,
            "minutes": f.minutes,
            "setting": f.setting,
        }
        for f in FIGURES.values()
    ]
