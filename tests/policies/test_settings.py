"""Policy config (Pulumi --policy-pack-config shape) and waivers: valid files, and one clear
line per problem naming the file and the key."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from gpupool.errors import InputError
from policies.rules.base import Enforcement
from policies.settings import Settings, load_settings


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def problems(config: str | None = None, waivers: str | None = None) -> list[str]:
    with pytest.raises(InputError) as info:
        load_settings(config, waivers)
    return info.value.problems


def test_defaults_without_files() -> None:
    s = load_settings(None, None)
    assert s.enforcement("gpu-smallest-instance") is Enforcement.MANDATORY
    assert s.enforcement("gpu-chargeback-tags") is Enforcement.ADVISORY
    assert s.params("gpu-pool-scales-on-utilisation").min_target == 40  # type: ignore[attr-defined]
    assert s.waivers == ()
    assert s == Settings.default()


def test_pulumi_shaped_config_levels_params_and_all(tmp_path: Path) -> None:
    path = write(tmp_path, "policy.yaml", """
all: advisory
gpu-smallest-instance: disabled
gpu-pool-scales-on-utilisation:
  enforcementLevel: mandatory
  minTarget: 50
  unknownEnforcement: mandatory
gpu-chargeback-tags:
  requiredTags: [team]
""")
    s = load_settings(path, None)
    assert s.enforcement("gpu-smallest-instance") is Enforcement.DISABLED
    assert s.enforcement("gpu-no-vertical-upsize") is Enforcement.ADVISORY  # from all
    assert s.enforcement("gpu-pool-scales-on-utilisation") is Enforcement.MANDATORY
    assert s.params("gpu-pool-scales-on-utilisation").min_target == 50  # type: ignore[attr-defined]
    assert s.params("gpu-pool-scales-on-utilisation").unknown_enforcement == "mandatory"
    assert s.enforcement("gpu-chargeback-tags") is Enforcement.ADVISORY
    assert s.params("gpu-chargeback-tags").required_tags == ["team"]  # type: ignore[attr-defined]


def test_the_same_file_as_json_for_the_pack(tmp_path: Path) -> None:
    path = write(tmp_path, "policy.json",
                 '{"gpu-no-vertical-upsize": {"enforcementLevel": "mandatory", '
                 '"allowGpuPacking": true, "baseline": "prod.json"}}')
    s = load_settings(path, None)
    assert s.params("gpu-no-vertical-upsize").allow_gpu_packing is True  # type: ignore[attr-defined]
    assert s.policies["gpu-no-vertical-upsize"].baseline == "prod.json"
    assert any("CrossGuard" in n for n in s.notes)


@pytest.mark.parametrize(("text", "expected"), [
    ("gpu-smallest: disabled\n",
     "policy.yaml: gpu-smallest: unknown policy ID (did you mean gpu-smallest-instance?) "
     "(known: gpu-no-vertical-upsize, "),
    ("gpu-smallest-instance: off\n",
     "policy.yaml: gpu-smallest-instance: expected one of mandatory, advisory, disabled, "
     "got False (YAML reads on/off/yes/no as booleans: write disabled)"),
    ("gpu-smallest-instance:\n  maxPremium: 5\n",
     "policy.yaml: gpu-smallest-instance.maxPremium: unknown parameter (known: "
     "enforcementLevel, unknownEnforcement, allowedInstanceTypes, maxPerGpuPremiumPct)"),
    ("gpu-smallest-instance:\n  maxPerGpuPremiumPct: lots\n",
     "policy.yaml: gpu-smallest-instance.maxPerGpuPremiumPct: "),
    ("gpu-pool-scales-on-utilisation:\n  enforcementLevel: remediate\n",
     "policy.yaml: gpu-pool-scales-on-utilisation.enforcementLevel: expected one of"),
    ("all:\n  enforcementLevel: advisory\n  minTarget: 3\n",
     "policy.yaml: all.minTarget: unknown key"),
    ("imdsv2-required:\n  baseline: x.json\n",
     "policy.yaml: imdsv2-required.baseline: unknown parameter"),
    ("- gpu-smallest-instance\n", "policy.yaml: expected a mapping of policy IDs"),
    ("gpu-smallest-instance: [\n", "policy.yaml: expected valid YAML"),
])
def test_config_errors_name_file_and_key(tmp_path: Path, text: str, expected: str) -> None:
    found = problems(write(tmp_path, "policy.yaml", text))
    assert len(found) == 1, found
    assert found[0].startswith(str(tmp_path / expected.split(":")[0]))
    assert found[0].removeprefix(str(tmp_path) + "/").startswith(expected), found[0]


def test_every_config_problem_at_once(tmp_path: Path) -> None:
    found = problems(write(tmp_path, "policy.yaml",
                           "nope: advisory\nebs-encrypted: loud\n"))
    assert len(found) == 2


def test_missing_file(tmp_path: Path) -> None:
    assert problems(str(tmp_path / "absent.yaml")) == [f"{tmp_path}/absent.yaml: no such file"]


WAIVERS = """
waivers:
  - id: W-1
    policy: gpu-smallest-instance
    resource: "module.training.aws_instance.*"
    owner: ml-platform
    reason: EFA benchmark
    expires: 2026-03-31
  - id: 7
    policy: ebs-encrypted
    resource: aws_instance.gpu[0]
