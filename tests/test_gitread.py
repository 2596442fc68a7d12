"""scheduling/gitread.py against git itself, in real repositories made in a temporary folder.

Each check reads the commit first (git status may rewrite the index) and then asks git
(``rev-parse HEAD`` and ``status --porcelain --untracked-files=no``, what provenance ran before).
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from scheduling import gitread, provenance

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t",
}


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **ENV}
    out = subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True, env=env)
    return out.stdout.strip()


def by_git(repo: Path) -> str:
    head = git(repo, "rev-parse", "HEAD")
    return f"{head}-dirty" if git(repo, "status", "--porcelain", "--untracked-files=no") else head


def read_then_git(repo: Path) -> tuple[object, str]:
    return gitread.commit(str(repo)), by_git(repo)


def same(repo: Path) -> str:
    """The reader's answer, checked equal to git's (and not UNKNOWN)."""
    mine, theirs = read_then_git(repo)
    assert mine == theirs
    return theirs


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "a.txt").write_text("one\n")
    (root / "src" / "deep").mkdir(parents=True)
    (root / "src" / "b.py").write_text("print(1)\n")
    (root / "src" / "deep" / "c.txt").write_text("c\n")
    (root / "run.sh").write_text("#!/bin/sh\n")
    (root / "run.sh").chmod(0o755)
    os.symlink("a.txt", root / "link")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "first")
    return root


def test_a_clean_checkout_gives_the_head_commit(repo: Path):
    assert same(repo) == git(repo, "rev-parse", "HEAD")
    assert gitread.commit(str(repo)) == git(repo, "rev-parse", "HEAD")  # twice: after git's own refresh


def test_a_modified_tracked_file_is_dirty_even_with_its_old_size_and_times(repo: Path):
    st = os.stat(repo / "a.txt")
    (repo / "a.txt").write_text("two\n")  # same size
    os.utime(repo / "a.txt", ns=(st.st_atime_ns, st.st_mtime_ns))
    assert same(repo).endswith("-dirty")


def test_a_file_rewritten_with_its_content_is_clean(repo: Path):
    (repo / "src" / "b.py").write_text("print(1)\n")
    assert not same(repo).endswith("-dirty")


@pytest.mark.parametrize(
    "change",
    [
        "staged",
        "deleted",
        "staged deletion",
        "executable",
        "added",
        "symlink target",
        "file to symlink",
        "renamed",
        "folder to symlink",
        "folder deleted",
    ],
)
def test_changes_git_reports_make_the_checkout_dirty(repo: Path, change: str):
    if change == "staged":
        (repo / "src" / "b.py").write_text("print(2)\n")
        git(repo, "add", "src/b.py")
    elif change == "deleted":
        (repo / "src" / "deep" / "c.txt").unlink()
    elif change == "staged deletion":
        git(repo, "rm", "-q", "src/deep/c.txt")
    elif change == "executable":
        (repo / "a.txt").chmod(0o755)
    elif change == "added":
        (repo / "new.txt").write_text("n\n")
        git(repo, "add", "new.txt")
    elif change == "symlink target":
        (repo / "link").unlink()
        os.symlink("run.sh", repo / "link")
    elif change == "file to symlink":
        (repo / "a.txt").unlink()
        os.symlink("run.sh", repo / "a.txt")
    elif change == "folder to symlink":  # the same files (inodes, times) behind a symlink
        (repo / "src" / "deep").rename(repo / "src" / "moved")
        os.symlink("moved", repo / "src" / "deep")
    elif change == "folder deleted":
        shutil.rmtree(repo / "src")
    else:
        git(repo, "mv", "a.txt", "z.txt")
    assert same(repo).endswith("-dirty")


def test_a_staged_change_whose_file_is_then_restored_is_still_dirty(repo: Path):
    (repo / "a.txt").write_text("staged\n")
    git(repo, "add", "a.txt")
    (repo / "a.txt").write_text("one\n")  # the work tree as HEAD, the index not
    assert same(repo).endswith("-dirty")


def test_an_untracked_file_leaves_it_clean(repo: Path):
    (repo / "untracked.txt").write_text("x\n")
    assert not same(repo).endswith("-dirty")


def test_a_detached_head_and_packed_refs_and_objects(repo: Path):
    first = git(repo, "rev-parse", "HEAD")
    (repo / "a.txt").write_text("second\n")
    git(repo, "commit", "-q", "-am", "second")
    git(repo, "checkout", "-q", "--detach", first)
    assert same(repo) == first
    git(repo, "checkout", "-q", "main")
    git(repo, "gc", "-q")  # refs in packed-refs, objects in a pack
    assert not (repo / ".git" / "refs" / "heads" / "main").exists()
    assert same(repo) == git(repo, "rev-parse", "HEAD")
    (repo / "a.txt").write_text("third\n")
    assert same(repo).endswith("-dirty")


def test_a_worktree_checkout(repo: Path, tmp_path: Path):
    other = tmp_path / "other"
    git(repo, "worktree", "add", "-q", "-b", "side", str(other))
    assert (other / ".git").is_file()
    assert same(other) == git(repo, "rev-parse", "HEAD")
    (other / "src" / "b.py").write_text("print(3)\n")
    assert same(other).endswith("-dirty")
    assert not same(repo).endswith("-dirty")  # the main checkout unchanged


def test_random_edits_give_git_answer(repo: Path):
    rng = random.Random(7)
    files = ["a.txt", "src/b.py", "src/deep/c.txt", "run.sh"]
    for step in range(25):
        path = repo / rng.choice(files)
        action = rng.choice(["write", "same", "add", "commit", "reset", "chmod"])
        if action == "write" and path.exists() and not path.is_symlink():
            path.write_text(rng.choice(["x\n", "y\n", "one\n", "print(1)\n"]))
        elif action == "same":
            os.utime(path, None, follow_symlinks=False)
        elif action == "add":
            git(repo, "add", "-A")
        elif action == "commit":
            git(repo, "commit", "-q", "-am", f"step {step}", "--allow-empty")
        elif action == "reset":
            git(repo, "reset", "-q", "--hard")
        elif action == "chmod" and not path.is_symlink():
            path.chmod(0o755 if rng.random() < 0.5 else 0o644)
        same(repo)
        entries, _, _ = gitread._index(str(repo / ".git" / "index"))
        assert gitread._tree_of(entries).hex() == git(repo, "write-tree")  # the tree hashed here is git's


STATES = ["autocrlf", "include", "intent to add", "conflict", "GIT_DIR", "unborn", "attributes"]


@pytest.mark.parametrize("state", STATES)
def test_states_it_does_not_follow_are_left_to_git(repo: Path, state: str, monkeypatch: pytest.MonkeyPatch):
    if state == "autocrlf":
        git(repo, "config", "core.autocrlf", "true")
    elif state == "include":
        git(repo, "config", "include.path", "/nowhere")
    elif state == "intent to add":
        (repo / "n.txt").write_text("n\n")
        git(repo, "add", "-N", "n.txt")
    elif state == "conflict":
        git(repo, "checkout", "-q", "-b", "other")
        (repo / "a.txt").write_text("other\n")
        git(repo, "commit", "-q", "-am", "other")
        git(repo, "checkout", "-q", "main")
        (repo / "a.txt").write_text("mine\n")
        git(repo, "commit", "-q", "-am", "mine")
        merge = ["git", "merge", "-q", "other"]
        subprocess.run(merge, cwd=repo, capture_output=True, env={**os.environ, **ENV}, check=False)  # a conflict
    elif state == "GIT_DIR":
        monkeypatch.setenv("GIT_DIR", str(repo / ".git"))
    elif state == "unborn":
        git(repo, "checkout", "-q", "--orphan", "empty")
    else:
        (repo / ".gitattributes").write_text("*.txt text eol=crlf\n")
        git(repo, "add", ".gitattributes")
        git(repo, "commit", "-q", "-m", "attributes")
        (repo / "a.txt").write_text("one\n")  # rewritten: its content must be hashed, through the attributes
    assert gitread.commit(str(repo)) is gitread.UNKNOWN


def test_no_dot_git_is_left_to_git_and_no_git_gives_none(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    plain = tmp_path / "plain"
    plain.mkdir()
    assert gitread.commit(str(plain)) is gitread.UNKNOWN  # git looks in the parent folders
    monkeypatch.setenv("PATH", str(tmp_path / "no-such-folder"))
    assert gitread.commit(str(repo)) is None  # as posix_spawnp finding no git


def test_provenance_reads_the_commit_without_starting_git(repo: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(provenance, "_SOURCE", str(repo))
    monkeypatch.setattr(provenance, "_STARTED", [])
    spawned: list[object] = []
    monkeypatch.setattr(provenance, "_start_git", lambda: spawned.append(1) or [])
    assert provenance._git_commit() == git(repo, "rev-parse", "HEAD")
    (repo / "a.txt").write_text("changed\n")
    assert provenance._git_commit() == git(repo, "rev-parse", "HEAD") + "-dirty"
    assert not spawned


def test_provenance_runs_git_when_the_reader_does_not_follow(repo: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(provenance, "_SOURCE", str(repo))
    monkeypatch.setattr(provenance, "_STARTED", [])
    git(repo, "config", "core.autocrlf", "input")
    assert gitread.commit(str(repo)) is gitread.UNKNOWN
    assert provenance._git_commit() == git(repo, "rev-parse", "HEAD")


def test_prefetch_reads_the_commit_and_starts_no_git(repo: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(provenance, "_SOURCE", str(repo))
    monkeypatch.setattr(provenance, "_STARTED", [])
    monkeypatch.delenv("MLSCHED_COMMIT", raising=False)
    head = git(repo, "rev-parse", "HEAD")
    provenance.code.cache_clear()
    try:
        provenance.prefetch()
        assert [head] == provenance._STARTED  # the commit read, no git process started
        assert provenance._git_commit() == head
        assert not provenance._STARTED
    finally:
        provenance.code.cache_clear()


@pytest.mark.parametrize("damage", ["index", "loose commit", "HEAD"])
def test_a_damaged_repository_is_left_to_git(repo: Path, damage: str):
    gitdir = repo / ".git"
    if damage == "index":
        data = (gitdir / "index").read_bytes()
        (gitdir / "index").write_bytes(data[:-30])
    elif damage == "loose commit":
        head = git(repo, "rev-parse", "HEAD")
        loose = gitdir / "objects" / head[:2] / head[2:]
        loose.chmod(0o644)
        loose.write_bytes(b"not zlib")
    else:
        (gitdir / "HEAD").write_text("garbage\n")
    assert gitread.commit(str(repo)) is gitread.UNKNOWN
