"""The console script runs a check with the cyclic collector off (gpupool.cli.script): no
collection from argument parsing to the exit, the report whole; any other command keeps it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from cli_support import ROOT, TF_UPSIZE

# The console script as pip writes it, with a gc callback counting collection passes from the
# moment gpupool.cli is imported; an atexit handler (script() runs them before os._exit) says
# how many there were and whether the collector was on.
_SCRIPT = """
import atexit, gc, sys
from gpupool.cli import script
passes = []
gc.callbacks.append(lambda phase, info: phase == "start" and passes.append(info["generation"]))
atexit.register(lambda: sys.stderr.write(f"\\ngc: {len(passes)} {gc.isenabled()}\\n"))
sys.argv = ["gpupool", *sys.argv[1:]]
script()
"""


def _run(*args: str) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if k != "GPUPOOL_DEBUG"} | {"PYTHONPATH": str(ROOT)}
    p = subprocess.run([sys.executable, "-c", _SCRIPT, *args], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def _gc_line(err: str) -> tuple[int, bool]:
    line = [x for x in err.splitlines() if x.startswith("gc: ")][-1]
    count, enabled = line.split()[1:]
    return int(count), enabled == "True"


def test_a_check_makes_no_collection_and_writes_its_whole_report() -> None:
    code, out, err = _run("check", str(TF_UPSIZE), "--format", "json")
    assert code == 1, err
    assert json.loads(out)["summary"]["mandatory"] == 5
    assert _gc_line(err) == (0, False)


def test_other_commands_keep_the_collector() -> None:
    code, out, err = _run("catalog", "--format", "json")
    assert code == 0, err
    assert json.loads(out)
    assert _gc_line(err)[1] is True
