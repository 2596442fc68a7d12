"""An upload handler that never stores more of a file than the loaders accept."""

from __future__ import annotations

from django.core.files.uploadhandler import TemporaryFileUploadHandler

from scheduling.loaders import MAX_UPLOAD_BYTES


class CappedTemporaryFileUploadHandler(TemporaryFileUploadHandler):
    """Writes at most ``MAX_UPLOAD_BYTES`` of each file; the rest is counted but dropped.

    The parser still reports the true size (``UploadedFile.size``), so the form refuses an
    oversized file with its size, and a 50 MB upload never lands on disk whole.
    """

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes | None:
        if start + len(raw_data) > MAX_UPLOAD_BYTES:
            return None
        return super().receive_data_chunk(raw_data, start)
