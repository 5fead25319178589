"""``gpupool validate STACK`` in a real process: exit codes, one line per problem, no traceback."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

BAD_STACK = textwrap.dedent(
    """\
    config:
      aws:region: us-east-1
      gpupool:environment: dev
      gpupool:team: ml-platform
      gpupool:costCentre: cc-1
      gpupool:network:
        createVpc: true
        cidr: 10.64.0.0/33
      gpupool:pools:
        - name: inference
          gpu: T5
          minSize: 5
          maxSize: 4
        - name: amd
          gpu: g4ad
          maxSize: two
        - name: inference
          gpu: T4
          maxSize: 2
    """
)


def gpupool(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "gpupool", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(("stack", "holds"), [
    ("dev", "2 pools"),
    ("staging", "2 pools, 1 remote-GPU tier"),
    ("prod", "3 pools, 1 Kubernetes pool, 1 remote-GPU tier"),
])
def test_shipped_stacks_are_valid_by_name(stack: str, holds: str) -> None:
    """The headline counts what the lines below it list (pools, Kubernetes pools, tiers)."""
    proc = gpupool("validate", stack)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == f"stacks/Pulumi.{stack}.yaml: valid: {holds}"
    assert "inference: T4 on x86_64 -> g4dn.xlarge" in proc.stdout


def test_a_stack_of_remote_gpu_tiers_alone_counts_its_tier() -> None:
    """A team's CPU services and their proxies (remote-gpu-client): no plain pool, one tier,
    and the headline says so (it said "0 pool(s)" above the tier's line)."""
    golden = ROOT / "tests" / "fixtures" / "golden" / "Pulumi.speech-staging.yaml"
    proc = gpupool("validate", str(golden))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].endswith("Pulumi.speech-staging.yaml: valid: 1 remote-GPU tier")
    assert lines[1].startswith("  remote-gpu: remote GPU tier, T4 -> g4dn.2xlarge")


