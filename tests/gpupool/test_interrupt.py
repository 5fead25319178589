"""Signals and threads without ``threading`` (issue 16 item 25: a check does not import it).

``signals_unwind`` installs its handlers in the main thread only (Python refuses them
elsewhere), and the console script leaves without the interpreter's teardown only when no
other thread runs: both asked of ``signal`` and ``_thread`` now, held here to what they did.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from pathlib import Path

from gpupool.interrupt import _unwind, signals_unwind

ROOT = Path(__file__).resolve().parents[2]
EMPTY = ROOT / "tests" / "fixtures" / "terraform" / "empty-plan.json"


def test_the_main_thread_gets_the_handlers_back_afterwards() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with signals_unwind():
        assert signal.getsignal(signal.SIGTERM) is _unwind
    assert signal.getsignal(signal.SIGTERM) is before


def test_another_thread_runs_the_block_without_handlers() -> None:
    seen: list[object] = []

    def body() -> None:
        with signals_unwind():
            seen.append(signal.getsignal(signal.SIGTERM))

    t = threading.Thread(target=body)
    t.start()
    t.join()
    assert seen == [signal.getsignal(signal.SIGTERM)] and seen[0] is not _unwind


def _script(thread: bool) -> subprocess.CompletedProcess[str]:
    """The console script in a child, with or without a thread still running at its end (one
    that prints when it is done: a process left with os._exit never prints it)."""
    child = ("import sys, threading\n"
             "done = threading.Event()\n"
             "def late():\n"
             "    done.wait(0.2)\n"
             "    print('thread finished', flush=True)\n"
             f"if {thread}:\n"
             "    threading.Thread(target=late).start()\n"
             f"sys.argv = ['gpupool', 'check', {str(EMPTY)!r}, '--format', 'json']\n"
             "import atexit\n"
             "atexit.register(lambda: print('atexit ran', flush=True))\n"
             "from gpupool.cli import script\n"
             "script()\n")
    return subprocess.run([sys.executable, "-c", child], capture_output=True, text=True,
                          cwd=ROOT, timeout=120, check=False)


def test_the_script_waits_for_a_running_thread_and_leaves_at_once_otherwise() -> None:
    waited = _script(thread=True)
    assert waited.returncode == 0, waited.stderr
    assert "thread finished" in waited.stdout and "atexit ran" in waited.stdout
    alone = _script(thread=False)
    assert alone.returncode == 0, alone.stderr
    assert "atexit ran" in alone.stdout and '"verdict": "pass"' in alone.stdout
