"""Run ``gpupool`` the two ways users and CI do: as a process, and through ``cli.main``.

Imported by the CLI tests as ``cli_support`` (their conftest puts this folder on sys.path).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import io
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
SCHEMAS = FIXTURES / "schemas"
TF_UPSIZE = FIXTURES / "terraform" / "upsize-g4dn.json"  # 5 mandatory violations (one cause each)
TF_PASS = FIXTURES / "terraform" / "modules-count-foreach.json"  # advisory findings only
PULUMI_UPSIZE = FIXTURES / "pulumi" / "preview-upsize.json"


@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str

    @property
    def err_lines(self) -> list[str]:
        return self.err.splitlines()


def run_in_process(args: Sequence[str]) -> Run:
    from gpupool.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as e:  # argparse usage errors
            code = int(e.code or 0)
    return Run(code, out.getvalue(), err.getvalue())


def write_once_read(fifo: Path, data: bytes) -> threading.Thread:
    """Write ``data`` into ``fifo`` from a thread once a reader has it open (as a shell's
    ``<(…)`` writer does), so the reader is waiting first by construction, not by a sleep.

    A non-blocking open for writing fails with ENXIO exactly while nobody has the FIFO open
    for reading (a reader blocked in ``open`` counts), so the thread polls that open.
    """

    def writer() -> None:
        while True:
            try:
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
                break
            except OSError as e:
                if e.errno != errno.ENXIO:
                    raise
                time.sleep(0.01)  # a poll for the reader, not a guess at how long it takes
        os.set_blocking(fd, True)
        with os.fdopen(fd, "wb") as f:
            f.write(data)

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    return thread


def run_process(args: Sequence[str], cwd: Path | None = None) -> Run:
    p = subprocess.run(
        [sys.executable, "-m", "gpupool", *args],
        capture_output=True, text=True, cwd=cwd or ROOT, timeout=120,
        env={**_clean_env(), "PYTHONPATH": str(ROOT)},
    )
    return Run(p.returncode, p.stdout, p.stderr)


def _clean_env() -> dict[str, str]:
    env = dict(os.environ)
    for k in ("FORCE_COLOR", "CLICOLOR_FORCE", "GPUPOOL_DEBUG"):
        env.pop(k, None)
    return env


def subcommands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
                ) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every subcommand under ``parser`` (nested ones too), with the words that name it."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*path, name), sub
                yield from subcommands(sub, (*path, name))
