"""The checkout's commit read from its ``.git`` without running git (scheduling/provenance.py).

``commit(source)`` gives what ``git -C source rev-parse HEAD`` and ``git status --porcelain
--untracked-files=no`` give together (``"<sha>"``, ``"<sha>-dirty"``, or None when no ``git``
is on PATH), or UNKNOWN whenever the repository is in a state this reader does not follow, and
then provenance runs git as before. Two git processes cost a short ``simulate`` about 6 ms of CPU
(bench/RESULTS.md, "Start-up without git processes"); reading the files costs about 1 ms.

What is followed: ``source/.git`` a directory, or a ``gitdir:`` file (a ``git worktree``
checkout, with its ``commondir``); HEAD on a branch (a loose ref or packed-refs) or detached;
the commit object loose or whole in a pack (its tree id); an index of version 2 or 3. Dirty is
decided as git decides it: the tree the index would write (hashed here, tree by tree) against
the commit's tree (a staged change), then every tracked file's ``lstat`` against the index's
stat data (a changed type or executable bit, a missing file), the content hashed as a blob
where the stat data differ or the entry is racy (modified in the second the index was written).

UNKNOWN (git decides) on anything else: a ``GIT_*`` variable other than a few that cannot
change the answer, a git other than /usr/bin/git (whose system config is /etc/gitconfig), no
``.git`` in ``source`` (git would look in the parent directories), a file not owned by the
user (git's safe.directory), a config key outside a short list (filters, autocrlf, fsmonitor,
``core.worktree``, extensions, includes, ...), attributes files when a content must be hashed,
a symbolic ref other than ``refs/heads/*``, an unborn branch, a deltified commit, alternates,
unmerged, intent-to-add, skip-worktree or assume-valid entries, submodules, index extensions
other than the cache tree, resolve-undo and offset tables, a bad index checksum, or more than
8 MB of file content to hash. tests/test_gitread.py compares this reader with git in real
repositories: clean, modified, staged, deleted, mode change, detached, worktree, packed.
"""

from __future__ import annotations

import _struct
import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from hashlib import sha1 as _sha1
else:
    try:  # CPython's own SHA-1 (hashlib's import loads OpenSSL: about 3 ms)
        from _sha1 import sha1 as _sha1
    except ImportError:  # another Python
        from hashlib import sha1 as _sha1


class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = _Unknown()
"""The reader does not follow this repository's state: run git."""


class _Ask(Exception):
    """Raised anywhere below: the answer is UNKNOWN."""


# GIT_* variables that cannot change what rev-parse HEAD and status print (transport, identity, UI).
_HARMLESS_ENV_PREFIXES = ("GIT_SSL_", "GIT_SSH", "GIT_HTTP_", "GIT_AUTHOR_", "GIT_COMMITTER_")
_HARMLESS_ENV = {"GIT_ASKPASS", "GIT_TERMINAL_PROMPT", "GIT_EDITOR", "GIT_PAGER", "GIT_SEQUENCE_EDITOR"}
# The config sections that cannot change the answer, and core's keys with the values followed.
_HARMLESS_SECTIONS = {
    "user", "remote", "branch", "credential", "http", "gc", "init", "pull", "push", "fetch", "color",
    "alias", "advice", "log", "format", "tag", "rebase", "maintenance", "safe", "gui", "pack", "url",
}  # fmt: skip
_CORE = {
    "repositoryformatversion": ("0",),
    "filemode": ("true",),
    "bare": ("false",),
    "logallrefupdates": ("true", "false", "always"),
    "symlinks": ("true",),
    "ignorecase": ("false",),
    "editor": None,  # any value
    "pager": None,
    "askpass": None,
    "sshcommand": None,
    "excludesfile": None,  # untracked files only
    "quotepath": None,  # how paths are printed, not whether
}
_GIT = ("/usr/bin/git", "/bin/git")  # their system config: /etc/gitconfig
MAX_HASHED = 8_000_000  # bytes of file content hashed at most; more: git decides
_REGULAR, _EXECUTABLE, _LINK = 0o100644, 0o100755, 0o120000
if TYPE_CHECKING:  # an index entry: (path, mode, blob id, (ctime ns, mtime ns, inode, uid, gid, size))
    from typing import Any, TypeAlias

    Entry: TypeAlias = tuple[bytes, int, bytes, tuple[int, int, int, int, int, int]]


