"""provenance's commit look-up: ``git rev-parse HEAD`` and ``git status`` (started early by prefetch)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from scheduling import provenance

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def git(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    out = subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True, env=env)
    return out.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    git(tmp_path, "init", "-q")
    (tmp_path / "a.txt").write_text("one\n")
    git(tmp_path, "add", "a.txt")
    git(tmp_path, "commit", "-q", "-m", "first")
    monkeypatch.setattr(provenance, "_SOURCE", tmp_path)
    monkeypatch.setattr(provenance, "_STARTED", [])
    return tmp_path


@pytest.mark.parametrize("early", [False, True])
def test_the_commit_of_a_clean_checkout_then_dirty_once_a_tracked_file_changes(repo: Path, early: bool):
    head = git(repo, "rev-parse", "HEAD")
    if early:
        provenance._STARTED.append(provenance._start_git())
    assert provenance._git_commit() == head
    (repo / "a.txt").write_text("two\n")
    if early:
        provenance._STARTED.append(provenance._start_git())
    assert provenance._git_commit() == f"{head}-dirty"
    assert not provenance._STARTED  # collected


def test_an_untracked_file_leaves_the_checkout_clean(repo: Path):
    (repo / "new.txt").write_text("x\n")
    assert provenance._git_commit() == git(repo, "rev-parse", "HEAD")


def test_outside_a_repository_there_is_no_commit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(provenance, "_SOURCE", tmp_path)
    monkeypatch.setattr(provenance, "_STARTED", [])
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))  # no repository above tmp_path
    assert provenance._git_commit() is None


def test_prefetch_starts_nothing_once_the_code_version_is_known(repo: Path):
    provenance.code()  # cached for the process
    provenance.prefetch()
    assert not provenance._STARTED


def test_without_git_there_is_no_commit(repo: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PATH", str(repo / "no-such-directory"))
    assert provenance._start_git() == []
    assert provenance._git_commit() is None


def fake_git(repo: Path, monkeypatch: pytest.MonkeyPatch, script: str) -> None:
    """A ``git`` on PATH that runs the shell ``script``."""
    fake = repo / "bin"
    fake.mkdir()
    (fake / "git").write_text(f"#!/bin/sh\n{script}\n")
    (fake / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}:/usr/bin:/bin")


def test_a_git_that_does_not_answer_is_stopped(repo: Path, monkeypatch: pytest.MonkeyPatch):
    fake_git(repo, monkeypatch, "exec sleep 30")
    monkeypatch.setattr(provenance, "GIT_TIMEOUT", 0.3)
    started = provenance._start_git()
    assert len(started) == 2
    provenance._STARTED.append(started)
    t0 = time.monotonic()
    assert provenance._git_commit() is None
    assert time.monotonic() - t0 < 10
    for pid, _ in started:  # killed and reaped: no child left
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, 0)


def test_a_failing_git_gives_no_commit(repo: Path, monkeypatch: pytest.MonkeyPatch):
    fake_git(repo, monkeypatch, "echo 0123abc\nexit 3")
    assert provenance._git_commit() is None


def test_the_input_digests_are_sha256_of_the_loaded_instance_for_small_and_large_traces(
    monkeypatch: pytest.MonkeyPatch,
):
    import hashlib

    from tests.scenarios import RIGID_TRACE, TINY_CLUSTER, instance

    inst = instance(RIGID_TRACE, TINY_CLUSTER)
    expected = {
        "cluster_sha256": hashlib.sha256(repr(inst.cluster).encode()).hexdigest(),
        "trace_sha256": hashlib.sha256(b"".join(repr(j).encode() + b"\n" for j in inst.jobs)).hexdigest(),
    }
    for small in (10**9, 0):  # CPython's own SHA-256, then OpenSSL's (hashlib)
        monkeypatch.setattr(provenance, "SMALL_TRACE", small)
        provenance._DIGESTS.clear()
        assert provenance.inputs(inst) == expected


def test_the_commit_is_read_when_the_process_holds_over_a_thousand_descriptors(repo: Path):
    """A long-lived worker may hold many descriptors: the git pipes then get numbers above
    select()'s limit (1023), which poll() does not have."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1200:
        pytest.skip(f"the descriptor limit is {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1200), hard))
    held = []
    try:
        while not held or held[-1] < 1050:
            held.append(os.open(os.devnull, os.O_RDONLY))
        started = provenance._start_git()
        assert min(fd for _, fd in started) > 1023
        provenance._STARTED.append(started)
        assert provenance._git_commit() == git(repo, "rev-parse", "HEAD")
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.mark.parametrize("preset", ["asrpt", "oasis", "edge-cloud", "zhou-batch"])
def test_the_trace_digest_reads_each_job_as_its_repr(preset: str):
    """inputs() digests each job's repr (a record's: one format per class, scheduling/records.py),
    on presets' traces (utilities, per-type speeds, stages, demands) and the test traces."""
    import hashlib

    from tests.scenarios import ELASTIC_TRACE, RIGID_TRACE, TINY_CLUSTER, instance, preset_instance

    for inst in (preset_instance(preset, 60, seed=3), instance(ELASTIC_TRACE), instance(RIGID_TRACE, TINY_CLUSTER)):
        provenance._DIGESTS.clear()
        trace = b"".join(
            repr(j).encode()
            + (
                repr((j.restart_seconds, dict(j.gpu_speed), j.checkpoint_gb)).encode()
                if j.restart_seconds is not None or j.gpu_speed or j.checkpoint_gb is not None
                else b""
            )
            + b"\n"
            for j in inst.jobs
        )
        assert provenance.inputs(inst)["trace_sha256"] == hashlib.sha256(trace).hexdigest()
