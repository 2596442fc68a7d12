"""The Django implementation of ``workers.runs.RunStore``: how a task reads and records a run.

Every state change is one conditional UPDATE (queued -> running -> done/failed), so a redelivered
task does not run twice and a late result cannot overwrite a run already declared lost.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping
from typing import Any

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.utils import timezone

from webapp.models import Run
from workers.runs import RunInput

ERROR_CHARS = 4000  # a failure message longer than this is cut (the validator lists at most 5 problems)


def encode_result(result: Mapping[str, Any]) -> bytes:
    return gzip.compress(json.dumps(result, separators=(",", ":")).encode("utf-8"), compresslevel=6)


def decode_result(data: bytes) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(gzip.decompress(data))
    return doc


class DjangoRunStore:
    def claim(self, run_id: int) -> RunInput | None:
        claimed = Run.objects.filter(pk=run_id, status=Run.Status.QUEUED).update(
            status=Run.Status.RUNNING, started=timezone.now()
        )
        if not claimed:
            return None
        run = Run.objects.select_related("experiment").get(pk=run_id)
        exp = run.experiment
        return RunInput(
            cluster_name=exp.cluster_name,
            cluster_text=exp.cluster_text,
            trace_name=exp.trace_name,
            trace_text=exp.trace_text,
            algorithm=run.algorithm,
            params=run.params,
            seed=run.seed,
        )

    def finish(self, run_id: int, result: Mapping[str, Any]) -> None:
        experiment_id = Run.objects.values_list("experiment_id", flat=True).get(pk=run_id)
        name = default_storage.save(f"results/{experiment_id}/run-{run_id}.json.gz", ContentFile(encode_result(result)))
        updated = Run.objects.filter(pk=run_id, status=Run.Status.RUNNING).update(
            status=Run.Status.DONE, metrics=result["metrics"], result=name, finished=timezone.now()
        )
        if not updated:  # declared lost meanwhile: keep the recorded failure, drop the late result
            default_storage.delete(name)

    def fail(self, run_id: int, message: str) -> None:
        Run.objects.filter(pk=run_id, status__in=[Run.Status.QUEUED, Run.Status.RUNNING]).update(
            status=Run.Status.FAILED, error=message[:ERROR_CHARS], finished=timezone.now()
        )
