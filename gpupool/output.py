"""Write a command's output where ``--output PATH`` points: the one helper every command uses.

Use it for any ``--output``/``--chart``/report path a command writes::

    from gpupool.output import write_output
    to_stdout = write_output(args.output, text)      # raises InputError (exit 2) on failure
    status = sys.stderr if to_stdout else sys.stdout   # keep status lines out of the data

What the path names decides how it is written, so ``--output`` never destroys what it points at:

- ``-``, ``/dev/stdout``, ``/dev/fd/1``, ``/proc/self/fd/1`` (or a symlink to one of them):
  standard output itself, as if printed (a closed pipe is not an error: see
  :func:`write_stdout`). ``/dev/stderr`` and other ``/dev/fd/N`` write to that descriptor.
- A regular file, or a new one: written whole or not at all (a temporary file in the same
  directory, renamed over the target), so a CI step never uploads half a SARIF file. The file
  keeps its permissions; a new one gets the usual ``0666 & ~umask``.
- A symlink: the file it points to is replaced; the link itself stays a link.
- A character device (``/dev/null``, a terminal), a named pipe (FIFO) or a socket: written
  through, never replaced by a regular file. A FIFO without a reader fails after
  ``GPUPOOL_FIFO_TIMEOUT`` seconds instead of hanging (see :mod:`gpupool.fifo`).
- A directory, or a place that cannot be written: one :class:`InputError` line naming the
  option and the path.

:func:`write_stdout` and :func:`console` are the pieces for plain standard output: both treat a
reader that went away (``gpupool plan dev | head -1``) as the end of the output, not a failure.
"""

from __future__ import annotations

import io
import os
import re
import stat
import sys

from gpupool.errors import InputError

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Final

    from rich.console import Console

STDOUT: Final = "-"
_MAX_LINKS: Final = 40
# (patterns compiled on first use, by re's cache: most runs never ask, and each costs 0.1-0.3 ms)
_FD_ALIAS: Final = (
    r"^/(?:dev/std(?P<std>in|out|err)|dev/fd/(?P<fd>\d+)|proc/(?:self|thread-self|(?P<pid>\d+))"
    r"/fd/(?P<pfd>\d+))$"
)
_STD: Final = {"in": 0, "out": 1, "err": 2}


def write_output(path: str | Path, text: str | bytes, *, option: str = "--output") -> bool:
    """Write ``text`` (or its UTF-8 bytes) to what ``path`` names (see the module docstring).

    Returns True when the text went to standard output, so the caller can send its own status
    line to stderr instead of mixing it into the data. Every failure is one InputError line.
    """
    name = str(path)
    if name == STDOUT:
        write_stdout(text)
        return True
    try:
        fd, target = _resolve(name)
    except OSError as e:
        raise _cannot(option, name, e) from None
    if fd is not None:
        return _write_descriptor(fd, text, option, name)
    try:
        st: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise _cannot(option, name, e) from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise InputError(f"{option} {name}: is a directory, expected a file")
    if st is not None and not stat.S_ISREG(st.st_mode):
        _write_through(target, st, text, option, name)
    else:
        _replace_atomically(target, text, option, name,
                            None if st is None else stat.S_IMODE(st.st_mode))
    return False


def _resolve(name: str) -> tuple[int | None, str]:
    """(descriptor, path) after following symlinks hop by hop: a descriptor when a hop is one of
    the ``/dev/std*``, ``/dev/fd/N``, ``/proc/self/fd/N`` aliases, else the final path (which
    may not exist yet: a dangling symlink's target is where the file goes)."""
    current = os.path.abspath(name)
    for _ in range(_MAX_LINKS):
        fd = _fd_of(current)
        if fd is not None:
            return fd, current
        try:
            link = os.readlink(current)
        except (FileNotFoundError, NotADirectoryError):
            return None, current
        except OSError as e:
            import errno  # (not on a check's start-up: 0.2 M instructions)

            if e.errno == errno.EINVAL:  # not a symlink
                return None, current
            raise
        current = os.path.normpath(os.path.join(os.path.dirname(current), link))
        # a parent directory may be a symlink too: resolve it, keeping the last component
        current = os.path.join(os.path.realpath(os.path.dirname(current)),
                               os.path.basename(current))
    raise OSError(40, "too many levels of symbolic links")


def _fd_of(path: str) -> int | None:
    if not path.startswith(("/dev/", "/proc/")):
        return None
    m = re.match(_FD_ALIAS, path)
    if m is None:
        return None
    if m.group("pid") is not None and int(m.group("pid")) != os.getpid():
        return None  # another process's descriptor: an ordinary path to open
    if m.group("std") is not None:
        return _STD[m.group("std")]
    return int(m.group("fd") or m.group("pfd"))


