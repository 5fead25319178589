"""Write a set of files into a directory (``--out DIR``) safely: no symlink is followed out of
it, and the set is written whole or not at all.

``gpupool render STACK --out DIR`` writes into a directory that is often a checkout of a GitOps
repository, where a pull request can put anything, symbolic links included. So, below ``DIR``
(which the user named, and may itself be a link):

- a subdirectory that is a symbolic link is refused (one line naming it), never entered: a
  link ``DIR/pool -> ~/.ssh`` would otherwise have the files written into the user's home;
- a file that is a symbolic link is replaced by the new file (the link, not what it points
  to): a link ``DIR/pool/001-x.yaml -> ~/.bashrc`` leaves ``~/.bashrc`` as it was;
- every file is first written under a temporary name beside its target, then all are renamed
  into place (``rename`` replaces a name atomically): a failure part-way (a full disk) leaves
  every target as it was and removes the temporaries; a reader never sees half a file;
- a file whose bytes would not change is not touched (its timestamp stays);
- stale files the caller owns (``ours`` reads their first bytes) are removed afterwards;
  symbolic links and anything else are left alone.

Every directory is opened once and everything below it is done relative to that descriptor
(``openat``, ``renameat``, ``unlinkat``), so swapping a directory for a link mid-way cannot
redirect a write either.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Callable, Mapping
from pathlib import Path, PurePosixPath

from gpupool.errors import InputError

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_PEEK = 4096  # bytes of a stale file ``ours`` is shown


def write_tree(out: str | Path, files: Mapping[str, str], *, option: str = "--out",
               ours: Callable[[bytes], bool] = lambda head: False,
               stale_suffix: str = ".yaml") -> list[Path]:
    """Write ``files`` (relative POSIX path → text) under ``out``; returns the paths, in order.

    Stale files, in the directories written to, are those ending in ``stale_suffix``, not in
    ``files``, regular (not links) and ``ours``. Any failure is one :class:`InputError` line.
    """
    name = str(out)
    if not name.strip():
        raise InputError(f"{option}: expected a directory, got an empty string")
    root = Path(name)
    groups = _grouped(files, option)
    try:
        root.mkdir(parents=True, exist_ok=True)
        root_fd = os.open(root, _DIR_FLAGS)
    except OSError as e:
        raise _cannot(option, name, e) from None
    fds: dict[tuple[str, ...], int] = {(): root_fd}
    staged: list[tuple[int, str, str]] = []  # (directory fd, temporary name, final name)
    try:
        for folder in groups:
            _open_folder(fds, folder, option, name)
        for folder, entries in groups.items():
            fd = fds[folder]
            for base, text in entries:
                data = text.encode("utf-8")
                if not _same(fd, base, data):
                    staged.append((fd, _stage(fd, base, data), base))
        for fd, tmp, base in staged:
            os.replace(tmp, base, src_dir_fd=fd, dst_dir_fd=fd)
        staged.clear()
        for folder, entries in groups.items():
            _remove_stale(fds[folder], {base for base, _ in entries}, ours, stale_suffix)
    except OSError as e:
        raise _cannot(option, name, e) from None
    finally:
        for fd, tmp, _ in staged:  # a failure before the renames: nothing of it is left
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=fd)
        for fd in fds.values():
            os.close(fd)
    return [root.joinpath(*folder, base) for folder, entries in groups.items()
            for base, _ in entries]


def _grouped(files: Mapping[str, str], option: str) -> dict[tuple[str, ...], list[tuple[str, str]]]:
    groups: dict[tuple[str, ...], list[tuple[str, str]]] = {}
    for rel, text in files.items():
        parts = PurePosixPath(rel).parts
        if not parts or any(p in ("", ".", "..", "/") or "\0" in p for p in parts):
            raise InputError(f"{option}: cannot write {rel!r}: expected a path inside the "
                             "directory")
        groups.setdefault(parts[:-1], []).append((parts[-1], text))
    return groups


def _open_folder(fds: dict[tuple[str, ...], int], folder: tuple[str, ...], option: str,
                 name: str) -> None:
    """Open (making it when missing) every level of ``folder`` below the root, never through
    a symbolic link."""
    for depth in range(1, len(folder) + 1):
        here = folder[:depth]
        if here in fds:
            continue
        parent, part = fds[here[:-1]], here[-1]
        with contextlib.suppress(FileExistsError):
            os.mkdir(part, 0o777, dir_fd=parent)
        try:
            fds[here] = os.open(part, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=parent)
        except OSError as e:
            if e.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(parent, part):
                raise InputError(f"{option} {name}: {'/'.join(here)} is a symbolic link; "
                                 "refusing to write through it (it can point anywhere): "
                                 "remove it, or give another directory") from None
            raise


def _is_link(dir_fd: int, base: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(base, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _same(dir_fd: int, base: str, data: bytes) -> bool:
    """True when ``base`` is a regular file (not a link) holding exactly ``data``."""
    try:
        fd = os.open(base, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                     dir_fd=dir_fd)
    except OSError:
        return False  # missing, a link (ELOOP), unreadable: written anew
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        return stat.S_ISREG(st.st_mode) and st.st_size == len(data) and f.read() == data


def _stage(dir_fd: int, base: str, data: bytes) -> str:
    """``data`` in a new temporary file beside ``base``; its name."""
    mask = os.umask(0)
    os.umask(mask)
    while True:
        tmp = f".{base}.{secrets.token_hex(4)}.tmp"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                         0o666 & ~mask, dir_fd=dir_fd)
            break
        except FileExistsError:
            continue
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
    return tmp


def _remove_stale(dir_fd: int, keep: set[str], ours: Callable[[bytes], bool],
                  suffix: str) -> None:
    for entry in os.scandir(dir_fd):
        if entry.name in keep or not entry.name.endswith(suffix) or entry.name.startswith("."):
            continue
        if not entry.is_file(follow_symlinks=False):
            continue
        try:
            fd = os.open(entry.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                         dir_fd=dir_fd)
        except OSError:
            continue
        with os.fdopen(fd, "rb") as f:
            head = f.read(_PEEK)
        if ours(head):
            os.unlink(entry.name, dir_fd=dir_fd)


def _cannot(option: str, name: str, e: OSError) -> InputError:
    return InputError(f"{option} {name}: cannot write there ({e.strerror or e})")


__all__ = ["write_tree"]
