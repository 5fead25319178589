"""`gpupool validate` and `gpupool new-stack` stay light: what they import is held, not timed.

Seconds are noise on a shared machine; the modules a command loads are not. These commands run
in a pull request's inner loop (issue 11's bench: new-stack against `gpupool --help`), so none
of them may load the Pulumi SDK, rich, boto3 or plotting libraries, and none may scan the
installed distributions for pydantic plugins.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("pulumi", "pulumi_aws", "rich", "boto3", "botocore", "matplotlib", "numpy", "pandas",
         "policies", "infra", "kubernetes_validate")
LLAMA = "tests/fixtures/hf/llama-2-7b-chat-hf.config.json"
# Runs the CLI in a fresh interpreter and reports which of HEAVY it loaded, and whether pydantic
# went looking for plugins (its loader caches what it found in `_plugins`).
PROBE = f"HEAVY = {HEAVY!r}\n" + """
import contextlib, io, json, sys
from gpupool.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = main(sys.argv[1:])
plugins = sys.modules.get("pydantic.plugin._loader")
print(json.dumps({"code": code, "out": out.getvalue(),
                  "heavy": sorted(m for m in HEAVY if m in sys.modules),
                  "plugin_scan": getattr(plugins, "_plugins", None) is not None}))
"""


def _run(*args: str) -> dict[str, object]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(ROOT)}  # no PYDANTIC_DISABLE_PLUGINS given
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    result: dict[str, object] = json.loads(proc.stdout.splitlines()[-1])
    return result


@pytest.mark.parametrize("args", [
    ("validate", "dev"),
    ("validate", "prod"),
    ("new-stack", "research", "dev", "--template", "notebook", "--output", "-"),
    ("new-stack", "research", "dev", "--template", "inference-service", "--model-config", LLAMA,
     "--output", "-"),
], ids=lambda a: " ".join(a[:4]))
def test_command_loads_no_heavy_module(args: tuple[str, ...]) -> None:
    result = _run(*args)
    assert result["code"] == 0
    assert result["out"]  # it did its work (a summary or a stack file), not an early exit
    assert result["heavy"] == []
    assert result["plugin_scan"] is False


HELP_PROBE = """
import contextlib, io, json, sys
from gpupool.cli import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    try:
        main(["--help"])
    except SystemExit as e:
        code = e.code
print(json.dumps({"code": code, "out": out.getvalue(),
                  "gpupool": sorted(m for m in sys.modules if m.split(".")[0] == "gpupool"),
                  "others": sorted(m for m in sys.modules if m.split(".")[0] in
                                   ("pydantic", "yaml", "typing", "rich", *HEAVY))}))
"""


def test_help_loads_only_the_argument_declarations() -> None:
    """`gpupool --help` builds every subparser (gpupool.cliargs) and nothing a command needs:
    no command module, no pydantic or YAML, not even ``typing``."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", f"HEAVY = {HEAVY!r}\n" + HELP_PROBE],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.splitlines()[-1])
    assert result["code"] == 0 and "remoting" in result["out"]
    assert result["others"] == []
    assert {m for m in result["gpupool"]
            if m != "gpupool.cliargs" and not m.startswith("gpupool.cliargs.")} == {
        "gpupool", "gpupool.argtypes", "gpupool.cli"}