"""


def test_waivers_parse_match_and_judge_themselves(tmp_path: Path) -> None:
    s = load_settings(None, write(tmp_path, "waivers.yaml", WAIVERS))
    w1, w7 = s.waivers
    assert w1.expires == date(2026, 3, 31) and w7.id == "7"
    assert w1.matches("gpu-smallest-instance", "module.training.aws_instance.gpu[3]")
    assert not w1.matches("ebs-encrypted", "module.training.aws_instance.gpu")
    assert w7.matches("ebs-encrypted", "aws_instance.gpu[0]")  # brackets taken literally
    assert not w7.matches("ebs-encrypted", "aws_instance.gpu0")
    every = w7.model_copy(update={"resource": "aws_instance.gpu[*]"})
    assert every.matches("ebs-encrypted", 'aws_instance.gpu["a"]')
    assert not every.matches("ebs-encrypted", "aws_instance.gpux")
    assert w1.problems(date(2026, 3, 31)) == []
    assert w1.problems(date(2026, 4, 1)) == [
        "expired: its last day was 2026-03-31 (the expiry day is included)"]
    assert w7.problems(date(2026, 1, 1)) == ["no owner", "no reason", "no expires"]


@pytest.mark.parametrize(("text", "expected"), [
    ("- id: x\n", "waivers.yaml: expected a mapping with a 'waivers' list"),
    ("waivers:\n  - policy: ebs-encrypted\n    resource: x\n",
     "waivers.yaml: waivers[0].id: required key is missing"),
    ("waivers:\n  - {id: a, policy: ebs-encrypted, resource: x, expires: 31/03/2026}\n",
     "waivers.yaml: waivers[0].expires: expected a date YYYY-MM-DD (the last day the waiver "
     "applies), got '31/03/2026'"),
    ("waivers:\n  - {id: a, policy: ebs, resource: x}\n",
     "waivers.yaml: waivers[0].policy: unknown policy ID 'ebs' (known: "),
    ("waivers:\n  - {id: a, policy: ebs-encrypt, resource: x}\n",
     "waivers.yaml: waivers[0].policy: unknown policy ID 'ebs-encrypt' (did you mean "
     "ebs-encrypted?) (known: "),
    ("waivers:\n  - {id: a, policy: ebs-encrypted, resource: x, team: y}\n",
     "waivers.yaml: waivers[0].team: unknown key"),
    ("waivers:\n  - {id: a, policy: ebs-encrypted, resource: x}\n"
     "  - {id: a, policy: ebs-encrypted, resource: y}\n",
     "waivers.yaml: waivers[1].id: duplicate waiver id 'a'"),
    ("waivers: none\n", "waivers.yaml: waivers: "),
])
def test_waiver_file_shape_errors(tmp_path: Path, text: str, expected: str) -> None:
    found = problems(waivers=write(tmp_path, "waivers.yaml", text))
    assert len(found) == 1, found
    assert found[0].removeprefix(str(tmp_path) + "/").startswith(expected), found[0]


def test_pack_only_baseline_keys_are_accepted_so_one_file_serves_both(tmp_path: Path) -> None:
    config = tmp_path / "policy-config.yaml"
    config.write_text(
        "gpu-no-vertical-upsize:\n  baseline: prod-export.json\n  requireBaseline: true\n"
    )
    settings = load_settings(str(config), None)
    assert settings.policies["gpu-no-vertical-upsize"].baseline == "prod-export.json"
    config.write_text("gpu-no-vertical-upsize:\n  requireBaseline: maybe\n")
    with pytest.raises(InputError, match=r"requireBaseline: expected true or false"):
        load_settings(str(config), None)
