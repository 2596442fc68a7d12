"""Copy the files of ``MEDIA_ROOT`` into the default storage: results, indexes, drafts, raw uploads
and reproductions written while the file system was the storage (before ``MLSCHED_STORAGE`` existed,
the database is its default now), so that their experiments still open. A file already stored under
its name is skipped: running it again copies nothing twice (``bin/run-local`` runs it at every
start; docker-compose's ``migrate`` service too).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files import File
from django.core.files.storage import FileSystemStorage, default_storage, storages
from django.core.management.base import BaseCommand

FOLDERS = ("results", "dataset-drafts", "dataset-imports", "reproductions")


class Command(BaseCommand):
    help = "Copy files under MEDIA_ROOT into the default storage (skips those already there)."

    def handle(self, *args: Any, **options: Any) -> None:
        root = Path(settings.MEDIA_ROOT)
        if isinstance(storages["default"], FileSystemStorage):
            self.stdout.write("the default storage is MEDIA_ROOT itself: nothing to copy")
            return
        copied = 0
        for folder in FOLDERS:
            for path in sorted((root / folder).rglob("*")) if (root / folder).is_dir() else []:
                name = path.relative_to(root).as_posix()
                if not path.is_file() or path.name.endswith(".part") or default_storage.exists(name):
                    continue
                with path.open("rb") as f:
                    default_storage.save(name, File(f, name))
                copied += 1
        if copied:
            self.stdout.write(f"copied {copied} files from {root} into the default storage")
