"""Servers and network namespaces for the probe's tests: loopback, or namespaces made here.

Imported as ``netcheck_support`` (the conftest puts this folder on sys.path).

Traffic never leaves loopback or the two namespaces a test makes (joined by a veth pair, with
addresses from 10.213.0.0/16 that exist nowhere else); the namespaces are deleted even when a
test fails.
"""

from __future__ import annotations

import contextlib
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from gpupool.netcheck.server import Server

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def server() -> Iterator[Server]:
    """A server on 127.0.0.1 (ephemeral port) in a thread of this process."""
    srv = Server("127.0.0.1", 0, log=lambda line: None)
    thread = threading.Thread(target=srv.serve_forever, kwargs={"grace": 0.5}, daemon=True)
    thread.start()
    yield srv
    srv.stop()
    thread.join(5)


def gpupool_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "gpupool", *args]


class ServerProcess:
    """``gpupool netcheck serve`` in its own process (optionally inside a namespace)."""

    def __init__(self, *args: str, netns: str | None = None, bind: str = "127.0.0.1",
                 max_files: int | None = None) -> None:
        cmd = gpupool_cmd("netcheck", "serve", "--bind", bind, "--port", "0", *args)
        if netns:
            cmd = ["ip", "netns", "exec", netns, *cmd]

        def limit() -> None:  # at most max_files descriptors: accept() then fails (EMFILE)
            if max_files is not None:
                resource.setrlimit(resource.RLIMIT_NOFILE, (max_files, max_files))

        self.proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, preexec_fn=limit)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        match = re.match(r"listening on (.+):(\d+)$", line.strip())
        if not match:
            self.proc.kill()
            raise AssertionError(f"server did not start: {line!r} {self.proc.stderr.read()}")
        self.host, self.port = match.group(1).strip("[]"), int(match.group(2))

    @property
    def target(self) -> str:
        return f"{self.host}:{self.port}"

    def stop(self, timeout: float = 5.0) -> int:
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


@dataclass(frozen=True)
class NetnsPair:
    client: str
    server: str
    client_dev: str
    client_ip: str
    server_ip: str
    server_dev: str


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True, timeout=10)


def need_netns() -> None:
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root (ip netns add); CI runs these as root")
    if shutil.which("ip") is None or shutil.which("tc") is None:
        pytest.skip("iproute2 (ip, tc) is not installed")


@contextlib.contextmanager
def make_netns_pair() -> Iterator[NetnsPair]:
    """Two namespaces joined by a veth pair: 10.213.x.1 (client) and 10.213.x.2 (server).

    Deleted on the way out, whatever happened inside (deleting a namespace deletes its end of
    the veth pair, and with it the pair).
    """
    tag = uuid.uuid4().hex[:6]
    a, b = f"gpnc-{tag}-c", f"gpnc-{tag}-s"
    dev_a, dev_b = f"gpc{tag}", f"gps{tag}"
    third = int(tag[:2], 16)
    ip_a, ip_b = f"10.213.{third}.1", f"10.213.{third}.2"
    made: list[str] = []
    try:
        for ns in (a, b):
            _ip("netns", "add", ns)
            made.append(ns)
        _ip("link", "add", dev_a, "type", "veth", "peer", "name", dev_b)
        _ip("link", "set", dev_a, "netns", a)
        _ip("link", "set", dev_b, "netns", b)
        for ns, dev, addr in ((a, dev_a, ip_a), (b, dev_b, ip_b)):
            _ip("-n", ns, "addr", "add", f"{addr}/30", "dev", dev)
            _ip("-n", ns, "link", "set", dev, "up")
            _ip("-n", ns, "link", "set", "lo", "up")
        yield NetnsPair(a, b, dev_a, ip_a, ip_b, dev_b)
    finally:
        for ns in made:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=10)


@pytest.fixture
def netns_pair() -> Iterator[NetnsPair]:
    need_netns()
    with make_netns_pair() as pair:
        yield pair


def limit_rate(pair: NetnsPair, mbit: int, side: str = "client") -> None:
    """tbf on one end's egress: the client's limits client → server (``bytes_to_gpu``), the
    server's limits server → client (``bytes_from_gpu``)."""
    burst = max(32_000, mbit * 1_000_000 // 8 // 250)  # 4 ms worth, at least 32 kB
    ns, dev = (pair.client, pair.client_dev) if side == "client" else (pair.server,
                                                                        pair.server_dev)
    subprocess.run(["ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev",
                    dev, "root", "tbf", "rate", f"{mbit}mbit", "burst", str(burst),
                    "latency", "50ms"], check=True, capture_output=True, timeout=10)
