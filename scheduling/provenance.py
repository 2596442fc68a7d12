"""What made a result: the code version and the digests of the inputs (optional result fields).

``code()`` is ``{"package": "mlsched", "version": ..., "commit": ...}``: the package version
(``scheduling.__version__``) and the git commit of the source tree when it is a git checkout
(``git rev-parse HEAD``; ``"<sha>-dirty"`` when tracked files differ from it; read from ``.git``
by scheduling/gitread.py, git run only in states that reader does not follow). Deployments without
``.git`` (a Docker image) may set ``MLSCHED_COMMIT``; otherwise the commit is None. It is
computed once per process; ``prefetch()`` starts the git commands early, in the background.

``inputs(instance)`` is ``{"cluster_sha256", "trace_sha256"}``: SHA-256 of the cluster and the
jobs **as loaded** (the ``repr`` of the frozen cluster, and of each job followed by a newline,
so a CSV and a JSON trace with the same content, or the same file with other whitespace, have
the same digest). Cached while the instance lives.
"""

from __future__ import annotations

import functools
import math
import os
import time
from _weakref import ref as _weakref  # weakref.ref, without weakref.py's import (start-up)
from collections.abc import Mapping

from scheduling import gitread
from scheduling.model import Instance

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)

if TYPE_CHECKING:
    import weakref
    from hashlib import sha256 as _builtin_sha256
    from typing import Any
else:
    try:  # CPython's own SHA-256 (same digests as hashlib's, whose import loads OpenSSL: about 3 ms)
        from _sha256 import sha256 as _builtin_sha256
    except ImportError:  # another Python, or a later CPython (_sha2)
        from hashlib import sha256 as _builtin_sha256

SMALL_TRACE = 2_000
"""Up to this many jobs the input digests use CPython's own SHA-256 and a run does not import
hashlib; OpenSSL's, about 4 x faster, pays for its import above (150,000 jobs: 39 ms against 157)."""


def _sha256(jobs: int) -> Any:
    """The SHA-256 constructor for an instance of ``jobs`` jobs (see SMALL_TRACE)."""
    if jobs <= SMALL_TRACE:
        return _builtin_sha256
    import hashlib

    return hashlib.sha256


PACKAGE = "mlsched"
_SOURCE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))  # (no pathlib: start-up)


@functools.cache
def code() -> dict[str, str | None]:
    from scheduling import __version__

    return {"package": PACKAGE, "version": __version__, "commit": os.environ.get("MLSCHED_COMMIT") or _git_commit()}


_GIT_COMMANDS = (("rev-parse", "HEAD"), ("status", "--porcelain", "--untracked-files=no"))
GIT_TIMEOUT = 10.0  # seconds for both commands together; a git that takes longer is killed
_STARTED: list[str | list[tuple[int, int]] | None] = []  # what _begin() gave prefetch()


def prefetch() -> None:
    """Start the git commands behind ``code()`` now, in the background, so that they run while the
    caller does other work (the CLI calls this before loading its inputs); ``code()`` collects them.
    Nothing happens if the commit is already known or comes from ``MLSCHED_COMMIT``."""
    if not _STARTED and code.cache_info().currsize == 0 and not os.environ.get("MLSCHED_COMMIT"):
        _STARTED.append(_begin())


def _begin() -> str | list[tuple[int, int]] | None:
    """The commit as scheduling/gitread.py reads it from ``.git``, or, in a state it does not
    follow, the git commands started (``_start_git``)."""
    known = gitread.commit(_SOURCE)
    return _start_git() if known is gitread.UNKNOWN else known  # type: ignore[return-value]


