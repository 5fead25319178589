"""``gpupool netcheck serve``: the responder the probe measures against, bounded in every way.

It runs on a proxy host, so it must be harmless there:

- at most ``max_sessions`` connections at once; more are told "busy" and closed;
- every read waits at most ``idle_timeout`` seconds, and a session lasts at most
  ``max_seconds`` (a sink stops reading, a source stops sending, an echo stops answering);
- it echoes, swallows or sends bytes and nothing else: it never opens a file, runs a command or
  connects anywhere; a malformed hello is answered "bad" and the connection closed;
- :meth:`Server.stop` (wired to SIGTERM and SIGINT by the CLI) closes the listening socket,
  gives sessions a short grace to finish, then cuts them, so the process exits promptly.

``echo_delay_us`` adds a fixed delay before every echo: a way to calibrate the probe, or to see
what a slower network would do to a budget, on a machine where ``tc netem`` does not exist.
"""

from __future__ import annotations

import contextlib
import socket
import sys
import threading
import time
from collections.abc import Callable

from gpupool.netcheck import protocol as p


def _recv_exact(conn: socket.socket, view: memoryview) -> bool:
    """Fill ``view``; False on a clean end of stream before the first byte."""
    got = 0
    while got < len(view):
        n = conn.recv_into(view[got:])
        if n == 0:
            if got == 0:
                return False
            raise ConnectionError("connection closed in the middle of a message")
        got += n
    return True


def _wait_us(delay_us: float) -> None:
    """Wait ``delay_us`` precisely: sleep most of it, spin the rest (sleep overshoots)."""
    end = time.perf_counter_ns() + int(delay_us * 1000)
    if delay_us > 1000:  # sleep overshoots by tens to hundreds of µs on a busy machine
        time.sleep((delay_us - 600) / 1e6)
    while time.perf_counter_ns() < end:
        pass


class Server:
    """A listening socket and the sessions on it (see the module docstring for the bounds)."""

    def __init__(self, bind: str = "127.0.0.1", port: int = p.DEFAULT_PORT, *,
                 max_sessions: int = 8, idle_timeout: float = 10.0, max_seconds: float = 30.0,
                 echo_delay_us: float = 0.0, log: Callable[[str], None] | None = None) -> None:
        family = socket.AF_INET6 if ":" in bind else socket.AF_INET
        self.sock = socket.create_server((bind, port), family=family, backlog=64)
        self.max_seconds = max_seconds
        self.idle_timeout = idle_timeout
        self.echo_delay_us = echo_delay_us
        self.log = log or (lambda line: print(line, file=sys.stderr, flush=True))
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
                except OSError:
                    if self._stopping.is_set():
                        break
                    raise
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
            with contextlib.suppress(OSError):
                conn.sendall(p.BUSY)
            conn.close()
            self.log(f"refused {peer[0]}:{peer[1]}: session limit reached")
            return
        thread = threading.Thread(target=self._session, args=(conn, peer), daemon=True)
        with self._lock:
            self._sessions[conn] = thread
        thread.start()

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

    def _session(self, conn: socket.socket, peer: tuple[str, int]) -> None:
        where = f"{peer[0]}:{peer[1]}"
        try:
            conn.settimeout(self.idle_timeout)
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            head = bytearray(p.HELLO.size)
            if not _recv_exact(conn, memoryview(head)):
                return
            magic, version, mode, _, param = p.HELLO.unpack(head)
            if magic != p.MAGIC or version != p.VERSION or mode not in p.MODES or (
                    mode == p.ECHO and not 0 < param <= p.MAX_ECHO_BYTES):
                conn.sendall(p.BAD)
                self.log(f"{where}: bad hello, closed")
                return
            conn.sendall(p.OK)
            deadline = time.monotonic() + self.max_seconds
            if mode == p.ECHO:
                done = self._echo(conn, param, deadline)
            elif mode == p.SINK:
                done = self._sink(conn, deadline)
            else:
                done = self._source(conn, min(param / 1000.0, self.max_seconds))
            self.log(f"{where}: {p.MODES[mode]}, {done}")
        except (OSError, ConnectionError) as e:
            self.log(f"{where}: ended ({e.__class__.__name__}: {e})")
        finally:
            with contextlib.suppress(OSError):
                conn.close()
            with self._lock:
                self._sessions.pop(conn, None)
            self._slots.release()

    def _echo(self, conn: socket.socket, size: int, deadline: float) -> str:
        buf = bytearray(size)
        view = memoryview(buf)
        count = 0
        while not self._stopping.is_set() and time.monotonic() < deadline:
            if not _recv_exact(conn, view):
                break
            if self.echo_delay_us:
                _wait_us(self.echo_delay_us)
            conn.sendall(view)
            count += 1
        return f"{count:,} messages of {size} bytes echoed"

    def _sink(self, conn: socket.socket, deadline: float) -> str:
        buf = memoryview(bytearray(p.CHUNK))
        total = counted = first = last = 0
        while time.monotonic() < deadline and not self._stopping.is_set():
            n = conn.recv_into(buf)
            if n == 0:
                break
            last = time.monotonic_ns()
            if total == 0:
                first = last  # the first read's bytes arrived before it: not counted
            else:
                counted += n
            total += n
        else:
            raise TimeoutError("session time limit reached before the client finished")
        conn.sendall(p.RESULT.pack(counted, first, last))
        return f"{total:,} bytes received"

    def _source(self, conn: socket.socket, seconds: float) -> str:
        chunk = memoryview(bytes(p.CHUNK))
        end = time.monotonic() + seconds
        total = 0
        while time.monotonic() < end and not self._stopping.is_set():
            conn.sendall(chunk)
            total += len(chunk)
        conn.shutdown(socket.SHUT_WR)
        return f"{total:,} bytes sent"
