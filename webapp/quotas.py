"""Per-user limits on what one account may ask of the shared workers (docs/security.md, "Quotas").

Checked when an experiment is created (form, API, preset button, rerun, a reproduction launched as
an experiment) and when a reproduction is started: a reproduction counts as an experiment and its
cases as runs. Operators' own experiments (no owner: the examples) are not limited. Each limit
comes from the environment.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from webapp import reproduction_state
from webapp.models import Experiment, Run


class QuotaExceeded(Exception):
    """A user's request would pass one of their limits; the message says which and what to do."""


def check_new_experiment(owner: Any, new_runs: int, what: str = "this experiment") -> None:
    """QuotaExceeded if ``owner`` may not create an experiment (``what``) of ``new_runs`` runs now."""
    if owner is None or not getattr(owner, "pk", None):
        return
    hour_ago = timezone.now() - timedelta(hours=1)
    started, cases_left = reproduction_state.usage(owner.pk, hour_ago.timestamp())
    per_hour = settings.MLSCHED_QUOTA_EXPERIMENTS_PER_HOUR
    recent = Experiment.objects.filter(owner=owner.pk, created__gte=hour_ago).count() + started
    if recent >= per_hour:
        raise QuotaExceeded(
            f"You created {recent} experiments in the last hour, the most one account may: try again later."
        )
    active_limit = settings.MLSCHED_QUOTA_ACTIVE_RUNS
    active = Run.objects.filter(experiment__owner=owner.pk, status__in=(Run.Status.QUEUED, Run.Status.RUNNING)).count()
    active += cases_left
    if active + new_runs > active_limit:
        raise QuotaExceeded(
            f"You have {active} runs queued or running and {what} adds {new_runs}: one account may "
            f"have at most {active_limit} at once. Wait for some to finish, or cancel some."
        )


def preset_jobs_limit() -> int:
    """Most jobs a preset may have when it is generated inside a web request."""
    return int(settings.MLSCHED_QUOTA_WEB_PRESET_JOBS)


def preset_too_large(jobs: int, instead: str) -> str | None:
    """Why a preset of ``jobs`` jobs is not generated in a web request (``instead``: what to do
    rather), or None."""
    most = preset_jobs_limit()
    return f"at most {most:,} jobs are generated here: {instead}" if jobs > most else None