def commit(source: str) -> str | _Unknown | None:
    """See the module docstring."""
    try:
        return _commit(str(source))
    except Exception:  # _Ask, or anything unexpected (a truncated file, zlib's error): git decides
        return UNKNOWN


def _commit(source: str) -> str | None:
    for name in os.environ:
        if name.startswith("GIT_") and name not in _HARMLESS_ENV and not name.startswith(_HARMLESS_ENV_PREFIXES):
            raise _Ask
    git = _find_git()
    if git is None:
        return None  # as posix_spawnp's OSError
    if os.path.realpath(git) not in _GIT:
        raise _Ask
    dotgit = os.path.join(source, ".git")
    owned = [source, dotgit]
    if os.path.isdir(dotgit):
        gitdir = common = dotgit
    else:
        gitdir = _read_text(dotgit).removesuffix("\n")
        if not gitdir.startswith("gitdir: ") or "\n" in gitdir:
            raise _Ask
        gitdir = os.path.join(source, gitdir[8:])
        common = gitdir
        if os.path.exists(os.path.join(gitdir, "commondir")):
            common = os.path.join(gitdir, _read_text(os.path.join(gitdir, "commondir")).removesuffix("\n"))
    owned += [gitdir, common]
    _check_owner(owned)
    if not (os.path.isdir(os.path.join(common, "objects")) and os.path.isdir(os.path.join(common, "refs"))):
        raise _Ask
    if os.path.exists(os.path.join(common, "objects", "info", "alternates")):
        raise _Ask
    _check_config(common)
    head = _head(gitdir, common)
    tree = _commit_tree(common, head)
    entries, index_mtime, cached = _index(os.path.join(gitdir, "index"))
    if cached != tree and _tree_of(entries) != tree:  # (a cache tree that differs is checked by hashing)
        return f"{head}-dirty"
    return f"{head}-dirty" if _worktree_differs(source, common, entries, index_mtime) else head


