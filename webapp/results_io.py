"""Reading a run's stored result and the indexes written beside it (webapp/runstore.py writes them)."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from typing import Any

from webapp.chartindex import chart_doc, chart_index, chart_index_name
from webapp.models import Run
from webapp.runstore import decode_result


def stored_name(run: Run) -> str:
    """The storage name of a run's result file; ValueError for a run that has none (not done)."""
    if not run.result.name:
        raise ValueError(f"run {run.pk} has no stored result")
    return run.result.name


def load_result(run: Run) -> dict[str, Any]:
    with run.result.open("rb") as f:
        return decode_result(f.read())


def load_chart_doc(run: Run) -> dict[str, Any]:
    """What the JCT and utilisation tabs draw (webapp/chartindex.py), from the index written beside
    the result; for runs that finished before indexes existed it is built once and stored."""
    from django.core.files.base import ContentFile
    from django.core.files.storage import default_storage

    from webapp.runstore import encode_result

    name = chart_index_name(stored_name(run))
    if default_storage.exists(name):
        with default_storage.open(name, "rb") as f:
            return chart_doc(decode_result(f.read()))
    index = chart_index(load_result(run))
    default_storage.save(name, ContentFile(encode_result(index)))
    return chart_doc(index)


def load_gantt_index(run: Run) -> dict[str, Any]:
    """The compact Gantt index written beside the result; built from the result document for runs
    that finished before indexes existed."""
    from django.core.files.storage import default_storage

    from webapp.runstore import gantt_index, index_name

    name = index_name(stored_name(run))
    if default_storage.exists(name):
        with default_storage.open(name, "rb") as f:
            return decode_result(f.read())
    return gantt_index(load_result(run))


def result_bytes(run: Run) -> bytes:
    with run.result.open("rb") as f:
        return gzip.decompress(f.read())


RESULT_CHUNK = 1 << 20  # bytes of the decompressed document per piece sent


def result_chunks(run: Run) -> Iterator[bytes]:
    """The run's result document, decompressed a piece at a time as it is read from the storage: a
    large result is sent without being held whole (DESIGN section 8)."""
    assert run.result.name, "a done run has a stored result"
    stored = run.result.storage.open(run.result.name, "rb")
    with stored, gzip.GzipFile(fileobj=stored) as document:
        while piece := document.read(RESULT_CHUNK):
            yield piece
