"""Start a policy pack's program the way the Pulumi CLI does, and stop it again.

The CLI runs a Python pack as ``python -u -m pulumi.policy <engine-address> .`` in the pack's
directory (pulumi/pkg/resource/plugin/analyzer_plugin.go, ``NewPolicyAnalyzer``); the pack
starts a gRPC server on 127.0.0.1 and writes the port as the first line on stdout. Anything else
(a crash on import, a syntax error, a missing dependency) shows up on stderr, which is kept in a
file so that a failed start can say why.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

# The CLI passes its own engine address; a pack never dials it unless it logs through the engine.
_NO_ENGINE = "127.0.0.1:0"


class PackStartError(RuntimeError):
    """The pack did not print a port: it exited, or it said nothing in time."""


def cli_command(python: str | None = None) -> list[str]:
    """The command line the CLI's ``pulumi-analyzer-policy-python`` shim runs (cwd: the pack)."""
    return [python or sys.executable, "-u", "-m", "pulumi.policy", _NO_ENGINE, "."]


class PackProcess:
    """A running pack: its port, its stderr so far, and an orderly stop."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        startup_timeout: float = 30.0,
    ) -> None:
        self.command = list(command)
        self._stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - closed in stop()
        full_env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
        self._proc = subprocess.Popen(
            self.command,
            cwd=cwd,
            env=full_env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
        )
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._stdout_seen: list[str] = []
        threading.Thread(target=self._pump_stdout, daemon=True).start()
        try:
            self.port = self._await_port(startup_timeout)
        except BaseException:
            self.stop()
            raise

    @property
    def pid(self) -> int:
        return self._proc.pid

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def running(self) -> bool:
        return self._proc.poll() is None

    def stderr_text(self) -> str:
        self._stderr.flush()
        self._stderr.seek(0)
        return self._stderr.read().decode(errors="replace")

    def _pump_stdout(self) -> None:
        """Read stdout to the end so that a pack printing a lot never blocks on a full pipe."""
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _await_port(self, timeout: float) -> int:
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise PackStartError(self._why(f"printed no port within {timeout:g} s"))
            try:
                line = self._lines.get(timeout=min(remaining, 0.1))
            except queue.Empty:
                continue
            if line is None:
                self._proc.wait(timeout=5)
                raise PackStartError(
                    self._why(f"exited with code {self._proc.returncode} before printing a port")
                )
            text = line.decode(errors="replace").strip()
            if text.isdigit():
                return int(text)
            self._stdout_seen.append(text)

    def _why(self, what: str) -> str:
        parts = [f"policy pack `{' '.join(self.command)}` {what}"]
        if self._stdout_seen:
            parts.append("stdout:\n" + "\n".join(self._stdout_seen[-20:]))
        stderr = self.stderr_text().strip()
        parts.append("stderr:\n" + (stderr[-4000:] if stderr else "(empty)"))
        return "\n".join(parts)

    def stop(self, grace: float = 5.0) -> int | None:
        """SIGINT (the pack's own clean stop), then SIGTERM, then SIGKILL; returns the exit code."""
        proc = self._proc
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
            if proc.poll() is not None:
                break
            try:
                proc.send_signal(sig)
                proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                continue
            except ProcessLookupError:
                break
        if proc.stdout is not None:
            proc.stdout.close()
        if not self._stderr.closed:
            self._stderr.close()
        return proc.returncode


def pack_dir_of(path: str | os.PathLike[str]) -> Path:
    """A pack directory, checked: it must hold PulumiPolicy.yaml as the CLI requires."""
    p = Path(path).resolve()
    if not (p / "PulumiPolicy.yaml").is_file():
        raise PackStartError(f"{p} is not a policy pack: it has no PulumiPolicy.yaml")
    return p
