"""Issue 7 item 15: every commercial region, not only us-east-1.

A stack in eu-west-1 is priced at eu-west-1 prices (validate, the offline plan's envelope and
stack outputs, ``catalog --region``); ``validate`` holds each pool's instance type against the
region's recorded offerings; the offline plan's zone shortage says what is missing and what to do;
the cost envelope says what it leaves out.
"""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

from gpupool.cli import main
from gpupool.config import load_stack
from infra.offline import OfflineError, load_fixture, run_offline

EU_STACK = textwrap.dedent("""\
    config:
      aws:region: eu-west-1
      gpupool:environment: dev
      gpupool:team: ml
      gpupool:costCenter: cc-1
      gpupool:network: {createVpc: true, azCount: 2}
      gpupool:pools:
        - {name: t4, gpu: T4, minSize: 1, maxSize: 4}
        - {name: a10g, gpu: A10G, minSize: 0, maxSize: 2}
    """)


def stack(tmp_path: Path, text: str, name: str = "eu") -> Path:
    path = tmp_path / f"Pulumi.{name}.yaml"
    path.write_text(text)
    return path


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_validate_prices_the_stack_in_its_region(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "validate", str(stack(tmp_path, EU_STACK)))
    assert (code, err) == (0, "")
    assert "t4: T4 on x86_64 -> g4dn.xlarge (1 x T4, $0.587/h in eu-west-1)" in out
    assert "a10g: A10G on x86_64 -> g5.xlarge (1 x A10G, $1.123/h in eu-west-1)" in out
    assert "offerings: eu-west-1 offers every pool's instance type" in out


def test_validate_refuses_a_type_the_region_does_not_offer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = EU_STACK + "    - {name: arm, gpu: T4g, arch: arm64, maxSize: 2}\n"
    code, out, err = cli(capsys, "validate", str(stack(tmp_path, text)))
    assert code == 2 and out == ""
    (line,) = err.splitlines()
    assert "gpupool:pools[2].gpu: expected a GPU offered in eu-west-1: T4g resolves to " \
           "g5g.xlarge, which eu-west-1 does not offer" in line
    assert "eu-west-1 offers no GPU of the catalog on arm64" in line
    assert "deploy to a region that offers g5g.xlarge (ap-northeast-1" in line


def test_validate_names_the_gpus_the_region_offers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = EU_STACK.replace("gpu: A10G", "gpu: L4")  # no g6 in eu-west-1
    code, _, err = cli(capsys, "validate", str(stack(tmp_path, text)))
    assert code == 2
    assert "use a GPU eu-west-1 offers (T4 (g4dn.xlarge), A10G (g5.xlarge)" in err


def test_region_without_recorded_offerings_is_not_checked_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = cli(capsys, "validate",
                       str(stack(tmp_path, EU_STACK.replace("eu-west-1", "mx-central-1"))))
    assert code == 0
    assert "no recorded mx-central-1 price" in out
    assert "mx-central-1: no recorded instance type offerings, so whether it offers the " \
           "pools' types was not checked" in out


def test_offline_plan_in_eu_west_1_shows_eu_west_1_prices(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = stack(tmp_path, EU_STACK)
    out_file = tmp_path / "plan.json"
    code, _, err = cli(capsys, "plan", str(path), "--format", "json", "--output", str(out_file))
    assert (code, err) == (0, "")
    doc = json.loads(out_file.read_text())
    env = doc["envelope"]
    assert env["priceRegion"] == env["region"] == "eu-west-1"
    prices = {p["pool"]: p["pricePerHour"] for p in env["pools"]}
    assert prices == {"t4": 0.587, "a10g": 1.123}
    assert doc["outputs"]["priceRegion"] == "eu-west-1"
    assert doc["outputs"]["pricePerHourMax"] == pytest.approx(4 * 0.587 + 2 * 1.123)
    assert "VPC interface endpoints (per endpoint-zone hour and per GB processed)" in \
        doc["outputs"]["priceExcludes"]
    code, text, _ = cli(capsys, "plan", str(path))
    assert "on-demand eu-west-1 prices" in text
    assert "Not included: EBS gp3 root volumes" in " ".join(text.split())


def test_zone_shortage_says_what_is_missing_and_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: with no usable zone the message read "where only no zone offer …"."""
    named = load_fixture("eu-west-1").table("instanceTypeOfferings")  # by zone name (derived)
    extra = tmp_path / "fixtures"
    extra.mkdir()
    # g5.xlarge only in eu-west-1a, g4dn.xlarge only in eu-west-1b: no zone has both
    keep = {"eu-west-1a": "g5.xlarge", "eu-west-1b": "g4dn.xlarge", "eu-west-1c": ""}
    offers = {z: [t for t in ts if t not in ("g5.xlarge", "g4dn.xlarge") or t == keep[z]]
              for z, ts in named.items()}
    (extra / "eu-west-1.json").write_text(json.dumps({"instanceTypeOfferings": offers}))
    monkeypatch.setenv("GPUPOOL_OFFLINE_FIXTURES", str(extra))
    with pytest.raises(OfflineError) as e:
        run_offline(load_stack(str(stack(tmp_path, EU_STACK))))
    (line,) = e.value.problems
    assert "where only no zone" not in line
    assert "gpupool:pools: expected instance types that one zone of eu-west-1 offers together" \
        in line
    assert "g4dn.xlarge in eu-west-1b; g5.xlarge in eu-west-1a" in line
    assert "give the pools GPUs offered in the same zones" in line
    assert os.environ["GPUPOOL_OFFLINE_FIXTURES"] == str(extra)


def test_zone_shortage_with_some_zones_says_how_many(tmp_path: Path) -> None:
    text = EU_STACK.replace("azCount: 2", "azCount: 3").replace("gpu: A10G", "gpu: A100")
    with pytest.raises(OfflineError) as e:
        run_offline(load_stack(str(stack(tmp_path, text))))
    (line,) = e.value.problems
    assert "gpupool:network.azCount: expected at most 1 in eu-west-1: only eu-west-1c offer " \
           "every pool's instance type" in line
    assert "set azCount: 1" in line and line.endswith("got 3")


def test_catalog_command_prices_a_region(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "catalog", "--gpu", "T4", "--format", "json",
                       "--region", "eu-west-1")
    assert code == 0
    rows = {r["instance_type"]: r for r in json.loads(out)}
    assert rows["g4dn.xlarge"]["price_per_hour"] == 0.587
    code, out, _ = cli(capsys, "catalog", "--gpu", "L4", "--format", "json",
                       "--region", "eu-west-1")
    assert all(r["price_per_hour"] is None for r in json.loads(out))  # not sold: unknown
    code, out, _ = cli(capsys, "catalog", "--gpu", "T4", "--region", "eu-west-1")
    assert "Prices: on-demand eu-west-1" in out and "vantage" in out
    code, _, err = cli(capsys, "catalog", "--region", "Ireland")
    assert code == 2 and "--region: expected an AWS region such as eu-west-1" in err


@pytest.mark.parametrize("region", ["cn-north-1", "cn-northwest-1"])
def test_china_regions_are_refused_with_the_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], region: str
) -> None:
    """Issue 16 item 20: the aws-cn partition is refused (not half-supported)."""
    code, out, err = cli(capsys, "validate",
                         str(stack(tmp_path, EU_STACK.replace("eu-west-1", region))))
    assert code == 2 and out == ""
    (line,) = err.splitlines()
    assert "aws:region" in line and f"got {region}" in line
    assert "aws-cn partition, which gpupool does not support" in line
    assert "Traceback" not in err
