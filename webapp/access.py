"""Access helpers: the one way views fetch objects.

Every object is fetched through a helper that takes the user, so that another user's experiment,
run or dataset is a 404 like a missing one (share links: ``webapp.sharing``)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Q, QuerySet
from django.http import Http404
from django.shortcuts import get_object_or_404
from django.utils import timezone

from webapp.labels import run_badges
from webapp.models import ApiToken, Dataset, Experiment, Run, key_digest

User = AbstractBaseUser | AnonymousUser


def visible_experiments(user: Any) -> QuerySet[Experiment]:
    """The user's experiments and the shared examples (no owner)."""
    return Experiment.objects.filter(Q(owner=user.pk) | Q(owner__isnull=True))


def get_experiment(pk: int, user: Any, *, write: bool = False) -> Experiment:
    """The experiment with its runs; 404 unless the user may see it (``write``: may change it,
    i.e. owns it, or is staff for the examples). Lost-run recovery never runs on a request: a hung
    broker would hold every page (``manage.py recover_runs --every N`` runs it)."""
    qs = visible_experiments(user).prefetch_related("runs")
    exp: Experiment = get_object_or_404(qs, pk=pk)
    if write and exp.owner_id != user.pk and not (exp.owner_id is None and user.is_staff):
        raise Http404("read-only experiment")
    return exp


def get_run(exp: Experiment, pk: int, *, done: bool = False) -> Run:
    """A run of ``exp`` (``done``: only a finished, successful one); 404 otherwise."""
    filters: dict[str, Any] = {"pk": pk, "experiment": exp}
    if done:
        filters["status"] = Run.Status.DONE
    run: Run = get_object_or_404(Run, **filters)
    return run


def get_dataset(pk: int, user: Any) -> Dataset:
    ds: Dataset = get_object_or_404(Dataset, pk=pk, owner=user.pk)
    return ds


def list_experiments(user: Any) -> list[Experiment]:
    """The experiments ``user`` sees (their input texts, InputText rows, not loaded), each with
    ``run_badges`` (``labels.run_badges``)."""
    experiments = list(visible_experiments(user).prefetch_related("runs"))
    for exp in experiments:
        exp.run_badges = run_badges(exp, list(exp.runs.all()))  # type: ignore[attr-defined]
    return experiments


def user_for_token(header: str) -> Any | None:
    """The user of an ``Authorization: Token <key>`` header, or None."""
    scheme, _, key = header.partition(" ")
    if scheme.lower() != "token" or not key.strip():
        return None
    digest = key_digest(key.strip())
    token = ApiToken.objects.select_related("user").filter(key=digest, user__is_active=True).first()
    if token is None:
        return None
    ApiToken.objects.filter(pk=token.pk).update(last_used=timezone.now())
    return token.user
