"""The slim install (issue 16, item 25): ``pip install gpupool`` for CI checks, extras for the rest.

No second venv: a child Python whose import system refuses every module of the extras (a
meta-path finder that raises ModuleNotFoundError, as a missing package does) runs the CLI, so
what it proves is what a slim install does. ``gpupool check`` of plan files and manifests works
and says the same as the full install; every command that needs an extra exits 2 with one line
naming it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from cli_support import FIXTURES, PULUMI_UPSIZE, ROOT, TF_UPSIZE, run_in_process

EXTRA_MODULES = ("pulumi", "pulumi_aws", "pulumi_kubernetes", "pulumi_policy", "grpc",
                 "google.protobuf", "kubernetes_validate", "jsonschema", "celpy", "boto3",
                 "botocore", "matplotlib", "numpy", "pandas")
SLIM = f"""
import importlib.abc, sys
BLOCKED = {EXTRA_MODULES!r}
class NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if any(name == b or name.startswith(b + ".") for b in BLOCKED):
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None
sys.meta_path.insert(0, NotInstalled())
from gpupool.cli import main
code = main(sys.argv[1:])
loaded = sorted(m for m in sys.modules if any(m == b or m.startswith(b + ".") for b in BLOCKED))
assert not loaded, loaded
sys.exit(code)
"""


def _slim(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", SLIM, *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300, check=False)


def test_core_dependencies_leave_the_extras_out() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = " ".join(project["dependencies"])
    for heavy in ("pulumi", "boto3", "numpy", "pandas", "matplotlib", "grpcio", "protobuf"):
        assert heavy not in core, heavy
    extras = project["optional-dependencies"]
    assert {"infra", "aws", "debt", "remoting", "all", "test"} <= set(extras)
    assert "gpupool[all]" in extras["test"]  # make test and CI install everything


@pytest.mark.parametrize("plan", [TF_UPSIZE, PULUMI_UPSIZE, FIXTURES / "kubernetes",
                                  FIXTURES / "terraform" / "live" / "gpu-asgs" /
                                  "plan-create.json"])
def test_check_works_without_the_extras(plan: Path) -> None:
    slim = _slim("check", str(plan), "--format", "json")
    full = run_in_process(["check", str(plan), "--format", "json"])
    assert slim.returncode == full.code == 1, slim.stderr
    assert json.loads(slim.stdout)["violations"] == json.loads(full.out)["violations"]


def test_every_report_format_without_the_extras() -> None:
    live = FIXTURES / "terraform" / "live" / "gpu-asgs" / "plan-create.json"
    for fmt in ("text", "sarif", "junit", "markdown"):
        done = _slim("check", str(live), "--format", fmt)
        assert done.returncode == 1 and done.stdout, (fmt, done.stderr)
    sarif = json.loads(_slim("check", str(live), "--format", "sarif").stdout)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in sarif["runs"][0]["results"]}
    assert any(u.endswith(".tf") for u in uris)  # python-hcl2 is in the slim install


@pytest.mark.parametrize(("args", "extra"), [
    (["plan", "dev"], "infra"),
    (["check", "--stack", "dev"], "infra"),
    (["debt", "--since", "1d", "--region", "us-east-1"], "debt"),
    (["catalog", "refresh", "--output", "/dev/null"], "aws"),
    (["remoting", "examples/profiles/resnet50-inference.yaml", "--rtt-us", "10"], "remoting"),
])
def test_a_command_that_needs_an_extra_names_it(args: list[str], extra: str) -> None:
    done = _slim(*args)
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"gpupool {args[0]}: "), done.stderr
    assert f"pip install 'gpupool[{extra}]'" in lines[0]