def _write_descriptor(fd: int, text: str | bytes, option: str, name: str) -> bool:
    if fd == 1:
        write_stdout(text)
        return True
    if fd == 2:
        sys.stderr.write(_text(text))
        sys.stderr.flush()
        return False
    try:
        _write_all(fd, _utf8(text))
    except OSError as e:
        raise _cannot(option, name, e) from None
    return False


def _write_through(target: str, st: os.stat_result, text: str | bytes, option: str,
                   name: str) -> None:
    """A device, FIFO or socket: open it and write, never replace it."""
    from gpupool import fifo

    try:
        if stat.S_ISFIFO(st.st_mode):
            fd = fifo.open_for_writing(target, name, option)
        else:
            fd = os.open(target, os.O_WRONLY)
        try:
            _write_all(fd, _utf8(text))
        finally:
            os.close(fd)
    except BrokenPipeError:
        return  # the reader went away: as with stdout, the end of the output
    except OSError as e:
        raise _cannot(option, name, e) from None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _replace_atomically(path: str, text: str | bytes, option: str, name: str,
                        mode: int | None) -> None:
    """``path`` (absolute, resolved: see :func:`_resolve`) replaced by a file of ``text``."""
    try:
        fd, tmp = _mkstemp(os.path.dirname(path), f".{os.path.basename(path)}.")
    except OSError as e:
        raise _cannot(option, name, e) from None
    try:
        os.fchmod(fd, mode if mode is not None else 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as f:
            f.write(_utf8(text))
        os.replace(tmp, path)
    except OSError as e:
        try:  # noqa: SIM105 (contextlib.suppress: contextlib is not on a check's start-up)
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise _cannot(option, name, e) from None


def _utf8(text: str | bytes) -> bytes:
    return text if isinstance(text, bytes) else text.encode("utf-8")


def _text(text: str | bytes) -> str:
    return text.decode("utf-8") if isinstance(text, bytes) else text


def _mkstemp(directory: str | Path, prefix: str) -> tuple[int, str]:
    """``tempfile.mkstemp(prefix=prefix, dir=directory)`` without tempfile (which imports
    shutil and random: 3 ms of a check's start-up): a new file of a random name, created
    exclusively (never through a symbolic link), readable by its owner only; its absolute path."""
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(10000):  # tempfile.TMP_MAX tries
        where = os.path.abspath(os.path.join(directory, prefix + os.urandom(6).hex()))
        try:
            return os.open(where, flags, 0o600), where
        except FileExistsError:
            continue
    import errno

    raise FileExistsError(errno.EEXIST, "no usable temporary file name found")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _cannot(option: str, name: str, e: OSError) -> InputError:
    return InputError(f"{option} {name}: cannot write there ({e.strerror or e})")


# --------------------------------------------------------------------------- stdout


def write_stdout(text: str | bytes) -> None:
    """Print ``text`` (or its UTF-8 bytes) to standard output; a reader that went away ends the
    output quietly.

    A closed pipe (``| head -1``) raises nothing here: the caller's own exit code stands (0 for
    ``plan`` and ``catalog``; ``check`` keeps its verdict, so a failing check never exits 0 under
    ``set -o pipefail``). A stdout that cannot encode a character degrades it instead of
    crashing. Bytes go to the interpreter's own UTF-8 standard output as they are, after what
    was printed before (its text layer would encode the text again: 2.2 M instructions of a
    1k-resource check's JSON report).
    """
    try:
        if isinstance(text, bytes):
            stdout = sys.stdout
            if stdout is sys.__stdout__ and os.linesep == "\n" and _is_utf8(stdout.encoding):
                buffer = getattr(stdout, "buffer", None)
                if isinstance(buffer, io.BufferedWriter):
                    stdout.flush()
                    buffer.write(text)
                    buffer.flush()
                    return
                if isinstance(buffer, io.FileIO):  # unbuffered (python -u, PYTHONUNBUFFERED)
                    stdout.flush()
                    _write_all(buffer.fileno(), text)  # a raw write may take part of it
                    return
            text = text.decode("utf-8")
        try:
            sys.stdout.write(text)
        except UnicodeEncodeError:
            encoding = sys.stdout.encoding or "ascii"
            sys.stdout.write(text.encode(encoding, "replace").decode(encoding))
        sys.stdout.flush()
    except BrokenPipeError:
        stdout_gone()


def _is_utf8(encoding: str | None) -> bool:
    if encoding is None:
        return False
    if encoding == "utf-8":
        return True
    import codecs

    try:
        return codecs.lookup(encoding).name == "utf-8"
    except LookupError:
        return False


def stdout_gone() -> None:
    """Point descriptor 1 at /dev/null after the reader left, so the interpreter's final flush
    does not raise (and print "Exception ignored ...") again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def console(**kwargs: Any) -> Console:
    """A rich Console on stdout whose closed pipe raises BrokenPipeError (the CLI exits 0 on it)
    instead of rich's own ``SystemExit(1)``."""
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            stdout_gone()
            raise BrokenPipeError

    return _Console(**kwargs)
