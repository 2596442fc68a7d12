"""Previewed dataset files ("drafts"): kept in the media storage, by user and random token, until the
next "Add" stores them as a dataset or they are replaced or too old (``clean_drafts``, also run by
``manage.py recover_runs``)."""

from __future__ import annotations

import json
import re
import secrets
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.utils import timezone

DRAFTS = "dataset-drafts"  # previewed files, in the media storage, until added or replaced
DRAFT_TOKEN = re.compile(r"[A-Za-z0-9_-]{16,64}")


def _draft_path(user: Any, token: str) -> str:
    return f"{DRAFTS}/{user.pk}-{token}.json"


def save_draft(user: Any, kind: str, name: str, text: str) -> str:
    """Store a previewed file until it is added -> its token. The user's drafts older than
    ``MLSCHED_DRAFT_MAX_AGE`` and those beyond their newest ``MLSCHED_DRAFT_KEEP`` go now."""
    token = secrets.token_urlsafe(18)
    path = default_storage.save(_draft_path(user, token), ContentFile(json.dumps([kind, name, text]).encode("utf-8")))
    clean_drafts(user, spare=path)
    return token


def clean_drafts(user: Any = None, now: datetime | None = None, spare: str = "") -> int:
    """Delete drafts older than ``MLSCHED_DRAFT_MAX_AGE`` seconds, and beyond each user's newest
    ``MLSCHED_DRAFT_KEEP`` -> how many were deleted. ``user``: only theirs (when they save a new
    draft, ``spare`` being it: counted as their newest, never deleted); None: everyone's (the
    ``recover_runs`` maintenance command)."""
    keep = settings.MLSCHED_DRAFT_KEEP
    cutoff = (now or timezone.now()) - timedelta(seconds=settings.MLSCHED_DRAFT_MAX_AGE)
    try:
        files = default_storage.listdir(DRAFTS)[1]
    except FileNotFoundError:  # no draft saved yet
        return 0
    prefix = f"{user.pk}-" if user is not None else ""
    by_owner: dict[str, list[tuple[datetime, str]]] = {}
    for name in files:
        owner, sep, _ = name.partition("-")
        if not sep or not name.endswith(".json") or not name.startswith(prefix):
            continue
        path = f"{DRAFTS}/{name}"
        try:
            by_owner.setdefault(owner, []).append((default_storage.get_modified_time(path), path))
        except FileNotFoundError:  # deleted meanwhile (added, or another cleanup)
            continue
    deleted = 0
    for drafts in by_owner.values():
        drafts.sort(key=lambda d: (d[1] == spare, d[0]), reverse=True)  # newest first
        for k, (modified, path) in enumerate(drafts):
            if path != spare and (k >= keep or modified < cutoff):
                default_storage.delete(path)
                deleted += 1
    return deleted


def delete_draft(user: Any, token: str) -> None:
    path = _draft_path(user, token)
    if DRAFT_TOKEN.fullmatch(token) and default_storage.exists(path):
        default_storage.delete(path)


def load_draft(user: Any, token: str) -> tuple[str, str, str] | None:
    """(kind, name, text) of the user's previewed file, or None (unknown, another user's, bad token)."""
    if not DRAFT_TOKEN.fullmatch(token) or not getattr(user, "pk", None):
        return None
    path = _draft_path(user, token)
    if not default_storage.exists(path):
        return None
    with default_storage.open(path, "rb") as f:
        kind, name, text = json.loads(f.read())
    return str(kind), str(name), str(text)
