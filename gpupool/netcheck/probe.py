"""``gpupool netcheck probe``: measure the round trip and the bandwidth to a netcheck server.

- RTT: one connection with TCP_NODELAY on both ends; a small message (64 bytes by default,
  the size of a remoted call's request) is sent and its echo awaited, over and over; the first
  ``WARMUP`` round trips are dropped (connection set-up, cold caches). The figures include the
  probe's own software overhead (a Python send and receive on each end, a few µs on loopback;
  the floor is measured in bench/), as a remoting layer's calls include its own.
- Bandwidth, both directions one after the other, both timed on the CLIENT's clock (the
  server's word is never taken for a figure): ``streams`` connections send at once from the
  client to the server (the direction of ``bytes_to_gpu``), each timed from its first send to
  the server's count of what it received, which only comes once every byte has arrived (and
  must equal what was sent); then ``streams`` connections ask the server to send (SOURCE, the
  direction of ``bytes_from_gpu``) and the client times its reads, the first read of each
  stream excluded (its bytes arrived before the clock started). In both the aggregate is the
  bytes over the union of the streams' windows. ``--streams 1`` is what one remoted connection
  gets: on EC2 one flow is capped below an instance's bandwidth. The two directions can differ
  (asymmetric shaping, a busy proxy NIC, different instance types at the two ends), which one
  direction alone would hide.
- A deadline bounds the whole probe (:class:`Deadline`): every connect, read and write waits
  at most what is left of it, so a server that trickles or never closes cannot hold the probe.
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
from gpupool.netcheck.link import Link, connect, recv_exactly

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


def _link(host: str, port: int, timeout: float, link: Link | None) -> Link:
    return link if link is not None else Link(host, port, timeout)


def measure_rtt(host: str, port: int, seconds: float, size: int = 64,
                timeout: float = 5.0, link: Link | None = None) -> Rtt:
    """Round trips of ``size``-byte messages for about ``seconds``; figures in µs."""
    link = _link(host, port, timeout, link)
    conn = connect(link, p.ECHO, size)
    out = bytes(size)
    view = memoryview(bytearray(size))
    samples = np.empty(MAX_ROUND_TRIPS, dtype=np.int64)
    n = 0
    clock = time.perf_counter_ns
    try:
        end = clock() + int(seconds * 1e9)
        # the deadline on this clock: checked after every read, so a server that echoes a
        # byte at a time (each read well within the timeout) cannot stretch it
        hard = clock() + int(link.wait("the round trips") * 1e9) if link.deadline else None
        link.bound(conn, "the round trips")
        while n < MAX_ROUND_TRIPS:
            if n % 1024 == 0:
                link.bound(conn, "the round trips")
            t0 = clock()
            conn.sendall(out)
            got = 0
            while got < size:
                k = conn.recv_into(view[got:])
                if k == 0:
                    raise ConnectionError("the server closed the connection")
                got += k
                if hard is not None and clock() > hard:
                    raise link.deadline.error("the round trips")  # type: ignore[union-attr]
            t1 = clock()
            samples[n] = t1 - t0
            n += 1
            if t1 >= end and n > WARMUP + 10:
                break
    except InputError:
        raise
    except OSError as e:
        if link.deadline is not None and link.deadline.passed():
            raise link.deadline.error("the round trips") from None
        raise InputError(f"{link.target}: round trips failed after {n} ({e})") from None
    finally:
        conn.close()
    us = samples[WARMUP:n] / 1000.0
    return Rtt(samples=len(us), p50=float(np.percentile(us, 50)),
               p99=float(np.percentile(us, 99)), max=float(us.max()), min=float(us.min()),
               mean=float(us.mean()))


def _in_threads(work: Callable[[int], Sample], streams: int, link: Link,
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
            raise link.failed(what, r)
    return [r for r in results if not isinstance(r, BaseException)]


def measure_bandwidth(host: str, port: int, seconds: float, streams: int = 1,
                      timeout: float = 5.0, link: Link | None = None) -> Bandwidth:
    """Aggregate client→server throughput of ``streams`` connections for about ``seconds``,
    on the client's clock: from each stream's first send to the server's count of what it
    received (which must be every byte sent)."""
    link = _link(host, port, timeout, link)
    conns = []
    try:
        for _ in range(streams):
            conns.append(connect(link, p.SINK, 0))
    except InputError:
        for c in conns:
            c.close()
        raise
    start = threading.Barrier(streams)
    chunk = memoryview(bytes(p.CHUNK))

    def send(i: int) -> Sample:
        conn = conns[i]
        try:
            start.wait(link.wait("the start of the bulk transfer"))
            first = time.monotonic_ns()
            end = time.monotonic() + seconds
            sent = 0
            while time.monotonic() < end:
                link.bound(conn, "the bulk transfer")
                conn.sendall(chunk)
                sent += len(chunk)
            conn.shutdown(socket.SHUT_WR)
            link.bound(conn, "the wait for the server's count")
            (received,) = p.RESULT.unpack(recv_exactly(conn, p.RESULT.size, link,
                                                       "the wait for the server's count"))
            last = time.monotonic_ns()  # every byte has arrived: the count says so
            if received != sent:
                raise InputError(f"{link.target}: the server counted {received:,} bytes of the "
                                 f"{sent:,} sent (client to server)")
            return sent, first, last
        finally:
            conn.close()

    done = _in_threads(send, streams, link, "bulk transfer")
    return _aggregate(link.host, link.port, done, streams, TO_SERVER)


def measure_reverse_bandwidth(host: str, port: int, seconds: float, streams: int = 1,
                              timeout: float = 5.0, link: Link | None = None) -> Bandwidth:
    """Aggregate server→client throughput of ``streams`` connections for about ``seconds``.

    Each connection asks the server to send for ``seconds`` (SOURCE); the client times its own
    reads on its monotonic clock, the first read of each stream excluded, and reads until the
    server closes, so what was still queued on the path when the server stopped is counted in
    the time it took to arrive. A server that sends past the deadline is cut off.
    """
    link = _link(host, port, timeout, link)
    ms = max(1, min(int(seconds * 1000), 2**32 - 1))
    start = threading.Barrier(streams)

    def receive(i: int) -> Sample:
        start.wait(link.wait("the start of the bulk transfer from the server"))
        conn = connect(link, p.SOURCE, ms)
        try:
            buf = memoryview(bytearray(p.CHUNK))
            counted = first = last = 0
            while True:
                link.bound(conn, "the bulk transfer from the server")
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

    done = _in_threads(receive, streams, link, "bulk transfer from the server")
    return _aggregate(link.host, link.port, done, streams, FROM_SERVER)