def test_validate_says_where_the_tiers_clients_are_and_the_cap_that_applied(
        tmp_path: Path) -> None:
    """Issue 16 item 16: prod's llm-decode budget (6.4 Gbps per flow) holds only with its
    clients in the tier's cluster placement group; the same tier without its client group is
    refused, one line naming the key, where the clients are and what would do."""
    proc = gpupool("validate", "prod")
    assert proc.returncode == 0, proc.stderr
    assert ("  llm-decode: remote GPU tier, T4 -> g4dn.2xlarge (bandwidth, not GPU: g4dn.xlarge's "
            "baseline 5 Gbps < 6.4 Gbps), 2..8 proxies, tcp 10 Gbps per flow (clients "
            "(c6in.2xlarge) in the tier's placement group); budget 6.4 Gbps, 41.7 us"
            ) in proc.stdout
    text = (ROOT / "stacks" / "Pulumi.prod.yaml").read_text()
    head, _, clients = text.rpartition("      clients:\n")
    assert clients.count("\n") == 3  # instanceType, minSize, maxSize: the file's last lines
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    shutil.copytree(ROOT / "stacks", tmp_path / "stacks")
    (tmp_path / "stacks" / "Pulumi.prod.yaml").write_text(head)
    proc = gpupool("validate", "prod", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == "" and "Traceback" not in proc.stderr
    assert proc.stderr.splitlines() == [
        "gpupool validate: stacks/Pulumi.prod.yaml: gpupool:remoteGpu[0].budget.profile: "
        "expected a profile some T4 size serves within maxOverhead 0.05: at best, g4dn.xlarge "
        "over TCP over ENA to clients outside the placement group (5 Gbps per flow, ~30 µs "
        "round trip), llm-decode runs 5.7 % slower; with the clients in the tier's placement "
        "group (clients, or clientsInPlacementGroup: true) g4dn.2xlarge gets 10 Gbps per flow "
        "and serves it; or make calls asynchronous, shadow them, or keep the GPU local"]
    # the services that use the tier say they launch into its placement group: valid again
    (tmp_path / "stacks" / "Pulumi.prod.yaml").write_text(
        head + "      clientsInPlacementGroup: true\n")
    proc = gpupool("validate", "prod", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert ("tcp 10 Gbps per flow (clients in the tier's placement group "
            "(clientsInPlacementGroup)); budget 6.4 Gbps, 41.7 us") in proc.stdout


def test_stack_as_a_path_from_another_directory(tmp_path: Path) -> None:
    proc = gpupool("validate", str(ROOT / "stacks" / "Pulumi.dev.yaml"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"{ROOT}/stacks/Pulumi.dev.yaml: valid: 2 pools\n")
    assert "arm-inference: T4g on arm64 -> g5g.xlarge" in proc.stdout


def test_bad_stack_reports_every_error_with_exit_2(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.bad.yaml").write_text(BAD_STACK)
    proc = gpupool("validate", "Pulumi.bad.yaml", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    keys = [line.split(": ")[2] for line in lines]
    assert keys == [
        "gpupool:costCentre",
        "gpupool:network.cidr",
        "gpupool:pools[0].minSize",
        "gpupool:pools[0].gpu",
        "gpupool:pools[1].maxSize",
        "gpupool:pools[1].gpu",
        "gpupool:pools[2].name",
        "gpupool:costCenter",
    ]
    for line in lines:
        assert line.startswith("gpupool validate: Pulumi.bad.yaml: gpupool:")
        assert line.split(": ", 3)[3].startswith("expected")


def test_unknown_stack_name_is_one_line(tmp_path: Path) -> None:
    proc = gpupool("validate", "qa")
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "gpupool validate: stacks/Pulumi.qa.yaml: expected a stack file for stack 'qa', but "
        "there is none (known stacks: dev, prod, staging)"
    ]


def test_a_mistyped_stack_name_gets_a_did_you_mean() -> None:
    proc = gpupool("validate", "stagin")
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "gpupool validate: stacks/Pulumi.stagin.yaml: expected a stack file for stack 'stagin', "
        "but there is none (did you mean staging?) (known stacks: dev, prod, staging)"
    ]


def test_invalid_yaml_is_one_line(tmp_path: Path) -> None:
    f = tmp_path / "Pulumi.broken.yaml"
    f.write_text("config:\n  gpupool:pools: [\n")
    proc = gpupool("validate", str(f), cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    (line,) = proc.stderr.splitlines()
    assert line.startswith("gpupool validate: Pulumi.broken.yaml: expected valid YAML (line ")


@pytest.mark.parametrize("gpu", ["V100", "v100", "p3", "p3dn"])
def test_volta_is_refused_with_the_reason(gpu: str, tmp_path: Path) -> None:
    """Issue 7 item 18: V100 resolved to p3dn.24xlarge and booted the OSS-driver DLAMI, whose
    open kernel modules cannot drive Volta: the pool would never publish a metric."""
    stack = tmp_path / "Pulumi.v.yaml"
    stack.write_text(textwrap.dedent(f"""\
        config:
          gpupool:environment: dev
          gpupool:team: ml
          gpupool:costCenter: cc-1
          gpupool:network: {{createVpc: true}}
          gpupool:pools:
            - {{name: volta, gpu: {gpu}, maxSize: 2}}
        """))
    proc = gpupool("validate", str(stack))
    assert proc.returncode == 2 and proc.stdout == ""
    (line,) = proc.stderr.splitlines()
    assert "gpupool:pools[0].gpu: expected a Turing or newer NVIDIA GPU" in line
    assert "V100 (Volta)" in line and "open kernel modules" in line
    assert "Traceback" not in proc.stderr


def test_a_remote_gpu_tier_of_volta_is_refused_too(tmp_path: Path) -> None:
    """The proxies boot the same OSS-driver image as the pools (item 18)."""
    from gpupool.config import load_stack
    from gpupool.errors import InputError

    stack = tmp_path / "Pulumi.v.yaml"
    stack.write_text(textwrap.dedent("""\
        config:
          gpupool:environment: dev
          gpupool:team: ml
          gpupool:costCenter: cc-1
          gpupool:network: {createVpc: true}
          gpupool:pools:
            - {name: t4, gpu: T4, maxSize: 2}
          gpupool:remoteGpu:
            - name: volta
              gpu: V100
              maxSize: 2
              port: 18515
              budget: {minGbps: 1, maxRttUs: 500}
        """))
    with pytest.raises(InputError) as e:
        load_stack(str(stack))
    (line,) = e.value.problems
    assert "gpupool:remoteGpu[0].gpu: expected a Turing or newer NVIDIA GPU" in line
    assert "V100 (Volta)" in line
