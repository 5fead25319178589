"""A real Prometheus for the tests: Debian's ``prometheus`` 2.42 on 127.0.0.1, its history
backfilled with ``promtool tsdb create-blocks-from openmetrics`` before it starts.

Started once per test session (per xdist worker that needs it), in a temporary storage
directory, and stopped at the end. Without the package the tests that need it skip, naming it
(``.ci/run`` installs it).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from prom_history import HOURS, History, cluster

SKIP = ("Debian's prometheus package (prometheus and promtool) is not installed: "
        "apt-get install -y prometheus (.ci/run does)")


@dataclass(frozen=True)
class PromServer:
    url: str
    start: datetime
    end: datetime
    samples: int


def available() -> bool:
    return bool(shutil.which("prometheus") and shutil.which("promtool"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ready(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    """Poll /-/ready until it answers 200 (the blocks are loaded), the process dies, or two
    minutes pass (a hang, not a slow machine: loading takes a second or two)."""
    for _ in range(1200):
        if proc.poll() is not None:
            raise RuntimeError(f"prometheus exited {proc.returncode}: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{url}/-/ready", timeout=5) as r:
                if r.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.1)
    raise RuntimeError(f"prometheus not ready: {log.read_text()[-2000:]}")


@contextmanager
def serve(workdir: Path, week: Callable[[int], History] = cluster) -> Iterator[PromServer]:
    """Write the week (the messy cluster, or another history of the same HOURS from its start
    in epoch seconds), backfill it, start Prometheus on it; stop and remove it afterwards."""
    end_s = int(time.time()) // 3600 * 3600 - 3600  # the last whole hour, an hour ago
    start_s = end_s - HOURS * 3600
    history = workdir / "history.om"
    samples = week(start_s).write(history)
    data = workdir / "data"
    subprocess.run([shutil.which("promtool") or "promtool", "tsdb", "create-blocks-from",
                    "openmetrics", "--quiet", str(history), str(data)], check=True,
                   capture_output=True, timeout=600)
    config = workdir / "prometheus.yml"
    config.write_text("global:\n  scrape_interval: 1m\nscrape_configs: []\n")
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log = workdir / "prometheus.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [shutil.which("prometheus") or "prometheus", f"--config.file={config}",
             f"--storage.tsdb.path={data}", f"--web.listen-address=127.0.0.1:{port}",
             "--storage.tsdb.retention.time=3650d", "--log.level=warn"],
            stdout=subprocess.DEVNULL, stderr=out)
    try:
        _ready(url, proc, log)
        yield PromServer(url, datetime.fromtimestamp(start_s, UTC),
                         datetime.fromtimestamp(end_s, UTC), samples)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)
