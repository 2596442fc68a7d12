"""What made a result: the code version and the digests of the inputs (optional result fields).

``code()`` is ``{"package": "mlsched", "version": ..., "commit": ...}``: the package version
(``scheduling.__version__``) and the git commit of the source tree when it is a git checkout
(``git rev-parse HEAD``; ``"<sha>-dirty"`` when tracked files differ from it). Deployments without
``.git`` (a Docker image) may set ``MLSCHED_COMMIT``; otherwise the commit is None. It is
computed once per process; ``prefetch()`` starts the git commands early, in the background.

``inputs(instance)`` is ``{"cluster_sha256", "trace_sha256"}``: SHA-256 of the cluster and the
jobs **as loaded** (the ``repr`` of the frozen cluster, and of each job followed by a newline,
so a CSV and a JSON trace with the same content, or the same file with other whitespace, have
the same digest). Cached while the instance lives.
"""

from __future__ import annotations

import functools
import hashlib
import os
import subprocess
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from scheduling.model import Instance

PACKAGE = "mlsched"
_SOURCE = Path(__file__).resolve().parent.parent


@functools.cache
def code() -> dict[str, str | None]:
    from scheduling import __version__

    return {"package": PACKAGE, "version": __version__, "commit": os.environ.get("MLSCHED_COMMIT") or _git_commit()}


_GIT_COMMANDS = (("rev-parse", "HEAD"), ("status", "--porcelain", "--untracked-files=no"))
_STARTED: list[list[subprocess.Popen[str]]] = []  # the git commands, once prefetch() started them


def prefetch() -> None:
    """Start the git commands behind ``code()`` now, in the background, so that they run while the
    caller does other work (the CLI calls this before loading its inputs); ``code()`` collects them.
    Nothing happens if the commit is already known or comes from ``MLSCHED_COMMIT``."""
    if not _STARTED and code.cache_info().currsize == 0 and not os.environ.get("MLSCHED_COMMIT"):
        _STARTED.append(_start_git())


def _start_git() -> list[subprocess.Popen[str]]:
    started: list[subprocess.Popen[str]] = []
    try:
        for args in _GIT_COMMANDS:
            started.append(
                subprocess.Popen(
                    ["git", *args],
                    cwd=_SOURCE,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    text=True,
                )
            )
    except OSError:  # no git
        for proc in started:
            proc.kill()
            proc.wait()
        return []
    return started


def _git_commit() -> str | None:
    """The checkout's commit, with ``-dirty`` if tracked files changed; None without git or a
    repository. ``git rev-parse HEAD`` and ``git status`` run side by side (started by prefetch()
    if it was called)."""
    started = _STARTED.pop() if _STARTED else _start_git()
    if len(started) != len(_GIT_COMMANDS):
        return None
    outputs: list[str] = []
    failed = False
    for proc in started:
        try:
            out, _ = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            failed = True
            continue
        failed = failed or proc.returncode != 0
        outputs.append(out.strip())
    if failed:
        return None
    head, status = outputs
    if not head:
        return None
    return f"{head}-dirty" if status else head


# id(instance) -> (weak reference, digests): the entry goes when the instance is freed, so the
# cache never keeps an instance alive (a Celery worker returns to its idle size after a run).
_DIGESTS: dict[int, tuple[weakref.ref[Instance], dict[str, str]]] = {}


def inputs(instance: Instance) -> dict[str, str]:
    key = id(instance)
    cached = _DIGESTS.get(key)
    if cached is None or cached[0]() is not instance:
        trace = hashlib.sha256()
        for job in instance.jobs:  # job by job: no string of the whole trace (150k jobs: ~100 MB)
            trace.update(repr(job).encode())
            trace.update(b"\n")
        digests = {
            "cluster_sha256": hashlib.sha256(repr(instance.cluster).encode()).hexdigest(),
            "trace_sha256": trace.hexdigest(),
        }
        cached = _DIGESTS[key] = (weakref.ref(instance, lambda _ref: _DIGESTS.pop(key, None)), digests)
    return dict(cached[1])


def record(instance: Instance) -> dict[str, Any]:
    """The optional result fields ``code`` and ``inputs``."""
    return {"code": code(), "inputs": inputs(instance)}


def notes(doc: Mapping[str, Any], instance: Instance) -> list[str]:
    """Differences between a result's recorded version/inputs and this code/instance (for ``check``)."""
    out: list[str] = []
    made = doc.get("code")
    if not isinstance(made, Mapping):
        out.append("the result records no code version (made before versions were recorded)")
    else:
        now = code()
        for key in ("version", "commit"):
            if made.get(key) != now[key]:
                out.append(f"the result was made by {key} {made.get(key)}; this is {key} {now[key]}")
    recorded = doc.get("inputs")
    if isinstance(recorded, Mapping):
        for key, value in inputs(instance).items():
            if recorded.get(key) not in (None, value):
                what = key.removesuffix("_sha256")
                out.append(f"the result was made from another {what} ({key} {recorded.get(key)}, this one {value})")
    return out
