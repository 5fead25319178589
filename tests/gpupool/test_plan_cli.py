"""``gpupool plan``: text and JSON for every kit stack, --output, and bad stacks (exit 2)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gpupool.cli import main

ROOT = Path(__file__).resolve().parents[2]
RESOURCE_KEYS = {"urn", "type", "name", "parent", "custom", "inputs"}


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # STACK names resolve against the project's stacks/ folder


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_plan_json_shape(stack: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", stack, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {"kind", "version", "stack", "project", "resources", "outputs", "envelope"} <= set(doc)
    assert (doc["kind"], doc["version"], doc["stack"], doc["project"]) == (
        "gpupool-plan", 1, stack, "gpupool"
    )
    for r in doc["resources"]:
        assert RESOURCE_KEYS <= set(r) <= RESOURCE_KEYS | {"propertyDependencies",
                                                            "customTimeouts"}
        assert isinstance(r["inputs"], dict) and isinstance(r["custom"], bool)
    types = {r["type"] for r in doc["resources"]}
    assert {
        "aws:ec2/launchTemplate:LaunchTemplate",
        "aws:autoscaling/group:Group",
        "aws:autoscaling/policy:Policy",
    } <= types
    env = doc["envelope"]
    assert env["total"]["gpusMax"] == doc["outputs"]["gpuMax"]
    # where each tier's clients are, and what one flow gets there (both tiers run client groups)
    assert [(t["tier"], t["clientsInPlacementGroup"], t["flowGbps"]) for t in env["remoteGpu"]
            ] == {"dev": [], "staging": [("embeddings", True, 5.0)],
                  "prod": [("llm-decode", True, 10.0)]}[stack]
    assert env["total"]["perHourMax"] == doc["outputs"]["pricePerHourMax"]
    # the policy engine's reader accepts it as is
    from policies.sources.offline import parse

    plan = parse(doc, f"{stack}.json")
    # every custom resource but the Kubernetes provider (engine bookkeeping, not infrastructure)
    assert len(plan.changes) == sum(
        r["custom"] and not r["type"].startswith("pulumi:providers:") for r in doc["resources"])


def test_plan_text_shows_tree_and_envelopes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "prod"]) == 0
    out = capsys.readouterr().out
    assert "Offline plan of stack prod" in out
    assert "gpupool:aws:GpuPool prod-training" in out
    assert "aws.ec2.LaunchTemplate prod-training-lt" in out
    assert "g5.xlarge · IMDSv2 · 100 GiB gp3 · encrypted" in out
    assert "target 75 % of CWAgent/nvidia_smi_utilization_gpu (Average)" in out
    assert "GPU capacity envelope" in out and "Cost envelope" in out
    total = next(line for line in out.splitlines() if "total" in line and "GPU" not in line)
    # AWS 4-52 GPUs + on-premises Kubernetes 2-16 + the remote-GPU tier's proxies 2-8
    assert "8" in total and "76" in total
    assert "gpupool:aws:RemoteGpuTier prod-llm-decode" in out
    assert "g4dn.2xlarge · IMDSv2 · 100 GiB gp3 · encrypted · placement group" in out
    assert "aws.ec2.PlacementGroup prod-llm-decode-pg  strategy cluster" in out
    assert "private DNS llm-decode.prod.gpupool.internal" in out
    tiers = out[out.index("Remote GPU tiers"):]
    assert "llm-decode" in tiers and "bandwidth, not GPU" in tiers and "6.4" in tiers
    assert "profile stacks/profiles/llm-decode.yaml" in tiers
    assert ("llm-decode: TCP over ENA in a cluster placement group, 10 Gbps per flow, clients "
            "(c6in.2xlarge) in the tier's placement group") in " ".join(tiers.split())
    assert "kubernetes.keda.sh.ScaledObject prod-onprem-embeddings-scaler" in out
    assert "Pool onprem runs on-premises Kubernetes GPUs (L40S)" in out
    assert "upper bound" in out


def test_output_file_keeps_stdout_short(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "dev-plan.json"
    assert main(["plan", "dev", "--format", "json", "--output", str(target)]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    assert out.startswith(f"wrote {target}: stack dev, ")
    assert "GPUs 2-6" in out and "0.946-2.944 $/h" in out
    assert json.loads(target.read_text())["kind"] == "gpupool-plan"
    text_target = tmp_path / "dev-plan.txt"
    assert main(["plan", "dev", "--output", str(text_target)]) == 0
    assert "Cost envelope" in text_target.read_text()
    assert "\x1b[" not in text_target.read_text()  # no colour codes in files


def _stack(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "Pulumi.bad.yaml"
    path.write_text(textwrap.dedent(body))
    return path


GOOD = """\
    config:
      aws:region: us-east-1
      gpupool:environment: dev
      gpupool:team: ml
      gpupool:costCenter: cc-1
      gpupool:network: {createVpc: true}
      gpupool:pools:
        - {name: inference, gpu: T4, maxSize: 2}
"""


@pytest.mark.parametrize(
    ("change", "key"),
    [
        (("maxSize: 2", "maxSzie: 2"), "gpupool:pools[0]"),  # typo in a key
        (("maxSize: 2", "maxSize: lots"), "gpupool:pools[0].maxSize"),  # wrong type
        (("gpu: T4", "gpu: Z9000"), "gpupool:pools[0].gpu"),  # unknown GPU model
    ],
    ids=["typo", "wrong-type", "unknown-gpu"],
)
def test_bad_stack_exits_2_with_one_line_per_problem(
    change: tuple[str, str], key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _stack(tmp_path, GOOD.replace(*change))
    assert main(["plan", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert lines, "expected a message"
    assert all(line.startswith(f"gpupool plan: {path}: ") for line in lines)
    assert any(key in line for line in lines)
    assert "Traceback" not in captured.err


def test_bad_stack_through_the_real_cli_has_no_traceback(tmp_path: Path) -> None:
    path = _stack(tmp_path, GOOD.replace("maxSize: 2", "maxSize: x"))
    proc = subprocess.run(
        [sys.executable, "-m", "gpupool", "plan", str(path)],
        capture_output=True, text=True, cwd=ROOT, timeout=60, check=False,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    assert all(line.startswith(f"gpupool plan: {path}: ") for line in proc.stderr.splitlines())


def test_real_cli_plans_dev(tmp_path: Path) -> None:
    target = tmp_path / "plan.json"
    proc = subprocess.run(
        [sys.executable, "-m", "gpupool", "plan", "dev", "--format", "json", "--output",
         str(target)],
        capture_output=True, text=True, cwd=ROOT, timeout=60, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert json.loads(target.read_text())["stack"] == "dev"
