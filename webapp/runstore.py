"""The Django implementation of ``workers.runs.RunStore``: how a task reads and records a run.

Every state change is one conditional UPDATE (queued -> running -> done/failed/cancelled), so a
redelivered task does not run twice; the first complete result of a run wins (``finish``), also
over a run declared lost meanwhile, and never replaces another worker's result or a cancellation.
Database connection errors become ``TransientStoreError`` (the task retries those).
"""

from __future__ import annotations

import gzip
import json
import logging
import os
from collections.abc import Callable, Mapping
from functools import wraps
from typing import Any, TypeVar

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import connection
from django.db.models import F, Q, QuerySet
from django.db.utils import InterfaceError, OperationalError
from django.utils import timezone

from scheduling import registry
from scheduling.errors import InputError
from webapp import signals
from webapp.adapted import adaptation
from webapp.chartindex import chart_index, chart_index_name
from webapp.models import Run, WorkerProblem
from webapp.repetitions import history_of, repetition_inputs
from workers.runs import RunInput, TransientStoreError

logger = logging.getLogger(__name__)

ERROR_CHARS = 4000  # a failure message longer than this is cut (the validator lists at most 5 problems)

T = TypeVar("T")


def encode_result(result: Mapping[str, Any]) -> bytes:
    return gzip.compress(json.dumps(result, separators=(",", ":")).encode("utf-8"), compresslevel=6)


def decode_result(data: bytes) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(gzip.decompress(data))
    return doc


def gantt_index(result: Mapping[str, Any]) -> dict[str, Any]:
    """What the Gantt chart needs of a result, as columns of small integers: parsing it is several
    times faster than parsing the whole document (1.45 s for 101k placements), which also holds
    jobs, progress segments and per-placement demand dicts."""
    servers = [s["id"] for s in result["servers"]]
    sidx = {sid: i for i, sid in enumerate(servers)}
    names: dict[str, int] = {}  # job ids, roles and types share one string table
    cols: dict[str, list[Any]] = {k: [] for k in ("job", "server", "role", "type", "count", "start", "end", "gpu")}
    for p in result["placements"]:
        cols["job"].append(names.setdefault(p["job_id"], len(names)))
        cols["server"].append(sidx[p["server"]])
        cols["role"].append(names.setdefault(p["role"], len(names)))
        cols["type"].append(names.setdefault(p["type"], len(names)))
        cols["count"].append(p["count"])
        cols["start"].append(p["start"])
        cols["end"].append(p["end"])
        cols["gpu"].append(p.get("demand", {}).get("gpu"))  # None: the placement uses no GPU resource
    # Restart periods (DESIGN section 9), drawn over the bars they hold: (job, start, end) columns.
    restarts: dict[str, list[int]] = {"job": [], "start": [], "end": []}
    for r in result.get("restarts") or ():
        restarts["job"].append(names.setdefault(r["job_id"], len(names)))
        restarts["start"].append(r["start"])
        restarts["end"].append(r["end"])
    # A status replay's ended jobs (scheduling.status_replay), marked where their bars end.
    ended = [{"job_id": j["job_id"], "outcome": j["outcome"], "ended": j["ended"]}
             for j in result.get("jobs") or () if j.get("outcome") is not None]  # fmt: skip
    return {"schema": "mlsched.gantt/1", "slot_seconds": result.get("slot_seconds"), "servers": servers,
            "names": list(names), "placements": cols, "restarts": restarts,
            "failures": list(result.get("failures") or ()), "ended": ended}  # fmt: skip


