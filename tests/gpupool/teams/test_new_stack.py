"""``gpupool new-stack``: golden stack files per template, and refusals that write nothing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from cli_support import run_in_process

from gpupool.commands.new_stack import check_quota
from gpupool.errors import InputError
from gpupool.teams import load_teams
from gpupool.teams.template import bundled_names
from gpupool.teams.usage import PoolUse, TeamUse

ROOT = Path(__file__).resolve().parents[3]
GOLDEN = ROOT / "tests" / "fixtures" / "golden"
HF = ROOT / "tests" / "fixtures" / "hf"
LLAMA = str(HF / "llama-2-7b-chat-hf.config.json")
TINY = str(HF / "tinyllama-1.1b-chat-v1.0.config.json")
REGENERATE = os.environ.get("GPUPOOL_REGENERATE_GOLDEN") == "1"

# One golden stack per template: (golden file, new-stack arguments)
CASES = [
    ("Pulumi.research-prod.yaml",
     ["research", "prod", "--template", "inference-service", "--model-config", LLAMA,
      "--max-gpus", "8"]),
    ("Pulumi.research-staging.yaml",
     ["research", "staging", "--template", "batch-training", "--model-config", TINY]),
    ("Pulumi.research-dev.yaml", ["research", "dev", "--template", "notebook"]),
    ("Pulumi.vision-dev.yaml", ["vision", "dev", "--template", "notebook", "--arch", "arm64"]),
    ("Pulumi.speech-staging.yaml",
     ["speech", "staging", "--template", "remote-gpu-client", "--model-config", TINY,
      "--profile", "stacks/profiles/llm-decode.yaml"]),
]


def new_stack(*args: str) -> tuple[int, str, str]:
    r = run_in_process(["new-stack", *args])
    return r.code, r.out, r.err


def test_every_bundled_template_has_a_golden_case() -> None:
    used = {args[args.index("--template") + 1] for _, args in CASES}
    assert used == set(bundled_names())


@pytest.mark.parametrize(("golden", "args"), CASES, ids=[c[0] for c in CASES])
def test_rendered_stack_equals_its_golden_file(project: Path, golden: str,
                                               args: list[str]) -> None:
    code, out, err = new_stack(*args)
    assert code == 0, err
    written = project / "stacks" / golden
    assert f"wrote stacks/{golden}" in out and "next: gpupool validate" in out
    if REGENERATE:
        (GOLDEN / golden).write_text(written.read_text())
    assert written.read_text() == (GOLDEN / golden).read_text()


@pytest.mark.parametrize(("golden", "args"), CASES, ids=[c[0] for c in CASES])
def test_golden_stacks_pass_validate_and_check(golden: str, args: list[str]) -> None:
    path = str(GOLDEN / golden)
    r = run_in_process(["validate", path])
    assert r.code == 0, r.err
    r = run_in_process(["check", "--stack", path, "--teams", str(GOLDEN / "teams.yaml"),
                        "--format", "json"])
    assert r.code == 0, r.out + r.err


def test_goldens_say_what_they_chose() -> None:
    prod = yaml.safe_load((GOLDEN / "Pulumi.research-prod.yaml").read_text())["config"]
    assert prod["gpupool:pools"][0]["gpu"] == "L4"  # 7B at 4k in fp16 does not fit a T4
    assert prod["gpupool:pools"][0]["maxSize"] == 8
    assert prod["gpupool:costCenter"] == "cc-research-2001"
    assert prod["gpupool:network"]["azCount"] == 3  # the template's prod override
    vision = yaml.safe_load((GOLDEN / "Pulumi.vision-dev.yaml").read_text())["config"]
    assert vision["gpupool:pools"][0]["gpu"] == "T4g"
    assert vision["gpupool:pools"][0]["arch"] == "arm64"


def test_remote_gpu_client_is_a_proxy_tier_sized_for_its_budget() -> None:
    text = (GOLDEN / "Pulumi.speech-staging.yaml").read_text()
    doc = yaml.safe_load(text)["config"]
    assert doc["gpupool:pools"] == []  # the team's services are the CPU clients: no plain pool
    tier = doc["gpupool:remoteGpu"][0]
    assert tier["gpu"] == "T4" and tier["maxSize"] == 2  # TinyLlama fits a T4; the template's 2
    assert tier["budget"] == {"profile": "stacks/profiles/llm-decode.yaml"}
    assert tier["port"] == 18515 and tier["clients"]["instanceType"] == "c6in.2xlarge"
    # llm-decode needs 6.4 Gbps per flow, above g4dn.xlarge's 5 Gbps baseline
    assert "# Proxies: g4dn.2xlarge (not g4dn.xlarge: one flow needs 6.4 Gbps)" in text
    assert "up to 2 x T4 (2 x g4dn.2xlarge), $1.50/h, $1,097.92/month" in text


def test_remote_gpu_client_counts_its_proxies_against_the_quota(project: Path) -> None:
    code, out, err = new_stack("speech", "staging", "--template", "remote-gpu-client",
                               "--profile", "stacks/profiles/embeddings.yaml", "--max-gpus", "3")
    assert code == 0, err
    assert "remote-GPU tier 'remote-gpu', up to 3 x T4 on g4dn.xlarge" in out
    assert "speech in staging: 3 of 4 GPUs" in out
    err = refused(project, "speech", "staging", "--template", "notebook", "--max-gpus", "2",
                  "--output", "stacks/Pulumi.z.yaml")
    assert "its other stacks hold 3 (speech-staging/remote-gpu 3 x T4)" in err


def test_remote_gpu_client_profile_refusals(project: Path) -> None:
    err = refused(project, "speech", "staging", "--template", "remote-gpu-client")
    assert "template remote-gpu-client: give --profile FILE" in err
    err = refused(project, "speech", "staging", "--template", "remote-gpu-client", "--profile",
                  "nope.yaml")
    assert "--profile nope.yaml: expected a remoting profile file" in err
    err = refused(project, "speech", "staging", "--template", "notebook", "--profile",
                  "stacks/profiles/embeddings.yaml")
    assert "--profile: only for a template with a remote-GPU tier" in err
    bad = project / "stacks" / "profiles" / "bad.yaml"
    bad.write_text("name: bad\nlocal_time_s: -1\n")
    err = refused(project, "speech", "staging", "--template", "remote-gpu-client", "--profile",
                  str(bad))
    assert "bad.yaml" in err


def test_stdout_output_writes_no_file(project: Path) -> None:
    code, out, _ = new_stack("research", "dev", "--template", "notebook", "--output", "-")
    assert code == 0 and out.startswith("# Stack research-dev")
    assert not (project / "stacks" / "Pulumi.research-dev.yaml").exists()


def test_default_size_is_capped_by_what_the_quota_leaves(project: Path) -> None:
    assert new_stack("research", "dev", "--template", "notebook")[0] == 0  # 1 of 4 GPUs
    code, out, err = new_stack("research", "dev", "--template", "batch-training",
                               "--model-config", TINY, "--output", "stacks/Pulumi.x.yaml")
    assert code == 0, err
    doc = yaml.safe_load((project / "stacks" / "Pulumi.x.yaml").read_text())["config"]
    assert doc["gpupool:pools"][0]["maxSize"] == 3  # template says 8, quota leaves 3
    assert "research in dev: 4 of 4 GPUs" in out


def refused(project: Path, *args: str) -> str:
    before = sorted(p.name for p in (project / "stacks").iterdir())
    code, out, err = new_stack(*args)
    assert code == 2, out + err
    assert len(err.splitlines()) == 1, err
    assert sorted(p.name for p in (project / "stacks").iterdir()) == before  # nothing written
    return err


def test_quota_refusal_counts_the_teams_other_stacks(project: Path) -> None:
    assert new_stack("research", "dev", "--template", "notebook")[0] == 0
    err = refused(project, "research", "dev", "--template", "inference-service",
                  "--params", "125M", "--max-gpus", "4", "--output", "stacks/Pulumi.y.yaml")
    assert "stacks/teams.yaml: teams.research.gpuQuota.dev: research may hold 4 GPUs" in err
    assert "asks for 4 at max and its other stacks hold 1 (research-dev/notebook 1 x T4)" in err


def test_budget_refusal_gives_the_figures(project: Path) -> None:
    err = refused(project, "vision", "dev", "--template", "inference-service", "--params",
                  "125M", "--max-gpus", "2")
    assert "teams.vision.monthlyBudgetUsd: vision may spend $500.00/month" in err
    assert "would cost $767.96/month on-demand" in err  # 2 x g4dn.xlarge x $0.526 x 730 h


def test_gpu_model_refusals(project: Path) -> None:
    err = refused(project, "vision", "dev", "--template", "inference-service",
                  "--model-config", LLAMA)
    assert "teams.vision.allowedGpus: T4g, T4; none holds" in err
    assert "the cheapest that does is L4 (g6.xlarge)" in err
    err = refused(project, "research", "dev", "--template", "notebook", "--gpu", "H100")
    assert "--gpu H100: research may not use it" in err
    err = refused(project, "research", "dev", "--template", "batch-training",
                  "--model-config", LLAMA)
    assert "more than any one-GPU instance holds" in err


@pytest.mark.parametrize(("args", "expected"), [
    (["nobody", "dev", "--template", "notebook"], "teams.nobody: no such team"),
    (["research", "dev", "--template", "nope"], "--template nope: expected one of"),
    (["research", "dev", "--template", "notebook", "--max-gpus", "0"], "--max-gpus: expected"),
    (["research", "dev", "--template", "inference-service"], "give the model"),
    (["research", "dev", "--template", "notebook", "--teams", "missing.yaml"],
     "missing.yaml: no such file"),
])
def test_usage_refusals(project: Path, args: list[str], expected: str) -> None:
    assert expected in refused(project, *args)


def test_existing_stack_needs_force(project: Path) -> None:
    assert new_stack("research", "dev", "--template", "notebook")[0] == 0
    err = refused(project, "research", "dev", "--template", "notebook")
    assert "stacks/Pulumi.research-dev.yaml: already exists; give --force" in err
    code, _, err = new_stack("research", "dev", "--template", "notebook", "--force",
                             "--max-gpus", "4")
    assert code == 0, err  # its own old pools are not counted against it


def test_missing_teams_file(project: Path) -> None:
    (project / "stacks" / "teams.yaml").unlink()
    err = refused(project, "research", "dev", "--template", "notebook")
    assert "stacks/teams.yaml: no teams file" in err


def test_a_mistyped_template_name_gets_a_did_you_mean(project: Path) -> None:
    err = refused(project, "research", "dev", "--template", "inferance-service")
    assert err.splitlines() == [
        "gpupool new-stack: --template inferance-service: expected one of batch-training, "
        "inference-service, notebook, remote-gpu-client or the path of a template file (did "
        "you mean inference-service?)"]


def test_template_files_are_validated(project: Path) -> None:
    bad = project / "mine.yaml"
    bad.write_text("description: mine\npool: {name: x, maxSize: 99, instanceType: p5.48xlarge}\n")
    err = refused(project, "research", "dev", "--template", str(bad))
    assert "mine.yaml: pool: expected pool keys among" in err
    assert "maxSize come from sizing and the team's quota" in err
    good = project / "tiny.yaml"
    good.write_text("description: a tiny box\ngpu: T4\npool: {name: tiny, minSize: 1}\n")
    code, _, err = new_stack("research", "dev", "--template", str(good))
    assert code == 0, err


def test_unpriced_region_cannot_verify_the_budget() -> None:
    team = load_teams(GOLDEN / "teams.yaml").require("research")
    new = [PoolUse("s", "p", "research", "dev", "L4", 1, None)]
    with pytest.raises(InputError, match="cannot verify the budget: no on-demand price for s/p"):
        check_quota("teams.yaml", "research", team, "dev", new, TeamUse())
