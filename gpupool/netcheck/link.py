"""How the probe reaches a netcheck server: the target, the overall deadline, the hello.

``HOST:PORT`` is checked before any traffic (an IP address, or a DNS name whose labels the
resolver accepts), resolved once so every connection of the probe goes to the same address, and
every connection says hello (answering the server's challenge with the shared token when it
asks, see :mod:`gpupool.netcheck.protocol`). :class:`Deadline` bounds the whole probe: every
connect, read and write waits at most what is left of it.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import time
from dataclasses import dataclass

from gpupool.errors import InputError
from gpupool.netcheck import protocol as p

_LABEL = re.compile(r"^(?!-)[A-Za-z0-9_-]{1,63}(?<!-)$")


def parse_target(text: str) -> tuple[str, int]:
    """``HOST:PORT`` or ``[IPv6]:PORT`` → (host, port); InputError otherwise.

    HOST is an IP address or a DNS name (labels of 1-63 letters, digits, ``-`` or ``_``, 253
    characters in all), checked here: a longer label would fail deep in the resolver."""
    host, sep, port = text.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise InputError(f"HOST:PORT: expected a host and a port such as 10.0.1.7:"
                         f"{p.DEFAULT_PORT}, got {text!r}")
    try:
        ipaddress.ip_address(host)
    except ValueError:
        name = host.removesuffix(".")
        if len(name) > 253 or not all(_LABEL.match(label) for label in name.split(".")):
            raise InputError(f"HOST:PORT: expected an IP address or a host name (labels of 1-63 "
                             f"letters, digits or hyphens, 253 characters in all), got "
                             f"{text[:80]!r}{'...' if len(text) > 80 else ''}") from None
    return host, int(port)


class Deadline:
    """The probe's overall deadline: each network wait is bounded by what is left of it."""

    def __init__(self, seconds: float, target: str) -> None:
        self.seconds = seconds
        self.target = target
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        return self.end - time.monotonic()

    def passed(self) -> bool:
        return self.left() <= 0

    def error(self, during: str) -> InputError:
        return InputError(f"{self.target}: the probe's deadline of {self.seconds:g} s "
                          f"(--deadline) passed during {during}; the server is slow, busy or "
                          "not a netcheck server")

    def timeout(self, wait: float, during: str) -> float:
        """``wait``, or less when the deadline is nearer; InputError once it has passed."""
        left = self.left()
        if left <= 0:
            raise self.error(during)
        return min(wait, left)


@dataclass(frozen=True)
class Link:
    """Where and how to reach the server: its address, the token, the deadline."""

    host: str  # what to connect to (the address, once resolved)
    port: int
    timeout: float = 5.0
    token: bytes | None = None
    deadline: Deadline | None = None
    name: str = ""  # the host as the user wrote it, for messages

    @property
    def target(self) -> str:
        return f"{self.name or self.host}:{self.port}"

    def wait(self, during: str) -> float:
        return self.timeout if self.deadline is None else self.deadline.timeout(self.timeout,
                                                                                 during)

    def bound(self, conn: socket.socket, during: str) -> None:
        conn.settimeout(self.wait(during))

    def failed(self, during: str, e: BaseException) -> InputError:
        if self.deadline is not None and self.deadline.passed():
            return self.deadline.error(during)
        return InputError(f"{self.target}: {during} failed ({e})")


def resolve(host: str, port: int) -> str:
    """The address to use for every connection of the probe (resolved once)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as e:
        raise InputError(f"{host}:{port}: cannot resolve {host} "
                         f"({getattr(e, 'strerror', None) or e})") from None
    return str(infos[0][4][0])


def recv_exactly(conn: socket.socket, n: int, link: Link, during: str) -> bytes:
    """``n`` bytes, each read bounded by what is left of the deadline (a peer that trickles
    them cannot stretch it)."""
    data = b""
    while len(data) < n:
        link.bound(conn, during)
        more = conn.recv(n - len(data))
        if not more:
            raise ConnectionError("the server closed the connection")
        data += more
    return data


def connect(link: Link, mode: int, param: int) -> socket.socket:
    during = "the connection"
    try:
        conn = socket.create_connection((link.host, link.port), timeout=link.wait(during))
    except OSError as e:
        if link.deadline is not None and link.deadline.passed():
            raise link.deadline.error(during) from None
        raise InputError(f"{link.target}: cannot connect ({e.strerror or e}); is "
                         "`gpupool netcheck serve` running there, and the port open?") from None
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    greeting = p.hello(mode, param)
    try:
        link.bound(conn, "the hello")
        conn.sendall(greeting)
        status = conn.recv(1)
        if status == p.CHALLENGE:
            nonce = recv_exactly(conn, p.NONCE_BYTES, link, "the hello")
            if link.token is None:
                raise InputError(f"{link.target}: the server asks for a token: give the same "
                                 "--token-file as the server's")
            conn.sendall(p.answer(link.token, nonce, greeting))
            status = conn.recv(1)
    except InputError:
        conn.close()
        raise
    except (OSError, ConnectionError) as e:
        conn.close()
        raise link.failed("the hello", e) from None
    if status == p.OK:
        return conn
    conn.close()
    raise InputError(f"{link.target}: {_REFUSALS.get(status, _unknown(status))}")


_REFUSALS = {
    p.BUSY: "the server is at its session limit; try again",
    p.DENIED: "the server denied the token: give the same --token-file as the server's",
    p.OTHER_VERSION: "the server speaks another netcheck protocol version: run the same "
                     "gpupool version on both ends",
    p.BAD: "the server refused the hello (a gpupool netcheck server of another version? run "
           "the same gpupool version on both ends)",
}


def _unknown(status: bytes) -> str:
    return f"expected a gpupool netcheck server (answer {status!r} to the hello)"