def gantt_doc(index: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a result document ``charts.gantt`` reads, rebuilt from ``gantt_index``."""
    names, c = index["names"], index["placements"]
    servers = index["servers"]
    placements = [
        {"job_id": names[j], "server": servers[s], "role": names[r], "type": names[t], "count": n, "start": a,
         "end": b, "demand": {} if g is None else {"gpu": g}}
        for j, s, r, t, n, a, b, g in zip(
            c["job"], c["server"], c["role"], c["type"], c["count"], c["start"], c["end"], c["gpu"], strict=True
        )
    ]  # fmt: skip
    r = index.get("restarts") or {"job": [], "start": [], "end": []}  # absent in indexes written before restarts
    restarts = [
        {"job_id": names[j], "start": a, "end": b} for j, a, b in zip(r["job"], r["start"], r["end"], strict=True)
    ]
    return {
        "slot_seconds": index["slot_seconds"],
        "servers": [{"id": s} for s in servers],
        "placements": placements,
        "restarts": restarts,
        "failures": index.get("failures") or [],  # absent in indexes written before failures and replays
        "jobs": index.get("ended") or [],  # only the ended jobs: the rest draw no marker
    }


def index_name(result_name: str) -> str:
    return result_name.removesuffix(".json.gz") + ".gantt.json.gz"


def transient(method: Callable[..., T]) -> Callable[..., T]:
    @wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        try:
            return method(*args, **kwargs)
        except (OperationalError, InterfaceError) as exc:
            if not connection.in_atomic_block:
                connection.close()  # a broken connection is not reused by the retry
            raise TransientStoreError(str(exc)) from exc

    return wrapper


def _save(name: str, data: bytes) -> str:
    """Store ``data`` as ``name`` (or a free variant of it); a write that fails half-way (disk full)
    leaves no partial file."""
    name = default_storage.get_available_name(name)
    try:
        saved: str = default_storage.save(name, ContentFile(data))
    except BaseException:
        _delete(name)
        raise
    return saved


def _delete(*names: str) -> None:
    for name in names:
        if default_storage.exists(name):
            default_storage.delete(name)


LOST_PREFIX = "lost: "  # the start of the error of a run recover_runs failed as lost (webapp.recovery)


def completable(runs: QuerySet[Run]) -> QuerySet[Run]:
    """Those of ``runs`` a complete result may still finish: running (whichever worker claimed it
    last), queued again after its worker was declared lost (the claim then skips its message), or
    failed as lost; not a run the user cancelled or another worker finished."""
    return runs.filter(
        Q(status__in=[Run.Status.RUNNING, Run.Status.QUEUED])
        | Q(status=Run.Status.FAILED, error__startswith=LOST_PREFIX)
    )


def _delete_leftovers(experiment_id: int, run_id: int, keep: set[str]) -> None:
    """Delete the files an attempt killed while storing left of this run (a worker killed with
    SIGKILL cannot clean up): every ``run-<id>.*`` and ``run-<id>_*`` in the experiment's folder but
    the recorded ones. A storage that cannot list a folder keeps them."""
    folder = f"results/{experiment_id}"
    try:
        files = default_storage.listdir(folder)[1]
    except (NotImplementedError, OSError):
        return
    for file in files:
        path = f"{folder}/{file}"
        if file.startswith((f"run-{run_id}.", f"run-{run_id}_")) and path not in keep:
            _delete(path)


class DjangoRunStore:
    @transient
    def claim(self, run_id: int) -> RunInput | None:
        now = timezone.now()
        claimed = Run.objects.filter(pk=run_id, status=Run.Status.QUEUED, cancel_requested=False).update(
            status=Run.Status.RUNNING, started=now, heartbeat=now, progress=0.0, attempts=F("attempts") + 1
        )
        if not claimed:
            return None
        run = Run.objects.select_related("experiment").get(pk=run_id)
        exp = run.experiment
        cluster_text, trace_name, trace_text = exp.cluster_text, exp.trace_name, exp.trace_text
        if run.trace_seed is not None:  # a repetition over a preset's trace seeds: its own trace
            try:
                cluster_text, trace_name, trace_text = repetition_inputs(exp, run.trace_seed)
            except InputError as exc:  # the form built the preset with one seed only
                self.fail(run_id, f"preset {exp.preset} with trace seed {run.trace_seed}: {exc}")
                return None
        history = None
        # (an algorithm no longer registered learns from none: its simulation fails with the
        # registry's message, as any run of it does)
        if registry.learns_from_history(run.algorithm):
            try:
                history = history_of(exp, run.trace_seed)
            except InputError as exc:
                self.fail(run_id, f"preset {exp.preset}: its history: {exc}")
                return None
        history_name, history_text = history if history is not None else (None, None)
        return RunInput(
            cluster_name=exp.cluster_name,
            cluster_text=cluster_text,
            trace_name=trace_name,
            trace_text=trace_text,
            history_name=history_name,
            history_text=history_text,
            algorithm=run.algorithm,
            params=run.params,
            seed=run.seed,
            windows=exp.repetition.get("cut_by") if run.window is not None else None,
            window=run.repetition if run.window is not None else None,
            adapt=adaptation(exp),
        )

    @transient
    def beat(self, run_id: int, progress: float) -> str | None:
        alive = Run.objects.filter(pk=run_id, status=Run.Status.RUNNING)
        if not alive.update(heartbeat=timezone.now(), progress=min(max(progress, 0.0), 1.0)):
            return "gone"
        return "cancel" if alive.filter(cancel_requested=True).exists() else None

    @transient
    def finish(self, run_id: int, result: Mapping[str, Any]) -> str:
        """Write the result and its Gantt and chart indexes, then mark the run done if no other
        outcome wins (``workers.runs.RunStore.finish``). If anything fails, or the run holds another
        outcome, no file stays behind."""
        experiment_id = Run.objects.values_list("experiment_id", flat=True).filter(pk=run_id).first()
        if experiment_id is None:
            return "the run was deleted"
        name = _save(f"results/{experiment_id}/run-{run_id}.json.gz", encode_result(result))
        try:
            _save(index_name(name), encode_result(gantt_index(result)))
            _save(chart_index_name(name), encode_result(chart_index(result)))
            updated = completable(Run.objects.filter(pk=run_id)).update(
                status=Run.Status.DONE,
                metrics=result["metrics"],
                code=result.get("code"),
                result=name,
                finished=timezone.now(),
                progress=1.0,
                error="",
            )
        except BaseException:
            _delete(name, index_name(name), chart_index_name(name))
            raise
        if updated:
            _delete_leftovers(experiment_id, run_id, {name, index_name(name), chart_index_name(name)})
            try:
                # The last run: the tabs' figures drawn here, not on a visit (webapp/pages.py, warm).
                signals.experiment_finished.send(sender=None, experiment_id=experiment_id)
            except Exception:
                logger.exception("experiment %s: its figures could not be drawn in advance", experiment_id)
            return "done"
        _delete(name, index_name(name), chart_index_name(name))
        holds = Run.objects.filter(pk=run_id).values_list("status", "error").first()
        if holds is None:
            return "the run was deleted"
        status, error = holds
        return f"the run is {status} already" + (f" ({error})" if error else "")

    @transient
    def fail(self, run_id: int, message: str) -> None:
        Run.objects.filter(pk=run_id, status__in=[Run.Status.QUEUED, Run.Status.RUNNING]).update(
            status=Run.Status.FAILED, error=message[:ERROR_CHARS], finished=timezone.now()
        )

    @transient
    def give_back(self, run_id: int, note: str) -> None:
        Run.objects.filter(pk=run_id, status=Run.Status.RUNNING).update(
            status=Run.Status.QUEUED, dispatched=False, progress=0.0, error=note[:ERROR_CHARS]
        )

    @transient
    def cannot_store(self, worker: str, problem: str) -> None:
        WorkerProblem.objects.update_or_create(worker=worker[:255], defaults={"problem": problem[:ERROR_CHARS]})

    @transient
    def probe(self, worker: str) -> None:
        name = _save(f"results/probe-{os.getpid()}.txt", b"a worker checks that it can store results\n")
        _delete(name)
        WorkerProblem.objects.filter(worker=worker[:255]).delete()

    @transient
    def cancelled(self, run_id: int, message: str) -> None:
        Run.objects.filter(pk=run_id, status__in=[Run.Status.QUEUED, Run.Status.RUNNING]).update(
            status=Run.Status.CANCELLED, error=message[:ERROR_CHARS], finished=timezone.now()
        )

    def release(self) -> None:
        connection.close()
