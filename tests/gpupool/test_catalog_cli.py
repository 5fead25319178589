"""``gpupool catalog``: the text table, the JSON rows and the ``--gpu`` filter, as run by users."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from gpupool.cli import main

DESIGN_KEYS = {
    "instance_type",
    "gpu_model",
    "gpu_count",
    "gpu_memory_gib",
    "vcpus",
    "memory_gib",
    "arch",
    "network_baseline_gbps",
    "price_per_hour",
    "price_per_gpu_hour",
    "smallest_for_gpu",
}


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def table_lines(out: str) -> dict[str, str]:
    """Table body lines keyed by instance type (the first cell)."""
    rows: dict[str, str] = {}
    for line in out.splitlines():
        first = line.split(" ", 1)[0]
        if re.fullmatch(r"[a-z][a-z0-9-]*\.[a-z0-9]+", first):
            rows[first] = line
    return rows


def cells(line: str) -> list[str]:
    """A row's cells: columns are at least two spaces apart (an empty EFA cell vanishes)."""
    return re.split(r"\s{2,}", line.strip())


def test_json_rows_have_the_design_keys(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "catalog", "--format", "json")
    assert (code, err) == (0, "")
    rows = json.loads(out)
    assert isinstance(rows, list) and len(rows) > 50
    assert all(r.keys() >= DESIGN_KEYS for r in rows)
    smallest = {r["instance_type"] for r in rows if r["smallest_for_gpu"]}
    assert {"g4dn.xlarge", "g5g.xlarge", "g5.xlarge", "g6.xlarge", "p4d.24xlarge"} <= smallest
    assert "g4dn.16xlarge" not in smallest


def test_json_gpu_filter_is_case_insensitive(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "catalog", "--gpu", "t4", "--format", "json")
    assert code == 0
    rows = json.loads(out)
    assert {r["gpu_model"] for r in rows} == {"T4"}  # not T4g
    assert {r["instance_type"] for r in rows} >= {"g4dn.xlarge", "g4dn.16xlarge", "g4dn.12xlarge"}
    by_type = {r["instance_type"]: r for r in rows}
    assert by_type["g4dn.12xlarge"]["price_per_gpu_hour"] == pytest.approx(0.978)
    assert [r["instance_type"] for r in rows if r["smallest_for_gpu"]] == ["g4dn.xlarge"]


def test_text_table_marks_the_smallest_size(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "catalog", "--gpu", "T4")
    assert (code, err) == (0, "")
    rows = table_lines(out)
    assert set(rows) == {f"g4dn.{s}" for s in ("xlarge", "2xlarge", "4xlarge", "8xlarge",
                                                "12xlarge", "16xlarge", "metal")}
    assert rows["g4dn.xlarge"].rstrip().endswith("◆")
    assert not rows["g4dn.16xlarge"].rstrip().endswith("◆")
    # type, GPUs, GPU GiB, vCPU, RAM GiB, arch, net Gbps (baseline), EFA, $/h, $/GPU-h
    gpu = "1 \u00d7 T4"
    assert cells(rows["g4dn.16xlarge"]) == [
        "g4dn.16xlarge", gpu, "16", "64", "256", "x86", "50", "yes", "4.352", "4.352"]
    assert cells(rows["g4dn.xlarge"])[6] == "5"
    assert "Prices: on-demand us-east-1" in out and "Karpenter" in out
    assert "DescribeInstanceTypes" in out


def test_text_table_shows_unpriced_types_as_unknown(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "catalog", "--gpu", "H200")
    assert code == 0
    row = table_lines(out)["p5e.48xlarge"]  # no us-east-1 price in the recorded sources
    assert cells(row)[-2:] == ["—", "—"]  # never 0.000


def test_unknown_gpu_model_exits_2_listing_known_ones(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "catalog", "--gpu", "T5")
    assert code == 2 and out == ""
    lines = err.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("gpupool catalog: --gpu: expected a GPU model (")
    assert "T4, T4g" in lines[0] and "A10G" in lines[0] and "g4dn, g5" in lines[0]
    assert lines[0].endswith("got 'T5' (did you mean T4 or p5 or g5?)")


def test_unknown_gpu_model_in_a_real_process_has_no_traceback() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "gpupool", "catalog", "--gpu", "nope", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert "Traceback" not in proc.stderr and len(proc.stderr.splitlines()) == 1
