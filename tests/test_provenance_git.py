"""provenance's commit look-up: ``git rev-parse HEAD`` and ``git status`` (started early by prefetch)."""

from __future__ import annotations

import shutil
import subprocess
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
