"""Per-user limits on what one account may ask of the shared workers (docs/security.md, "Quotas").

Checked when an experiment is created (form, API, preset button, rerun); operators' own
experiments (no owner: the examples) are not limited. Each limit comes from the environment.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from webapp.models import Experiment, Run


class QuotaExceeded(Exception):
    """A user's request would pass one of their limits; the message says which and what to do."""


def check_new_experiment(owner: Any, new_runs: int) -> None:
    """QuotaExceeded if ``owner`` may not create an experiment of ``new_runs`` runs now."""
    if owner is None or not getattr(owner, "pk", None):
        return
    hour_ago = timezone.now() - timedelta(hours=1)
    per_hour = settings.MLSCHED_QUOTA_EXPERIMENTS_PER_HOUR
    recent = Experiment.objects.filter(owner=owner.pk, created__gte=hour_ago).count()
    if recent >= per_hour:
        raise QuotaExceeded(
            f"You created {recent} experiments in the last hour, the most one account may: try again later."
        )
    active_limit = settings.MLSCHED_QUOTA_ACTIVE_RUNS
    active = Run.objects.filter(experiment__owner=owner.pk, status__in=(Run.Status.QUEUED, Run.Status.RUNNING)).count()
    if active + new_runs > active_limit:
        raise QuotaExceeded(
            f"You have {active} runs queued or running and this experiment adds {new_runs}: one account may "
            f"have at most {active_limit} at once. Wait for some to finish, or cancel some."
        )


def preset_jobs_limit() -> int:
    """Most jobs a preset may have when it is generated inside a web request."""
    return int(settings.MLSCHED_QUOTA_WEB_PRESET_JOBS)
