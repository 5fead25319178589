"""``gpupool rightsize`` on the kit's prod stack, both halves in one run: its AWS groups on a
moto server and its on-premises Kubernetes pool in a real Prometheus, over a seeded idle week
(hybrid_fleet). The run must change exactly the keys that week calls for in both halves and
keep every other byte of the file; the written stack validates and passes ``gpupool check
--stack prod --base HEAD``; the pull request's text gives each change's evidence and dollars.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from hybrid_fleet import prod_groups

from gpupool.cli import main
from gpupool.debt.window import Window, iso, resolve_window

ROOT = Path(__file__).resolve().parents[3]
T4 = 0.526  # g4dn.xlarge us-east-1 on-demand, per GPU-hour (catalog)
MOTO_NOISE = "Unable to find appropriate backend"
GIT = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
       "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}

AWS = [  # the AWS half (test_rightsize_moto's EXPECTED: the same hourly figures, a week of them)
    ("      minSize: 3", "      minSize: 1"),
    ("      desiredCapacity: 4", "      desiredCapacity: 1"),
    ("      maxSize: 24", "      maxSize: 4"),
    ("      maxSize: 8", "      maxSize: 3"),
]
KUBERNETES = [
    # embeddings: p95 need 0.2 GPUs / 70 % = 0.29 replicas, + 20 % → 1; peak 2 < 6 / 2 → 3
    ("          minReplicas: 2", "          minReplicas: 1"),
    ("          maxReplicas: 6", "          maxReplicas: 3"),
    # ml-platform: 2 allocated all week → ⌈2 x 1.25⌉ = 3 (and embeddings' new maximum, 3);
    # research: nightly-eval's 2 pods, 2 h a day (8 % of the week: p95 is 2) → 3
    ("          gpuQuota: 8", "          gpuQuota: 3"),
    ("          gpuQuota: 8", "          gpuQuota: 3"),
]


def changed_lines(before: str, after: str) -> Counter[tuple[str, str]]:
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    assert len(a) == len(b)
    return Counter((x.rstrip("\n"), y.rstrip("\n")) for x, y in zip(a, b, strict=True)
                   if x != y)


@pytest.fixture
def kit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = tmp_path / "kit"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("gpupool", "infra", "policies", "stacks"):
        shutil.copytree(ROOT / name, repo / name, ignore=ignore)
    shutil.copy(ROOT / "Pulumi.yaml", repo / "Pulumi.yaml")
    env = {**os.environ, **GIT}
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "kit"]):
        subprocess.run(["git", "-C", str(repo), *cmd], check=True, env=env, capture_output=True)
    monkeypatch.chdir(repo)
    return repo


@pytest.fixture
def week(moto: str, idle_prometheus) -> tuple[Window, str]:  # type: ignore[no-untyped-def]
    w = resolve_window(since=None, start=iso(idle_prometheus.start),
                       end=iso(idle_prometheus.end), period=3600)
    prod_groups(w)
    return w, idle_prometheus.url


def rightsize(capsys: pytest.CaptureFixture[str], week: tuple[Window, str], *args: str
              ) -> tuple[int, str, str]:
    window, url = week
    code = main(["rightsize", "--stack", "prod", "--start", iso(window.start), "--end",
                 iso(window.end), "--period", "3600", "--resolution", "1800",
                 "--prometheus", f"onprem={url}", *args])
    out, err = capsys.readouterr()
    out = "".join(x for x in out.splitlines(keepends=True) if not x.startswith(MOTO_NOISE))
    return code, out, err


def test_one_run_changes_both_halves_and_passes_check(
        kit: Path, week: tuple[Window, str], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    stack = kit / "stacks" / "Pulumi.prod.yaml"
    before = stack.read_text()

    code, out, err = rightsize(capsys, week)
    assert code == 0, err
    assert stack.read_text() == before  # the diff only
    minus = Counter(x[1:] for x in out.splitlines() if x.startswith("-") and x[:3] != "---")
    plus = Counter(x[1:] for x in out.splitlines() if x.startswith("+") and x[:3] != "+++")
    assert minus == Counter(o for o, _ in AWS + KUBERNETES)
    assert plus == Counter(n for _, n in AWS + KUBERNETES)
    assert "prod-training: left alone: its team tag is 'ml-platform'" in err
    assert "onprem/gpu-research/nightly-eval" not in err  # a Job's parallelism is its shape

    body_file = tmp_path / "pr.md"
    code, _, err = rightsize(capsys, week, "--write", "--pr-body", str(body_file))
    assert code == 0, err
    after = stack.read_text()
    assert changed_lines(before, after) == Counter(AWS + KUBERNETES)  # nothing else, byte for byte
    assert after.index("minReplicas: 1") > after.index("name: embeddings")
    assert "6 Prometheus quer(ies)" in err

    body = body_file.read_text()
    aws_month = 2 * 168 * 730 / 168 * T4  # inference: 2 T4 fewer every hour
    assert f"saving ${aws_month:,.2f}/month" in body  # on-premises GPUs cost 0 an hour here
    assert ("| `onprem/gpu-ml-platform/embeddings` | prod | ml-platform | "
            "`workloads.embeddings.minReplicas` 2 → 1, `workloads.embeddings.maxReplicas` "
            "6 → 3 | 10.0% | p95 need 0.29 replica(s) at 70 % → floor 1 | 168 (168 h) | "
            "730.0 | $0.00 |") in body
    assert ("| `onprem/gpu-research` | prod | research | `teams.research.gpuQuota` 8 → 3 | "
            "60.0% | p95 need 2.00 GPU(s) allocated → floor 3 | 168 (168 h) | 0.0 | $0.00 |"
            ) in body
    assert "`gpuHourlyCost`" in body

    assert main(["validate", "prod"]) == 0
    capsys.readouterr()
    done = subprocess.run([sys.executable, "-m", "gpupool", "check", "--stack", "prod",
                           "--base", "HEAD", "--format", "json"], cwd=kit, capture_output=True,
                          text=True, env={**os.environ, **GIT, "PYTHONPATH": str(kit)})
    assert done.returncode == 0, done.stderr + done.stdout
    assert '"verdict": "pass"' in done.stdout


def test_a_priced_on_premises_pool_gives_its_dollars(
        kit: Path, week: tuple[Window, str], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    stack = kit / "stacks" / "Pulumi.prod.yaml"
    text = stack.read_text()
    stack.write_text(text.replace("gpuHourlyCost: 0 ", "gpuHourlyCost: 1.25 ", 1))
    body_file = tmp_path / "pr.md"
    code, _, err = rightsize(capsys, week, "--pr-body", str(body_file))
    assert code == 0, err
    body = body_file.read_text()
    onprem = 730.0 * 1.25  # one L40S fewer every hour of the week, projected to a month
    aws = 2 * 730 * T4
    assert f"| 730.0 | ${onprem:,.2f} |" in body
    assert f"saving ${onprem + aws:,.2f}/month" in body


def test_an_unreadable_prometheus_leaves_the_pool_alone_and_aws_proceeds(
        kit: Path, week: tuple[Window, str], tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import gpupool.debt.prometheus.client as client

    monkeypatch.setattr(client, "sleep", lambda _s: None)  # count attempts, never wait
    window, _ = week
    code, out, err = rightsize(capsys, (window, "http://127.0.0.1:9"))
    assert code == 0, err
    assert "onprem: left alone: not read: http://127.0.0.1:9: " in err
    assert "minReplicas" not in out and "gpuQuota" not in out
    assert "-      minSize: 3" in out


# -- the same run from a saved snapshot (rightsize --utilisation) ---------------------------


def save(capsys: pytest.CaptureFixture[str], week: tuple[Window, str], path: Path) -> None:
    """``gpupool debt --stack prod`` over the same week, both halves, as a JSON document."""
    window, url = week
    code = main(["debt", "--stack", "prod", "--start", iso(window.start), "--end",
                 iso(window.end), "--period", "3600", "--resolution", "1800",
                 "--prometheus", f"onprem={url}", "--format", "json", "--output", str(path)])
    _, err = capsys.readouterr()
    assert code == 0, err


def from_snapshot(capsys: pytest.CaptureFixture[str], path: Path, *args: str
                  ) -> tuple[int, str, str]:
    code = main(["rightsize", "--stack", "prod", "--utilisation", str(path), *args])
    out, err = capsys.readouterr()
    return code, out, err


def left_alone(err: str) -> list[str]:
    return [x for x in err.splitlines() if "left alone" in x]


def test_the_snapshot_gives_the_live_run_both_halves(
        kit: Path, week: tuple[Window, str], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    stack = kit / "stacks" / "Pulumi.prod.yaml"
    before = stack.read_text()
    code, live_out, live_err = rightsize(capsys, week, "--pr-body", str(tmp_path / "live.md"))
    assert code == 0, live_err
    snap = tmp_path / "debt.json"
    save(capsys, week, snap)
    doc = json.loads(snap.read_text())
    onprem = next(s for s in doc["pool_series"] if s["pool"] == "onprem")
    assert doc["version"] == 3 and len(onprem["pods"]) == 4
    assert onprem["namespace_labels"]["gpu-ml-platform"]["gpupool_io_pool"] == "onprem"

    code, out, err = from_snapshot(capsys, snap, "--pr-body", str(tmp_path / "saved.md"))
    assert code == 0, err
    assert out == live_out  # the same diff, both halves
    assert (tmp_path / "saved.md").read_text() == (tmp_path / "live.md").read_text()
    assert left_alone(err) == left_alone(live_err) and left_alone(err)
    assert "0 API call(s), 0 Prometheus quer(ies)" in err and "6 Prometheus" in live_err
    assert "gpuQuota: 3" in out and "minReplicas: 1" in out  # the Kubernetes half is there

    code, _, err = rightsize(capsys, week, "--write")
    assert code == 0, err
    live_after = stack.read_text()
    stack.write_text(before)
    code, _, err = from_snapshot(capsys, snap, "--write")
    assert code == 0, err
    assert stack.read_text() == live_after
    assert changed_lines(before, live_after) == Counter(AWS + KUBERNETES)


def test_a_version_2_snapshot_changes_the_aws_half_and_says_why_not_the_rest(
        kit: Path, week: tuple[Window, str], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    snap = tmp_path / "debt.json"
    save(capsys, week, snap)
    doc = json.loads(snap.read_text())
    doc["version"] = 2  # what the kit wrote before the pods were saved
    for entry in doc["pool_series"]:
        entry.pop("pods", None), entry.pop("namespace_labels", None)
    snap.write_text(json.dumps(doc))
    code, out, err = from_snapshot(capsys, snap)
    assert code == 0, err
    minus = Counter(x[1:] for x in out.splitlines() if x.startswith("-") and x[:3] != "---")
    assert minus == Counter(o for o, _ in AWS)
    assert ("gpupool rightsize: onprem: left alone: the snapshot is format version 2, which "
            "does not carry the pods' series and namespace labels") in err
    assert "minReplicas" not in out and "gpuQuota" not in out

    doc.update(version=3)  # a snapshot that did not read the stack's Kubernetes pool
    doc["pools"] = [p for p in doc["pools"] if p["pool"] != "onprem"]
    doc["pool_series"] = [s for s in doc["pool_series"] if s["pool"] != "onprem"]
    snap.write_text(json.dumps(doc))
    code, out, err = from_snapshot(capsys, snap)
    assert code == 0, err
    assert f"onprem: left alone: not in the snapshot {snap}" in err
