"""The snapshot `gpupool check --utilisation` reads: what the report writes, read back."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import synthetic as syn

from gpupool.debt.render import render_json
from gpupool.debt.snapshot import CACHE, read_snapshot
from gpupool.errors import InputError


def test_the_report_reads_back_as_a_snapshot(tmp_path: Path) -> None:
    report = syn.report([
        (syn.pool("idle"), [4] * 24, [10] * 24),
        (syn.pool("dark", "g6.xlarge"), [1] * 24, [None] * 24),
    ])
    path = tmp_path / "u.json"
    path.write_text(render_json(report))
    snap = read_snapshot(path)
    pools = snap.by_name()
    assert pools["idle"].utilisation == 0.1 and pools["idle"].measured
    assert pools["idle"].debt_gpu_hours == pytest.approx(86.4)
    assert pools["idle"].max_size == 8 and pools["idle"].gpus_per_instance == 1
    assert not pools["dark"].measured and pools["dark"].status == "not measured"
    assert snap.window.hours == 24 and snap.generated_at is not None


@pytest.mark.parametrize(("doc", "expected"), [
    ("[]", "expected the JSON of `gpupool debt --format json`"),
    ('{"window": {"start": "2026-11-01T00:00:00Z", "end": "2026-11-02T00:00:00Z", '
     '"period_s": 3600}, "pools": [{"pool": "p", "instance_type": "g4dn.xlarge", '
     '"gpus_per_instance": 1, "utilisation": 12}]}',
     "pools[0].utilisation: expected at most 1, got 12"),
    ('{"window": {"start": "soon", "end": "2026-11-02T00:00:00Z", "period_s": 3600}, '
     '"pools": []}',
     "window.start: expected an ISO 8601 time such as 2026-11-30T06:00:00Z, got 'soon'"),
    ("{", "line 1: expected JSON"),
])
def test_bad_snapshots_name_the_file_and_key(tmp_path: Path, doc: str, expected: str) -> None:
    path = tmp_path / "u.json"
    path.write_text(doc)
    with pytest.raises(InputError) as e:
        read_snapshot(path)
    assert len(e.value.problems) == 1
    assert e.value.problems[0].startswith(f"{path}: ") and expected in e.value.problems[0]


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_snapshot(tmp_path / "nope.json")


def test_cache_rereads_a_changed_file(tmp_path: Path) -> None:
    path = tmp_path / "u.json"
    path.write_text(render_json(syn.report([(syn.pool("p"), [1] * 24, [10] * 24)])))
    first = CACHE.load(str(path))
    assert CACHE.load(str(path)) is first
    path.write_text(render_json(syn.report([(syn.pool("p"), [1] * 24, [90] * 24)])) + " ")
    assert CACHE.load(str(path)).by_name()["p"].utilisation == 0.9


def test_reading_a_snapshot_imports_no_aws_sdk() -> None:
    code = ("import sys, gpupool.debt.snapshot, policies.rules; "
            "print(sorted(m for m in ('boto3', 'botocore', 'gpupool.debt.report') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert json.loads(out.strip().replace("'", '"')) == []
