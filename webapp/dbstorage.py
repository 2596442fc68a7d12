"""A Django storage that keeps files in the database: the default storage, so that a web host and
any number of worker hosts that share only PostgreSQL and Redis read each other's files (results,
chart and Gantt indexes, drafts, raw uploads, reproductions; DESIGN section 8,
docs/architecture.md "Storage and hosts").

A file is one ``StoredFile`` row and its bytes ``StoredChunk`` rows of ``CHUNK_BYTES`` each (the last
shorter). A save is one transaction: readers see a file whole or not at all, and a name taken by
another writer meanwhile (the unique name) makes the save pick a free variant, as the file system
storage does, so a save of an existing name doubles as an atomic "create once". Reading fetches one
chunk at a time, so a large result is streamed, not held whole, when it is served.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from django.core.files.base import File
from django.core.files.storage import Storage
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.deconstruct import deconstructible

from webapp.models import StoredChunk, StoredFile

CHUNK_BYTES = 1 << 20  # 1 MiB per row: a 100k-job result (tens of MB) is tens of rows
SAVE_ATTEMPTS = 5  # names taken by concurrent writers before a save gives up


class ChunkReader(io.RawIOBase):
    """The bytes of one stored file, fetched a chunk at a time."""

    def __init__(self, row: StoredFile) -> None:
        super().__init__()
        self.file_id, self.size, self.chunk_size = row.pk, row.size, row.chunk_size
        self.pos = 0
        self.cached: tuple[int, bytes] | None = None  # (chunk index, its bytes)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.pos, io.SEEK_END: self.size}[whence]
        self.pos = max(base + offset, 0)
        return self.pos

    def _chunk(self, index: int) -> bytes:
        if self.cached is None or self.cached[0] != index:
            data = StoredChunk.objects.filter(file_id=self.file_id, index=index).values_list("data", flat=True).first()
            if data is None:
                raise FileNotFoundError(f"stored file {self.file_id}: chunk {index} is missing (deleted meanwhile?)")
            self.cached = (index, bytes(data))
        return self.cached[1]

    def readinto(self, buffer: Any) -> int:
        if self.pos >= self.size:
            return 0
        index, offset = divmod(self.pos, self.chunk_size)
        piece = self._chunk(index)[offset : offset + len(buffer)]
        buffer[: len(piece)] = piece
        self.pos += len(piece)
        return len(piece)

    def readall(self) -> bytes:
        parts = []
        while self.pos < self.size:
            index, offset = divmod(self.pos, self.chunk_size)
            piece = self._chunk(index)[offset:]
            parts.append(piece)
            self.pos += len(piece)
            self.cached = None  # a whole read keeps no chunk once past it
        return b"".join(parts)


class StoredFileHandle(File):  # type: ignore[type-arg]
    """A stored file opened for reading; it may be opened again after it is closed (FieldFile does)."""

    def __init__(self, storage: DatabaseStorage, name: str) -> None:
        self.storage = storage
        super().__init__(storage.reader(name), name)

    def open(self, mode: str | None = None, *args: Any, **kwargs: Any) -> StoredFileHandle:
        if self.closed:
            self.file = self.storage.reader(self.name or "")
        else:
            self.seek(0)
        return self


def _pieces(content: File, size: int) -> Iterator[bytes]:  # type: ignore[type-arg]
    """``content`` as byte strings of exactly ``size`` bytes (the last shorter)."""
    if hasattr(content, "seek") and content.seekable():
        content.seek(0)
    pending = b""
    for part in content.chunks(size):
        pending += part.encode("utf-8") if isinstance(part, str) else bytes(part)
        while len(pending) >= size:
            yield pending[:size]
            pending = pending[size:]
    if pending:
        yield pending


@deconstructible(path="webapp.dbstorage.DatabaseStorage")
class DatabaseStorage(Storage):
    """Files as database rows (``StoredFile``, ``StoredChunk``). Read-only once saved: ``open``
    accepts reading modes only (every writer of this app saves whole files)."""

    def __init__(self, chunk_bytes: int = CHUNK_BYTES) -> None:
        self.chunk_bytes = chunk_bytes

    def reader(self, name: str) -> io.BufferedReader:
        row = StoredFile.objects.filter(name=name).first()
        if row is None:
            raise FileNotFoundError(f"no stored file {name!r}")
        return io.BufferedReader(ChunkReader(row), buffer_size=min(self.chunk_bytes, 1 << 16))

    def _open(self, name: str, mode: str = "rb") -> File:  # type: ignore[type-arg]
        if any(c in mode for c in "wax+"):
            raise ValueError(f"the database storage opens files for reading only, not {mode!r}: save a new file")
        if "b" not in mode:  # text mode
            return File(io.TextIOWrapper(self.reader(name), encoding="utf-8"), name)
        return StoredFileHandle(self, name)

    def _save(self, name: str, content: File) -> str:  # type: ignore[type-arg]
        for _ in range(SAVE_ATTEMPTS):
            try:
                with transaction.atomic():
                    row = StoredFile.objects.create(name=name, chunk_size=self.chunk_bytes, modified=timezone.now())
                    size = 0
                    for index, piece in enumerate(_pieces(content, self.chunk_bytes)):
                        StoredChunk.objects.create(file=row, index=index, data=piece)
                        size += len(piece)
                    StoredFile.objects.filter(pk=row.pk).update(size=size)
                return name
            except IntegrityError:
                if not self.exists(name):
                    raise  # not the name: something else refused the row
                name = self.get_available_name(name)  # another writer took it meanwhile
        raise FileExistsError(f"could not find a free name near {name!r} in {SAVE_ATTEMPTS} attempts")

    def delete(self, name: str) -> None:
        StoredFile.objects.filter(name=name).delete()

    def exists(self, name: str) -> bool:
        return StoredFile.objects.filter(name=name).exists()

    def listdir(self, path: str) -> tuple[list[str], list[str]]:
        prefix = path.strip("/") + "/" if path.strip("/") else ""
        dirs: set[str] = set()
        files: list[str] = []
        for name in StoredFile.objects.filter(name__startswith=prefix).values_list("name", flat=True):
            head, sep, _ = name[len(prefix) :].partition("/")
            if sep:
                dirs.add(head)
            else:
                files.append(head)
        return sorted(dirs), sorted(files)

    def size(self, name: str) -> int:
        size = StoredFile.objects.filter(name=name).values_list("size", flat=True).first()
        if size is None:
            raise FileNotFoundError(f"no stored file {name!r}")
        return int(size)

    def get_modified_time(self, name: str) -> datetime:
        modified = StoredFile.objects.filter(name=name).values_list("modified", flat=True).first()
        if modified is None:
            raise FileNotFoundError(f"no stored file {name!r}")
        return modified

    def get_created_time(self, name: str) -> datetime:
        return self.get_modified_time(name)

    def url(self, name: str | None) -> str:
        raise NotImplementedError("stored files are served by the app's own views, not by URL")
