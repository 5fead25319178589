"""A real headless Chromium for the tests, driven over the DevTools protocol (stdlib only).

Debian's ``chromium`` is started with ``--remote-debugging-pipe``: the protocol's JSON
messages, each ended by a NUL byte, go in on file descriptor 3 and come out on 4, so no port,
no websocket library and no network are involved. The flags stop everything a browser does on
its own (background networking, component updates, sync, QUIC), and the profile is a temporary
directory. Without the package the tests skip, naming it (``.ci/run`` installs it).
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

SKIP = ("Debian's chromium package is not installed: apt-get install -y chromium "
        "(.ci/run does)")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--disable-default-apps", "--mute-audio",
         "--remote-debugging-pipe")
READ_TIMEOUT = 120.0  # seconds without any message: a hang, not a slow machine


def executable() -> str | None:
    for name in ("chromium", "chromium-browser"):
        if path := shutil.which(name):
            return path
    return None


class Browser:
    """One Chromium and one page (a flat session); ``events`` keeps every event seen."""

    def __init__(self, proc: subprocess.Popen[bytes], write_fd: int, read_fd: int) -> None:
        self.proc, self._w, self._r = proc, write_fd, read_fd
        self._buf = b""
        self._id = 0
        self.events: list[dict[str, Any]] = []
        self.session: str | None = None

    def _recv(self) -> dict[str, Any]:
        while b"\0" not in self._buf:
            ready, _, _ = select.select([self._r], [], [], READ_TIMEOUT)
            if not ready:
                raise RuntimeError("chromium sent nothing for two minutes")
            chunk = os.read(self._r, 1 << 16)
            if not chunk:
                raise RuntimeError(f"chromium closed the pipe (exit {self.proc.poll()})")
            self._buf += chunk
        message, _, self._buf = self._buf.partition(b"\0")
        return json.loads(message)

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self._id += 1
        message: dict[str, Any] = {"id": self._id, "method": method, "params": params}
        if self.session and not method.startswith(("Target.", "Browser.")):
            message["sessionId"] = self.session
        os.write(self._w, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._recv()
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_event(self, method: str) -> dict[str, Any]:
        for e in self.events:
            if e.get("method") == method:
                return e
        while True:
            e = self._recv()
            self.events.append(e)
            if e.get("method") == method:
                return e

    def open(self, url: str, width: int = 1100, height: int = 1400) -> None:
        """A new page with the Runtime, Log and Page domains on, loaded from ``url``."""
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target,
                                 flatten=True)["sessionId"]
        for domain in ("Runtime", "Log", "Page"):
            self.call(f"{domain}.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height,
                  deviceScaleFactor=1, mobile=False)
        self.call("Page.navigate", url=url)
        self.wait_event("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def errors(self) -> list[str]:
        """Console errors, uncaught exceptions and browser log errors (CSP violations, failed
        loads) seen so far."""
        out = []
        for e in self.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.exceptionThrown":
                out.append(json.dumps(p["exceptionDetails"])[:500])
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append(json.dumps(p.get("args"))[:500])
            elif m == "Log.entryAdded" and p["entry"].get("level") == "error":
                out.append(f"{p['entry'].get('source')}: {p['entry'].get('text')}")
        return out

    def screenshot(self) -> bytes:
        data = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        return base64.b64decode(data["data"])


@contextmanager
def chromium() -> Iterator[Browser]:
    exe = executable()
    if exe is None:
        raise RuntimeError(SKIP)
    to_chrome_r, to_chrome_w = os.pipe()
    from_chrome_r, from_chrome_w = os.pipe()

    def fds() -> None:  # in the child: the pipe's ends on 3 and 4 (dup first: they may be 3/4)
        a, b = os.dup(to_chrome_r), os.dup(from_chrome_w)
        os.dup2(a, 3)
        os.dup2(b, 4)

    with tempfile.TemporaryDirectory(prefix="gpupool-chromium-") as profile, \
            Path(profile, "stderr").open("wb") as stderr:
        proc = subprocess.Popen(
            [exe, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            preexec_fn=fds, close_fds=False, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=stderr)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        try:
            yield Browser(proc, to_chrome_w, from_chrome_r)
        finally:
            with suppress(OSError):
                os.write(to_chrome_w, json.dumps({"id": 0, "method": "Browser.close"}).encode()
                         + b"\0")
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=30)
            os.close(to_chrome_w)
            os.close(from_chrome_r)