def _start_git() -> list[tuple[int, int]]:
    """Start every git command with its standard output on a pipe; [] without git.

    ``os.posix_spawnp``, not ``subprocess``: importing subprocess (with selectors, threading and
    signal) took about 4 ms of every ``simulate`` process (bench/RESULTS-tiresias.md, "Records
    instead of dataclasses")."""
    started: list[tuple[int, int]] = []
    if not hasattr(os, "posix_spawnp"):  # not a POSIX system: no commit recorded
        return started
    for args in _GIT_COMMANDS:
        read, write = os.pipe()  # both close on exec; the child's standard output is a copy
        try:
            pid = os.posix_spawnp(
                "git",
                ["git", "-C", str(_SOURCE), *args],
                os.environ,
                file_actions=[
                    (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                    (os.POSIX_SPAWN_DUP2, write, 1),
                    (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
                ],
            )
        except OSError:  # no git
            os.close(read)
            for pid, fd in started:
                _stop(pid, fd)
            return []
        finally:
            os.close(write)
        started.append((pid, read))
    return started


def _stop(pid: int, read: int) -> None:
    import signal  # only on this rare path

    os.close(read)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


def _output(pid: int, read: int, deadline: float) -> str | None:
    """The command's standard output if it exits with status 0 before ``deadline``; else None (a
    command still running then is killed)."""
    import select  # only when git runs

    chunks: list[bytes] = []
    ready = select.poll()  # poll, not select: a long-lived worker may hold descriptors above 1023
    ready.register(read, select.POLLIN)
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not ready.poll(math.ceil(left * 1000)):
            _stop(pid, read)
            return None
        chunk = os.read(read, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read)
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        return None
    return b"".join(chunks).decode(errors="replace").strip()


def _git_commit() -> str | None:
    """The checkout's commit, with ``-dirty`` if tracked files changed; None without git or a
    repository. ``git rev-parse HEAD`` and ``git status`` run side by side (started by prefetch()
    if it was called), unless scheduling/gitread.py reads the same answer from ``.git`` (it
    returns UNKNOWN on any state it does not follow)."""
    started = _STARTED.pop() if _STARTED else _begin()
    if not isinstance(started, list):
        return started  # read from .git
    if len(started) != len(_GIT_COMMANDS):
        return None
    deadline = time.monotonic() + GIT_TIMEOUT
    outputs = [_output(pid, read, deadline) for pid, read in started]
    head, status = outputs
    if not head or status is None:
        return None
    return f"{head}-dirty" if status else head


_BATCH = 4096  # strings hashed at once by inputs()


# id(instance) -> (weak reference, digests): the entry goes when the instance is freed, so the
# cache never keeps an instance alive (a Celery worker returns to its idle size after a run).
_DIGESTS: dict[int, tuple[weakref.ref[Instance], dict[str, str]]] = {}


def inputs(instance: Instance) -> dict[str, str]:
    key = id(instance)
    cached = _DIGESTS.get(key)
    if cached is None or cached[0]() is not instance:
        sha256 = _sha256(len(instance.jobs))
        trace = sha256()
        replay = instance.cluster.replay_status
        parts: list[str] = []
        for job in instance.jobs:  # a batch at a time: no string of the whole trace (150k jobs: ~100 MB)
            parts.append(repr(job))
            if job.restart_seconds is not None or job.gpu_speed or job.checkpoint_gb is not None:  # not in repr
                parts.append(repr((job.restart_seconds, dict(job.gpu_speed), job.checkpoint_gb)))
            if job.outcome is not None and replay:  # read only by a status replay
                parts.append(repr(("outcome", job.outcome)))
            parts.append("\n")
            if len(parts) >= _BATCH:
                trace.update("".join(parts).encode())
                parts.clear()
        trace.update("".join(parts).encode())  # (the same bytes as job by job)
        cluster = instance.cluster
        shown = repr(cluster)
        if cluster.restart_costs or cluster.gpu_speeds or cluster.checkpoint_gbps:  # optional fields, not in repr
            speeds = {k: dict(v) for k, v in cluster.gpu_speeds.items()}
            shown += repr((cluster.restart_costs, speeds, cluster.checkpoint_gbps))
        if cluster.failures or cluster.checkpoint_slots:
            shown += repr((cluster.failures, cluster.checkpoint_slots))
        if cluster.replay_status:
            shown += repr(("replay_status", True))
        digests = {
            "cluster_sha256": sha256(shown.encode()).hexdigest(),
            "trace_sha256": trace.hexdigest(),
        }
        cached = _DIGESTS[key] = (_weakref(instance, lambda _ref: _DIGESTS.pop(key, None)), digests)
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