def _find_git() -> str | None:
    path = os.environ.get("PATH")
    if path is None:
        raise _Ask  # posix_spawnp's default path
    for folder in path.split(os.pathsep):
        candidate = os.path.join(folder or ".", "git")
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def _read_text(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def _read_bytes(path: str | bytes) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _check_owner(paths: list[str]) -> None:
    user = os.geteuid()
    if user == 0 and "SUDO_UID" in os.environ:
        raise _Ask
    for path in paths:
        if os.stat(path).st_uid != user:
            raise _Ask


def _check_config(common: str) -> None:
    home = os.environ.get("HOME")
    if not home:
        raise _Ask
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    for path in ("/etc/gitconfig", os.path.join(xdg, "git", "config"), os.path.join(home, ".gitconfig")):
        if os.path.exists(path):
            _check_config_file(path)
    _check_config_file(os.path.join(common, "config"))


def _check_config_file(path: str) -> None:
    section = ""
    for raw in _read_text(path).splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            if not line.endswith("]"):
                raise _Ask
            section = line[1:-1].split('"', 1)[0].strip().lower()
            if section != "core" and section not in _HARMLESS_SECTIONS:
                raise _Ask
            continue
        if not section or line.endswith("\\"):
            raise _Ask
        if section == "core":
            key, eq, value = line.partition("=")
            key = key.strip().lower()
            if not eq or key not in _CORE:
                raise _Ask
            allowed = _CORE[key]
            if allowed is not None and value.split("#", 1)[0].split(";", 1)[0].strip().lower() not in allowed:
                raise _Ask


def _head(gitdir: str, common: str) -> str:
    head = _read_text(os.path.join(gitdir, "HEAD")).removesuffix("\n")
    if not head.startswith("ref: "):
        return _sha(head)
    ref = head[5:]
    if not ref.startswith("refs/heads/") or ".." in ref or "\n" in ref:
        raise _Ask
    loose = os.path.join(common, *ref.split("/"))
    if os.path.isfile(loose):
        return _sha(_read_text(loose).removesuffix("\n"))
    packed = os.path.join(common, "packed-refs")
    if os.path.exists(packed):
        for line in _read_text(packed).splitlines():
            sha, _, name = line.partition(" ")
            if name == ref and not line.startswith(("#", "^")):
                return _sha(sha)
    raise _Ask  # an unborn branch, a ref elsewhere


def _sha(text: str) -> str:
    if len(text) != 40 or text.strip("0123456789abcdef"):
        raise _Ask
    return text


def _commit_tree(common: str, sha: str) -> bytes:
    """The commit's tree id (20 bytes)."""
    data = _object(common, sha)
    if not data.startswith(b"commit "):
        raise _Ask
    header, _, body = data.partition(b"\0")
    if len(body) != int(header[7:]) or _sha1(data).hexdigest() != sha or not body.startswith(b"tree "):
        raise _Ask
    return bytes.fromhex(body[5:45].decode())


def _object(common: str, sha: str) -> bytes:
    """The object's bytes as git hashes them (``type size\\0content``), loose or whole in a pack."""
    import zlib

    objects = os.path.join(common, "objects")
    loose = os.path.join(objects, sha[:2], sha[2:])
    if os.path.exists(loose):
        return zlib.decompress(_read_bytes(loose))
    key = bytes.fromhex(sha)
    packs = os.path.join(objects, "pack")
    for name in sorted(os.listdir(packs)) if os.path.isdir(packs) else ():
        if name.endswith(".idx"):
            offset = _pack_offset(os.path.join(packs, name), key)
            if offset is not None:
                return _packed(os.path.join(packs, name[:-4] + ".pack"), offset)
    raise _Ask


def _pack_offset(idx: str, key: bytes) -> int | None:
    """The object's offset in the pack of index ``idx`` (version 2), or None if not there."""
    with open(idx, "rb") as f:
        head = f.read(8 + 1024)
        if head[:8] != b"\377tOc\0\0\0\2":
            raise _Ask
        fanout = [int.from_bytes(head[8 + 4 * i : 12 + 4 * i], "big") for i in (key[0] - 1, key[0], 255)]
        low = fanout[0] if key[0] else 0
        high, count = fanout[1], fanout[2]
        f.seek(8 + 1024 + 20 * low)
        names = f.read(20 * (high - low))
        for i in range(high - low):  # a few names per first byte: a scan
            if names[20 * i : 20 * i + 20] == key:
                f.seek(8 + 1024 + 24 * count + 4 * (low + i))
                offset = int.from_bytes(f.read(4), "big")
                if offset & 0x80000000:
                    raise _Ask  # a pack over 2 GB
                return offset
    return None


def _packed(pack: str, offset: int) -> bytes:
    import zlib

    with open(pack, "rb") as f:
        f.seek(offset)
        data = f.read(65536)
    kind = (data[0] >> 4) & 7
    size = data[0] & 15
    shift, i = 4, 0
    while data[i] & 0x80:
        i += 1
        size |= (data[i] & 0x7F) << shift
        shift += 7
    if kind != 1:  # a commit stored whole (a delta: git decides)
        raise _Ask
    inflate = zlib.decompressobj()
    content = inflate.decompress(data[i + 1 :], size + 1)
    if len(content) != size or not inflate.eof:
        raise _Ask
    return b"commit %d\0" % size + content


def _index(path: str) -> tuple[list[Entry], tuple[int, int], bytes | None]:
    """The index's entries (path, mode, blob id, stat data), the index file's mtime (s, ns) and the
    root tree id of its cache tree when that is valid (git keeps it equal to ``git write-tree``)."""
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        data = f.read()
    if len(data) < 32 or data[:4] != b"DIRC" or _sha1(data[:-20]).digest() != data[-20:]:
        raise _Ask
    version = int.from_bytes(data[4:8], "big")
    if version not in (2, 3):
        raise _Ask
    count = int.from_bytes(data[8:12], "big")
    entries: list[Entry] = []
    at = 12
    unpack = _struct.Struct(">10I20sH").unpack_from
    for _ in range(count):
        *fields, sha, flags = unpack(data, at)
        if flags & 0xF000:  # assume-valid, extended (skip-worktree, intent-to-add) or a merge stage
            raise _Ask
        mode = fields[6]
        if mode not in (_REGULAR, _EXECUTABLE, _LINK):  # a submodule
            raise _Ask
        end = data.index(b"\0", at + 62)
        name = data[at + 62 : end]
        ctime, mtime = fields[0] * 10**9 + fields[1], fields[2] * 10**9 + fields[3]
        entries.append((name, mode, sha, (ctime, mtime, fields[5], fields[7], fields[8], fields[9])))
        at += (62 + len(name) + 8) & ~7
    tree = None
    while at < len(data) - 20:  # extensions
        signature = data[at : at + 4]
        size = int.from_bytes(data[at + 4 : at + 8], "big")
        if signature == b"TREE":  # the cache tree: its first entry is the root ("" NUL count SP subtrees LF id)
            line_end = data.index(b"\n", at + 8)
            top, _, counts = data[at + 8 : line_end].partition(b"\0")
            if not top and counts.split(b" ")[0] == b"%d" % count:  # valid and of every entry
                tree = data[line_end + 1 : line_end + 21]
        elif signature not in (b"REUC", b"EOIE", b"IEOT"):
            raise _Ask
        at += 8 + size
    if at != len(data) - 20:
        raise _Ask
    return entries, (st.st_mtime_ns // 10**9, st.st_mtime_ns % 10**9), tree


def _tree_of(entries: list[Entry]) -> bytes:
    """The id of the tree the index would write (``git write-tree``)."""
    root: dict[bytes, Any] = {}
    for name, mode, sha, _ in entries:
        *folders, leaf = name.split(b"/")
        node = root
        for folder in folders:
            child = node.setdefault(folder, {})
            if not isinstance(child, dict):
                raise _Ask  # a file and a folder of the same name
            node = child
        node[leaf] = (mode, sha)
    return _hash_tree(root)


def _hash_tree(node: dict[bytes, Any]) -> bytes:
    items = []
    for name, value in node.items():
        if isinstance(value, dict):
            items.append((name + b"/", b"40000 " + name + b"\0" + _hash_tree(value)))
        else:
            mode, sha = value
            items.append((name, b"%o %s\0" % (mode, name) + sha))
    body = b"".join(entry for _, entry in sorted(items))
    return _sha1(b"tree %d\0" % len(body) + body).digest()


def _worktree_differs(source: str, common: str, entries: list[Entry], index_mtime: tuple[int, int]) -> bool:
    import stat

    to_hash = []
    lstat, regular, link = os.lstat, stat.S_ISREG, stat.S_ISLNK
    prefix = os.fsencode(source) + b"/"
    racy = index_mtime[0]
    folders = {name.rpartition(b"/")[0] for name, *_ in entries} - {b""}
    for folder in folders:  # a folder on a tracked path turned into a symlink: git finds its files deleted
        try:
            if not stat.S_ISDIR(lstat(prefix + folder).st_mode):
                return True
        except (FileNotFoundError, NotADirectoryError):
            return True
    for name, mode, sha, recorded in entries:
        path = prefix + name
        try:
            st = lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            return True  # deleted
        if mode == _LINK:
            if not link(st.st_mode):
                return True
        elif not regular(st.st_mode) or (st.st_mode ^ mode) & 0o100:
            return True  # a type or executable-bit change
        # (ctime, mtime, inode, uid, gid, size) as the index records them (git's default checkStat; no dev)
        seen = (st.st_ctime_ns, st.st_mtime_ns, st.st_ino & 0xFFFFFFFF, st.st_uid, st.st_gid, st.st_size & 0xFFFFFFFF)
        if seen != recorded or recorded[1] // 10**9 >= racy:  # changed, or racily clean: the content decides
            to_hash.append((path, mode, sha, st.st_size))
    if to_hash:
        home = os.environ.get("HOME", "")
        xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
        attributes = (
            "/etc/gitattributes",
            os.path.join(xdg, "git", "attributes"),
            os.path.join(common, "info", "attributes"),
        )
        if any(os.path.exists(a) for a in attributes) or any(
            e[0] == b".gitattributes" or e[0].endswith(b"/.gitattributes") for e in entries
        ):
            raise _Ask  # a content git would filter or convert before hashing
        if sum(size for *_, size in to_hash) > MAX_HASHED:
            raise _Ask
    for path, mode, sha, _ in to_hash:
        content = os.readlink(path) if mode == _LINK else _read_bytes(path)  # (bytes: a bytes path)
        if _sha1(b"blob %d\0" % len(content) + content).digest() != sha:
            return True
    return False
