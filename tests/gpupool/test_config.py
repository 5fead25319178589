"""Stack configuration: the shipped stacks, every error at once, and the engine's JSON strings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpupool.catalog import load_catalog
from gpupool.config import load_stack, parse_flat_config, stack_path
from gpupool.config.loader import display_path, resolve_gpu
from gpupool.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
STACKS = ROOT / "stacks"

EXPECTED_TYPES = {
    "dev": {"inference": "g4dn.xlarge", "arm-inference": "g5g.xlarge"},
    "staging": {"inference": "g4dn.xlarge", "training": "g5.xlarge"},
    "prod": {"inference": "g4dn.xlarge", "training": "g5.xlarge", "l4-inference": "g6.xlarge"},
}


def base_config() -> dict[str, Any]:
    return {
        "aws:region": "us-east-1",
        "gpupool:environment": "dev",
        "gpupool:team": "ml-platform",
        "gpupool:costCenter": "cc-1",
        "gpupool:network": {"createVpc": True},
        "gpupool:pools": [{"name": "inference", "gpu": "T4", "maxSize": 4}],
    }


def problems(flat: dict[str, Any], source: str = "s.yaml") -> list[str]:
    with pytest.raises(InputError) as info:
        parse_flat_config(flat, source)
    return info.value.problems


@pytest.mark.parametrize("stack", sorted(EXPECTED_TYPES))
def test_shipped_stacks_validate_and_resolve(stack: str) -> None:
    loaded = load_stack(stack, cwd=ROOT)
    assert loaded.name == stack
    assert loaded.config.environment == stack
    assert {n: t.instance_type for n, t in loaded.instance_types.items()} == EXPECTED_TYPES[stack]


def test_shipped_stacks_differ_sensibly() -> None:
    dev, prod = (load_stack(s, cwd=ROOT).config for s in ("dev", "prod"))
    assert all(p.spot_share >= 0.9 for p in dev.pools)  # dev: mostly spot
    assert all(p.min_size == 1 and p.max_size <= 4 for p in dev.pools)  # dev: small
    assert prod.pools[0].on_demand_base >= 1  # prod: an on-demand base
    assert prod.network.az_count == 3


def test_stack_by_name_and_by_path_are_the_same(tmp_path: Path) -> None:
    by_name = load_stack("staging", cwd=ROOT)
    by_path = load_stack(str(STACKS / "Pulumi.staging.yaml"))
    assert by_name.config == by_path.config
    assert by_name.path.resolve() == by_path.path.resolve()
    # a name is looked up from any directory below the project
    assert stack_path("dev", cwd=ROOT / "stacks").resolve() == STACKS / "Pulumi.dev.yaml"


def test_missing_stack_lists_the_known_ones() -> None:
    with pytest.raises(InputError) as info:
        load_stack("qa", cwd=ROOT)
    (line,) = info.value.problems
    assert "Pulumi.qa.yaml: expected a stack file for stack 'qa'" in line
    assert "known stacks: dev, prod, staging" in line


def test_missing_stack_file_path(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        load_stack(str(tmp_path / "Pulumi.none.yaml"))
    assert info.value.problems == [f"{tmp_path}/Pulumi.none.yaml: expected a stack file, but "
                                   "there is no such file"]


def test_name_outside_a_project(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        load_stack("dev", cwd=tmp_path)
    assert "no Pulumi.yaml" in info.value.problems[0]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("config: [unclosed", "expected valid YAML (line 1, column "),
        ("config:\n  a: 1\n  a: 2\n",
         "expected valid YAML (line 3, column 3: key 'a' appears twice)"),
        ("just text", "config: expected a mapping of Pulumi config keys"),
        ("config: 3", "config: expected a mapping of Pulumi config keys"),
    ],
)
def test_unreadable_stack_files(tmp_path: Path, text: str, expected: str) -> None:
    f = tmp_path / "Pulumi.x.yaml"
    f.write_text(text)
    with pytest.raises(InputError) as info:
        load_stack(str(f))
    (line,) = info.value.problems
    assert line.startswith(f"{f}: {expected}")


def test_every_error_at_once() -> None:
    flat = base_config()
    flat["gpupool:costCentre"] = flat.pop("gpupool:costCenter")  # typo'd key
    flat["gpupool:network"] = {"createVpc": True, "cidr": "10.64.0.0/33"}  # bad CIDR
    flat["gpupool:pools"] = [
        {"name": "inference", "gpu": "T5", "minSize": 5, "maxSize": 4},  # unknown GPU, min>max
        {"name": "amd", "gpu": "g4ad", "maxSize": "two"},  # AMD, wrong type
        {"name": "inference", "gpu": "T4", "maxSize": 2, "targetGpuUtilization": 60},  # dup, typo
    ]
    lines = problems(flat)
    expected = [
        "s.yaml: gpupool:costCentre: expected a known key, not this one "
        "(did you mean costCenter?)",
        "s.yaml: gpupool:network.cidr: expected an IPv4 network address with a prefix, "
        "such as 10.64.0.0/16, got '10.64.0.0/33'",
        "s.yaml: gpupool:pools[0].minSize: expected at most maxSize (4), got 5",
        "s.yaml: gpupool:pools[0].gpu: expected a GPU model or family available on x86_64, "
        "got 'T5' (did you mean T4?",
        "s.yaml: gpupool:pools[1].maxSize: expected a whole number, got 'two'",
        "s.yaml: gpupool:pools[1].gpu: expected an NVIDIA GPU, got 'g4ad': g4ad carries AMD",
        "s.yaml: gpupool:pools[2].targetGpuUtilization: expected a known key, not this one "
        "(did you mean targetGpuUtilisation?)",
        "s.yaml: gpupool:pools[2].name: expected a unique name, 'inference' is used twice",
        "s.yaml: gpupool:costCenter: expected a value: this key is required",
    ]
    assert len(lines) == len(expected), lines
    for want in expected:
        assert any(line.startswith(want) for line in lines), (want, lines)
    for line in lines:  # "file: key: expected …"
        file, key, rest = line.split(": ", 2)
        assert file == "s.yaml" and key.startswith("gpupool:") and rest.startswith("expected")


@pytest.mark.parametrize(
    ("patch", "line"),
    [
        ({"gpupool:environment": "qa"},
         "gpupool:environment: expected 'dev', 'staging', 'prod', 'sandbox' or 'test', got 'qa'"),
        ({"aws:region": "US East"}, "aws:region: expected an AWS region such as us-east-1"),
        ({"gpupool:pools": []}, "gpupool:pools: expected at least one pool (or a remoteGpu tier "
                                "or kubernetes pool), got none"),
        ({"gpupool:pools": [{"name": "Bad_Name", "gpu": "T4", "maxSize": 1}]},
         "gpupool:pools[0].name: expected a lowercase name of 2-32 characters"),
        ({"gpupool:pools": [{"name": "p", "gpu": "T4", "maxSize": 1}]},
         "gpupool:pools[0].name: expected a lowercase name"),
        ({"gpupool:pools": [{"name": "a1", "gpu": "T4", "maxSize": 1,
                             "targetGpuUtilisation": 95}]},
         "gpupool:pools[0].targetGpuUtilisation: expected at most 90, got 95"),
        ({"gpupool:pools": [{"name": "a1", "gpu": "T4", "maxSize": 4, "desiredCapacity": 9}]},
         "gpupool:pools[0].desiredCapacity: expected a value between minSize (0) and maxSize (4)"),
        ({"gpupool:pools": [{"name": "a1", "gpu": "T4", "maxSize": 1, "spotShare": True}]},
         None),  # pydantic accepts true as 1.0: a share of 100 % spot
        ({"gpupool:network": {"createVpc": False}},
         "gpupool:network.createVpc: expected createVpc: true, or vpcId together with subnetIds"),
        ({"gpupool:network": {"createVpc": True, "vpcId": "vpc-0123456789abcdef0"}},
         "gpupool:network.vpcId: expected no existing VPC or subnets when createVpc is true"),
        ({"gpupool:network": {"vpcId": "vpc-1", "subnetIds": ["subnet-0123456789abcdef0"]}},
         "gpupool:network.vpcId: expected a VPC id such as vpc-0a1b2c3d4e5f67890, got 'vpc-1'"),
        ({"gpupool:network": "create"},
         "gpupool:network: expected a mapping of keys to values, got 'create'"),
        ({"gpupool:pools": [{"name": "arm", "gpu": "T4", "arch": "arm64", "maxSize": 1}]},
         "gpupool:pools[0].gpu: expected a GPU model available on arm64, got 'T4', which is "
         "x86_64 only (set arch: x86_64)"),
        ({"gpupool:pools": [{"name": "fam", "gpu": "g5g", "maxSize": 1}]},
         "gpupool:pools[0].gpu: expected a GPU family available on x86_64, got 'g5g', which is "
         "arm64 only (set arch: arm64)"),
        ({"gpupool:pools": [{"name": "amd", "gpu": "Radeon Pro V520", "maxSize": 1}]},
         "gpupool:pools[0].gpu: expected an NVIDIA GPU"),
        ({"gpupool:pools": [{"name": "a1", "gpu": "T4", "maxSize": 1},
                            {"name": "a1", "gpu": "L4", "maxSize": 1}]},
         "gpupool:pools[1].name: expected a unique name, 'a1' is used twice"),
        ({"gpupol:pools": []},
         "gpupol:pools: expected the gpupool namespace (did you mean gpupool:pools?)"),
    ],
)
def test_single_errors_name_key_and_expectation(patch: dict[str, Any], line: str | None) -> None:
    flat = {**base_config(), **patch}
    if line is None:
        parse_flat_config(flat, "s.yaml")
        return
    lines = problems(flat)
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"s.yaml: {line}"), lines[0]


def test_family_and_model_names_resolve_case_insensitively() -> None:
    catalog = load_catalog()
    assert resolve_gpu("a10g", "x86_64", catalog).instance_type == "g5.xlarge"
    assert resolve_gpu("g4dn", "x86_64", catalog).instance_type == "g4dn.xlarge"
    assert resolve_gpu("g5g", "arm64", catalog).instance_type == "g5g.xlarge"
    assert resolve_gpu(" L4 ", "x86_64", catalog).instance_type == "g6.xlarge"  # never g6f


def test_unqualified_keys_belong_to_the_project_namespace() -> None:
    flat = {k.removeprefix("gpupool:"): v for k, v in base_config().items()}
    config, resolved = parse_flat_config(flat, "s.yaml")
    assert config.team == "ml-platform" and resolved["inference"].instance_type == "g4dn.xlarge"


def test_json_strings_as_the_pulumi_engine_passes_them() -> None:
    """At `pulumi up`, structured values arrive as JSON text; the result must be identical."""
    loaded = load_stack("prod", cwd=ROOT)
    engine = {
        k: json.dumps(v) if isinstance(v, dict | list) else str(v) for k, v in loaded.flat.items()
    }
    assert isinstance(engine["gpupool:pools"], str)
    config, resolved = parse_flat_config(engine, "pulumi config")
    assert config == loaded.config
    assert resolved == loaded.instance_types


def test_invalid_json_string_is_one_clear_line() -> None:
    flat = {**base_config(), "gpupool:pools": '[{"name": "x", }]'}
    lines = problems(flat, "pulumi config")
    assert lines == [
        "pulumi config: gpupool:pools: expected valid JSON for a structured value "
        "(line 1 column 16: Expecting property name enclosed in double quotes)"
    ]


def test_chargeback_tags_pool_overrides_win() -> None:
    prod = load_stack("prod", cwd=ROOT).config
    training = next(p for p in prod.pools if p.name == "training")
    tags = prod.chargeback(training)
    assert tags["team"] == "research" and tags["cost-center"] == "cc-research-2001"
    assert tags["environment"] == "prod" and tags["data-classification"] == "internal"


def test_display_path_is_relative_under_the_cwd(tmp_path: Path) -> None:
    f = tmp_path / "a" / "Pulumi.x.yaml"
    assert display_path(f, cwd=tmp_path) == "a/Pulumi.x.yaml"
    assert display_path(f, cwd=tmp_path / "b") == str(f)


_scalar = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 2000), st.floats(allow_nan=True),
    st.text(max_size=12), st.sampled_from(["T4", "g4ad", "A10G", "arm64", "x86_64", "10.0.0.0/16"]),
)
_pool = st.dictionaries(
    st.sampled_from(["name", "gpu", "arch", "minSize", "maxSize", "desiredCapacity",
                     "onDemandBase", "spotShare", "targetGpuUtilisation", "extra"]),
    _scalar,
    max_size=9,
)
_value = st.one_of(_scalar, st.lists(st.one_of(_pool, _scalar), max_size=4),
                   st.dictionaries(st.text(max_size=8), _scalar, max_size=3))


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.fixed_dictionaries(
        {},
        optional={
            k: _value
            for k in ["aws:region", "gpupool:environment", "gpupool:team", "gpupool:costCenter",
                      "gpupool:network", "gpupool:pools", "gpupool:tags", "gpupool:bogus"]
        },
    )
)
def test_arbitrary_config_is_valid_or_an_input_error(flat: dict[str, Any]) -> None:
    """No input makes the loader crash: it validates, or it says what is wrong, per line."""
    try:
        config, resolved = parse_flat_config(flat, "f.yaml")
    except InputError as e:
        assert e.problems
        for line in e.problems:
            assert line.startswith("f.yaml: ") and ": expected" in line, line
            assert "\n" not in line
    else:
        assert set(resolved) == {p.name for p in config.pools}


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 30), st.integers(1, 30), st.integers(0, 30))
def test_size_rules_match_what_the_loader_reports(lo: int, hi: int, desired: int) -> None:
    flat = base_config()
    flat["gpupool:pools"] = [
        {"name": "a1", "gpu": "T4", "minSize": lo, "maxSize": hi, "desiredCapacity": desired}
    ]
    ok = lo <= hi and lo <= desired <= hi
    if ok:
        parse_flat_config(flat, "s.yaml")
    else:
        (line,) = problems(flat)
        assert ("minSize" in line) if lo > hi else ("desiredCapacity" in line)


def test_yaml_round_trip_of_a_stack_file(tmp_path: Path) -> None:
    f = tmp_path / "Pulumi.t.yaml"
    f.write_text(yaml.safe_dump({"config": base_config()}))
    loaded = load_stack(str(f))
    assert loaded.name == "t" and loaded.instance_types["inference"].instance_type == "g4dn.xlarge"
