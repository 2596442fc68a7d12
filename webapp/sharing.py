"""Share links: read-only, unguessable, revocable links to an experiment that open without login."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db.models import Q
from django.http.request import split_domain_port
from django.urls import reverse
from django.utils import timezone

from webapp.models import Experiment, ShareLink


class ShareUnavailable(Exception):
    """A share link that does not open: unknown (404), or revoked or expired (410). Rendered as a
    page that says which, in every mode (``webapp.middleware.ShareErrors``)."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status, self.reason = status, reason


def live_share_links(exp: Experiment) -> Any:
    """The experiment's share links that still open: not revoked, not expired."""
    return exp.share_links.filter(revoked__isnull=True).filter(Q(expires__isnull=True) | Q(expires__gt=timezone.now()))


def get_shared(token: str) -> tuple[Experiment, ShareLink]:
    """The experiment behind a live share link; ShareUnavailable for an unknown, revoked or expired one."""
    link = ShareLink.objects.filter(token=token).first()
    if link is None:
        raise ShareUnavailable(404, "unknown")
    if link.revoked is not None:
        raise ShareUnavailable(410, "revoked")
    if link.expires is not None and link.expires <= timezone.now():
        raise ShareUnavailable(410, "expired")
    exp = Experiment.objects.prefetch_related("runs").get(pk=link.experiment_id)
    return exp, link


SHARE_EXPIRY_DAYS = (1, 7, 30)  # the choices offered besides "never"


def share(exp: Experiment, days: int | None = None) -> ShareLink:
    """A new share link, expiring after ``days`` (None: never)."""
    expires = timezone.now() + timedelta(days=days) if days else None
    link: ShareLink = ShareLink.objects.create(experiment=exp, expires=expires)
    return link


LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")


def share_url(request: Any, token: str) -> str:
    """The full URL of a share link: under ``MLSCHED_PUBLIC_URL`` when set (a proxy's public
    URL); else on the host this request came to (a teammate reaches the same name), unless that is
    127.0.0.1/localhost, which only this machine reaches: then under ``MLSCHED_NETWORK_URL`` (this
    machine's address when served on the network) when set."""
    path = reverse("shared", args=[token])
    base = settings.MLSCHED_PUBLIC_URL
    if not base and settings.MLSCHED_NETWORK_URL:
        host, _ = split_domain_port(request.get_host())
        if host in LOOPBACK_HOSTS:
            base = settings.MLSCHED_NETWORK_URL
    return base.rstrip("/") + path if base else str(request.build_absolute_uri(path))


def revoke(exp: Experiment, token_pk: int) -> None:
    ShareLink.objects.filter(pk=token_pk, experiment=exp, revoked__isnull=True).update(revoked=timezone.now())
