"""``gpupool netcheck probe``: measure the round trip and the bandwidth to a netcheck server.

- RTT: one connection with TCP_NODELAY on both ends; a small message (64 bytes by default,
  the size of a remoted call's request) is sent and its echo awaited, over and over; the first
  ``WARMUP`` round trips are dropped (connection set-up, cold caches). The figures include the
  probe's own software overhead (a Python send and receive on each end, a few µs on loopback;
  the floor is measured in bench/), as a remoting layer's calls include its own.
- Bandwidth, both directions one after the other: ``streams`` connections send at once from
  the client to the server (the direction of ``bytes_to_gpu``), and the server times what it
  receives on one clock; then ``streams`` connections ask the server to send (SOURCE, the
  direction of ``bytes_from_gpu``) and the client times what it receives on its own clock. In
  both the aggregate is the bytes over the union of the streams' windows, the first read of
  each stream excluded (its bytes arrived before the clock started). ``--streams 1`` is what
  one remoted connection gets: on EC2 one flow is capped below an instance's bandwidth. The
  two directions can differ (asymmetric shaping, a busy proxy NIC, different instance types at
  the two ends), which one direction alone would hide.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from gpupool.errors import InputError
from gpupool.netcheck import protocol as p

Sample = tuple[int, int, int]  # a stream's bytes counted, first and last read (ns)

WARMUP = 50
MAX_ROUND_TRIPS = 1_000_000


@dataclass(frozen=True)
class Rtt:
    samples: int
    p50: float
    p99: float
    max: float
    min: float
    mean: float


TO_SERVER = "client to server"
FROM_SERVER = "server to client"


@dataclass(frozen=True)
class Bandwidth:
    gbps: float
    bytes: int
    seconds: float
    streams: int
    direction: str = TO_SERVER


def _aggregate(host: str, port: int, done: list[Sample], streams: int,
               direction: str) -> Bandwidth:
    """Bytes over the union of the streams' windows, ``(bytes, first_ns, last_ns)`` each, all
    on one clock."""
    total = sum(r[0] for r in done)
    window = (max(r[2] for r in done) - min(r[1] for r in done)) / 1e9
    if window <= 0 or total == 0:
        raise InputError(f"{host}:{port}: too little data to time ({direction}); give more "
                         "--seconds")
    return Bandwidth(gbps=total * 8 / window / 1e9, bytes=total, seconds=window,
                     streams=streams, direction=direction)


def parse_target(text: str) -> tuple[str, int]:
    """``HOST:PORT`` or ``[IPv6]:PORT`` → (host, port); InputError otherwise."""
    host, sep, port = text.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise InputError(f"HOST:PORT: expected a host and a port such as 10.0.1.7:"
                         f"{p.DEFAULT_PORT}, got {text!r}")
    return host, int(port)


def _connect(host: str, port: int, mode: int, param: int, timeout: float) -> socket.socket:
    try:
        conn = socket.create_connection((host, port), timeout=timeout)
    except OSError as e:
        raise InputError(f"{host}:{port}: cannot connect ({e.strerror or e}); is "
                         "`gpupool netcheck serve` running there, and the port open?") from None
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        conn.sendall(p.hello(mode, param))
        status = conn.recv(1)
    except OSError as e:
        conn.close()
        raise InputError(f"{host}:{port}: no answer to the hello ({e})") from None
    if status == p.OK:
        return conn
    conn.close()
    if status == p.BUSY:
        raise InputError(f"{host}:{port}: the server is at its session limit; try again")
    raise InputError(f"{host}:{port}: expected a gpupool netcheck server "
                     f"(answer {status!r} to the hello)")


def measure_rtt(host: str, port: int, seconds: float, size: int = 64,
                timeout: float = 5.0) -> Rtt:
    """Round trips of ``size``-byte messages for about ``seconds``; figures in µs."""
    conn = _connect(host, port, p.ECHO, size, timeout)
    out = bytes(size)
    buf = bytearray(size)
    view = memoryview(buf)
    samples = np.empty(MAX_ROUND_TRIPS, dtype=np.int64)
    n = 0
    clock = time.perf_counter_ns
    try:
        end = clock() + int(seconds * 1e9)
        while n < MAX_ROUND_TRIPS:
            t0 = clock()
            conn.sendall(out)
            got = 0
            while got < size:
                k = conn.recv_into(view[got:])
                if k == 0:
                    raise ConnectionError("the server closed the connection")
                got += k
            t1 = clock()
            samples[n] = t1 - t0
            n += 1
            if t1 >= end and n > WARMUP + 10:
                break
    except OSError as e:
        raise InputError(f"{host}:{port}: round trips failed after {n} ({e})") from None
    finally:
        conn.close()
    us = samples[WARMUP:n] / 1000.0
    return Rtt(samples=len(us), p50=float(np.percentile(us, 50)),
               p99=float(np.percentile(us, 99)), max=float(us.max()), min=float(us.min()),
               mean=float(us.mean()))


def _in_threads(work: Callable[[int], Sample], streams: int, host: str, port: int,
                what: str) -> list[Sample]:
    """``work(i)`` for every stream at once, one thread each; the first failure is raised in
    the calling thread as one line (an :class:`InputError` of a stream as it is)."""
    results: list[Sample | BaseException] = [ValueError("no result")] * streams

    def run(i: int) -> None:
        try:
            results[i] = work(i)
        except BaseException as e:  # reported below, in the main thread
            results[i] = e

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(streams)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        if isinstance(r, InputError):
            raise r
        if isinstance(r, BaseException):
            raise InputError(f"{host}:{port}: {what} failed ({r})")
    return [r for r in results if not isinstance(r, BaseException)]


def measure_bandwidth(host: str, port: int, seconds: float, streams: int = 1,
                      timeout: float = 5.0) -> Bandwidth:
    """Aggregate client→server throughput of ``streams`` connections for about ``seconds``."""
    conns = [_connect(host, port, p.SINK, 0, timeout) for _ in range(streams)]
    start = threading.Barrier(streams)
    chunk = memoryview(bytes(p.CHUNK))

    def send(i: int) -> Sample:
        conn = conns[i]
        try:
            start.wait(timeout)
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                conn.sendall(chunk)
            conn.shutdown(socket.SHUT_WR)
            conn.settimeout(timeout + seconds)
            data = b""
            while len(data) < p.RESULT.size:
                more = conn.recv(p.RESULT.size - len(data))
                if not more:
                    raise ConnectionError("the server closed before its result")
                data += more
            counted, first, last = p.RESULT.unpack(data)
            return counted, first, last
        finally:
            conn.close()

    done = _in_threads(send, streams, host, port, "bulk transfer")
    return _aggregate(host, port, done, streams, TO_SERVER)


def measure_reverse_bandwidth(host: str, port: int, seconds: float, streams: int = 1,
                              timeout: float = 5.0) -> Bandwidth:
    """Aggregate server→client throughput of ``streams`` connections for about ``seconds``.

    Each connection asks the server to send for ``seconds`` (SOURCE); the client times its own
    reads on its monotonic clock, the first read of each stream excluded, and reads until the
    server closes, so what was still queued on the path when the server stopped is counted in
    the time it took to arrive.
    """
    ms = max(1, min(int(seconds * 1000), 2**32 - 1))
    start = threading.Barrier(streams)

    def receive(i: int) -> Sample:
        start.wait(timeout)
        conn = _connect(host, port, p.SOURCE, ms, timeout)
        try:
            conn.settimeout(timeout)
            buf = memoryview(bytearray(p.CHUNK))
            counted = first = last = 0
            while True:
                n = conn.recv_into(buf)
                if n == 0:
                    break
                now = time.monotonic_ns()
                if first == 0:
                    first = now  # this read's bytes arrived before the clock started
                else:
                    counted += n
                last = now
            return counted, first, last
        finally:
            conn.close()

    done = _in_threads(receive, streams, host, port, "bulk transfer from the server")
    return _aggregate(host, port, done, streams, FROM_SERVER)
