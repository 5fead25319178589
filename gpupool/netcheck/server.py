"""``gpupool netcheck serve``: the responder the probe measures against, bounded in every way.

It runs on a proxy host, so it must be harmless there:

- at most ``max_sessions`` connections at once; more are told "busy" and closed;
- a session ends ``max_seconds`` after it was accepted, whatever the peer does: every read and
  every write waits at most what is left of it (and a read at most ``idle_timeout``), so a peer
  that trickles one byte a second holds a slot no longer than anyone else;
- with a token (``--token-file``), a peer that cannot answer the challenge gets nothing but
  "denied" (see :mod:`gpupool.netcheck.protocol`);
- it echoes, swallows or sends bytes and nothing else: it never opens a file, runs a command or
  connects anywhere; a malformed hello is answered "bad" and the connection closed;
- a failing ``accept`` (out of descriptors, a connection reset before it was accepted) is
  logged and the server goes on; the log is rate-limited (:mod:`gpupool.netcheck.ratelog`), so
  a flood of refused connections cannot fill the disk;
- :meth:`Server.stop` (wired to SIGTERM and SIGINT by the CLI) closes the listening socket,
  gives sessions a short grace to finish, then cuts them, so the process exits promptly.

``echo_delay_us`` adds a fixed delay before every echo: a way to calibrate the probe, or to see
what a slower network would do to a budget, on a machine where ``tc netem`` does not exist.
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import sys
import threading
import time
from collections.abc import Callable

from gpupool.netcheck import protocol as p
from gpupool.netcheck.ratelog import RateLimitedLog

# accept() failures that mean "out of a resource": wait a little instead of spinning on them
_SCARCE = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}


class SessionOver(Exception):
    """The session reached its time limit (``max_seconds`` after it was accepted)."""


class Session:
    """One connection and its deadline: every read and write is bounded by what is left."""

    def __init__(self, conn: socket.socket, deadline: float, idle_timeout: float) -> None:
        self.conn = conn
        self.deadline = deadline
        self.idle = idle_timeout

    def _bound(self, idle: bool) -> None:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise SessionOver
        self.conn.settimeout(min(left, self.idle) if idle else left)

    def recv_into(self, view: memoryview) -> int:
        self._bound(idle=True)
        try:
            return self.conn.recv_into(view)
        except TimeoutError:
            if time.monotonic() >= self.deadline:
                raise SessionOver from None
            raise

    def recv_exact(self, view: memoryview) -> bool:
        """Fill ``view``; False on a clean end of stream before the first byte."""
        got = 0
        while got < len(view):
            n = self.recv_into(view[got:])
            if n == 0:
                if got == 0:
                    return False
                raise ConnectionError("connection closed in the middle of a message")
            got += n
        return True

    def sendall(self, data: bytes | memoryview) -> None:
        self._bound(idle=False)
        try:
            self.conn.sendall(data)
        except TimeoutError:
            raise SessionOver from None


def _wait_us(delay_us: float) -> None:
    """Wait ``delay_us`` precisely: sleep most of it, spin the rest (sleep overshoots)."""
    end = time.perf_counter_ns() + int(delay_us * 1000)
    if delay_us > 1000:  # sleep overshoots by tens to hundreds of µs on a busy machine
        time.sleep((delay_us - 600) / 1e6)
    while time.perf_counter_ns() < end:
        pass


def _stderr(line: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        print(line, file=sys.stderr, flush=True)


class Server:
    """A listening socket and the sessions on it (see the module docstring for the bounds)."""

    def __init__(self, bind: str = "127.0.0.1", port: int = p.DEFAULT_PORT, *,
                 max_sessions: int = 8, idle_timeout: float = 10.0, max_seconds: float = 30.0,
                 echo_delay_us: float = 0.0, token: bytes | None = None,
                 log: Callable[[str], None] | None = None) -> None:
        if not bind.strip():
            raise ValueError("an empty address listens on every interface: name one")
        family = socket.AF_INET6 if ":" in bind else socket.AF_INET
        self.sock = socket.create_server((bind, port), family=family, backlog=64)
        self.max_seconds = max_seconds
        self.idle_timeout = idle_timeout
        self.echo_delay_us = echo_delay_us
        self.token = token
        self.log = log if log is not None else RateLimitedLog(_stderr)
        self._slots = threading.BoundedSemaphore(max_sessions)
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._sessions: dict[socket.socket, threading.Thread] = {}

    @property
    def address(self) -> tuple[str, int]:
        host, port = self.sock.getsockname()[:2]
        return str(host), int(port)

    def serve_forever(self, grace: float = 2.0) -> None:
        """Accept sessions until :meth:`stop`; then let them finish for ``grace`` seconds."""
        self.sock.settimeout(0.2)  # wake up to notice a stop
        try:
            while not self._stopping.is_set():
                try:
                    conn, peer = self.sock.accept()
                except TimeoutError:
                    continue
                except OSError as e:
                    if self._stopping.is_set():
                        break
                    self.log(f"accept failed ({os.strerror(e.errno) if e.errno else e}); "
                             "still listening")
                    if e.errno in _SCARCE:
                        self._stopping.wait(0.1)  # until a session ends and frees one
                    continue
                self._start(conn, peer)
        finally:
            with contextlib.suppress(OSError):
                self.sock.close()
            self._finish(grace)

    def stop(self) -> None:
        """Stop accepting; safe from a signal handler or another thread."""
        self._stopping.set()

    def _start(self, conn: socket.socket, peer: tuple[str, int]) -> None:
        if not self._slots.acquire(blocking=False):
            self.log(f"refused {peer[0]}:{peer[1]}: session limit reached")
            with contextlib.suppress(OSError):
                conn.setblocking(False)
                conn.send(p.BUSY)
            conn.close()
            return
        accepted = time.monotonic()
        thread = threading.Thread(target=self._session, args=(conn, peer, accepted),
                                  daemon=True)
        with self._lock:
            self._sessions[conn] = thread
        try:
            thread.start()
        except RuntimeError:  # no thread to be had: the session cannot run
            with self._lock:
                self._sessions.pop(conn, None)
            conn.close()
            self._slots.release()
            self.log(f"refused {peer[0]}:{peer[1]}: cannot start a session thread")

    def _finish(self, grace: float) -> None:
        deadline = time.monotonic() + grace
        with self._lock:
            sessions = list(self._sessions.items())
        for _, thread in sessions:
            thread.join(max(0.0, deadline - time.monotonic()))
        with self._lock:
            sessions = list(self._sessions.items())
        for conn, thread in sessions:  # still running after the grace: cut them
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
            thread.join(1.0)

    def _session(self, conn: socket.socket, peer: tuple[str, int], accepted: float) -> None:
        where = f"{peer[0]}:{peer[1]}"
        session = Session(conn, accepted + self.max_seconds, self.idle_timeout)
        try:
            line = f"{where}: {self._serve(session)}"
        except SessionOver:
            line = f"{where}: ended at the session time limit ({self.max_seconds:g} s)"
        except (OSError, ConnectionError) as e:
            line = f"{where}: ended ({e.__class__.__name__}: {e})"
        finally:
            with contextlib.suppress(OSError):
                conn.close()
            with self._lock:
                self._sessions.pop(conn, None)
            self._slots.release()
        self.log(line)  # once the slot is free: a slow log never holds one

    def _serve(self, s: Session) -> str:
        """The session after its hello: what it did, as a log line."""
        s.conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        head = bytearray(p.HELLO.size)
        if not s.recv_exact(memoryview(head)):
            return "closed before its hello"
        magic, version, mode, _, param = p.HELLO.unpack(head)
        if magic == p.MAGIC and version != p.VERSION:
            s.sendall(p.OTHER_VERSION)
            return f"protocol version {version} (this server speaks {p.VERSION}), closed"
        if magic != p.MAGIC or mode not in p.MODES or (
                mode == p.ECHO and not 0 < param <= p.MAX_ECHO_BYTES):
            s.sendall(p.BAD)
            return "bad hello, closed"
        if self.token is not None and not self._admitted(s, bytes(head)):
            return "wrong token, denied"
        s.sendall(p.OK)
        if mode == p.ECHO:
            done = self._echo(s, param)
        elif mode == p.SINK:
            done = self._sink(s)
        else:
            done = self._source(s, param / 1000.0)
        return f"{p.MODES[mode]}, {done}"

    def _admitted(self, s: Session, greeting: bytes) -> bool:
        assert self.token is not None
        nonce = os.urandom(p.NONCE_BYTES)
        s.sendall(p.CHALLENGE + nonce)
        got = bytearray(32)
        if not s.recv_exact(memoryview(got)) or not p.answer_ok(self.token, nonce, greeting,
                                                                bytes(got)):
            with contextlib.suppress(OSError, SessionOver):
                s.sendall(p.DENIED)
            return False
        return True

    def _echo(self, s: Session, size: int) -> str:
        view = memoryview(bytearray(size))
        count = 0
        while not self._stopping.is_set():
            if not s.recv_exact(view):
                break
            if self.echo_delay_us:
                _wait_us(self.echo_delay_us)
            s.sendall(view)
            count += 1
        return f"{count:,} messages of {size} bytes echoed"

    def _sink(self, s: Session) -> str:
        buf = memoryview(bytearray(p.CHUNK))
        total = 0
        while not self._stopping.is_set():
            n = s.recv_into(buf)
            if n == 0:
                break
            total += n
        else:
            raise ConnectionError("the server is stopping")
        s.sendall(p.RESULT.pack(total))
        return f"{total:,} bytes received"

    def _source(self, s: Session, seconds: float) -> str:
        chunk = memoryview(bytes(p.CHUNK))
        end = min(time.monotonic() + seconds, s.deadline)
        total = 0
        while time.monotonic() < end and not self._stopping.is_set():
            s.sendall(chunk)
            total += len(chunk)
        s.conn.shutdown(socket.SHUT_WR)
        return f"{total:,} bytes sent"
