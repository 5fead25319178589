"""``rightsize --utilisation FILE``: a saved debt document gives the live run's proposals.

The prod stack's seeded idle week (test_rightsize_moto's fleet) on the moto server is read
twice: live, as ``rightsize`` reads it, and through ``gpupool debt --format json --output F``
then ``rightsize --utilisation F``. Same proposals (the evidence to the last float), same diff,
same pull-request text, same written stack, and the saved run makes no API call. Older and
broken snapshots are one line on stderr naming the file and the key, exit 2.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the live test's fleet and kit
from test_rightsize_moto import (
    EXPECTED,
    MOTO_NOISE,
    ROOT,
    changed_lines,
    kit,
    prod_fleet,
)

from gpupool.cli import main
from gpupool.debt.window import Window, iso, resolve_window

WINDOW_ARGS = ("--period", "3600")


@pytest.fixture
def window(moto: str) -> Window:
    w = resolve_window(since="6h", start=None, end=None, period=3600)
    prod_fleet(w)
    return w


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    out = "".join(x for x in out.splitlines(keepends=True) if not x.startswith(MOTO_NOISE))
    return code, out, err


def live(capsys: pytest.CaptureFixture[str], window: Window, *args: str
         ) -> tuple[int, str, str]:
    return run(capsys, "rightsize", "--stack", "prod", "--start", iso(window.start), "--end",
               iso(window.end), *WINDOW_ARGS, "--min-span", "6h", "--no-prometheus", *args)


def save(capsys: pytest.CaptureFixture[str], window: Window, path: Path) -> dict[str, Any]:
    code, _, err = run(capsys, "debt", "--start", iso(window.start), "--end", iso(window.end),
                       *WINDOW_ARGS, "--format", "json", "--output", str(path))
    assert code == 0, err
    doc: dict[str, Any] = json.loads(path.read_text())
    return doc


def saved(capsys: pytest.CaptureFixture[str], path: Path, *args: str) -> tuple[int, str, str]:
    return run(capsys, "rightsize", "--stack", "prod", "--utilisation", str(path),
               "--min-span", "6h", "--no-prometheus", *args)


def left_alone(err: str) -> list[str]:
    return [x for x in err.splitlines() if "left alone" in x]


def test_snapshot_gives_the_live_proposals_diff_and_pr_body(
        window: Window, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    repo = kit(tmp_path / "kit")
    monkeypatch.chdir(repo)
    code, live_out, live_err = live(capsys, window, "--pr-body", str(tmp_path / "live.md"))
    assert code == 0, live_err
    doc = save(capsys, window, tmp_path / "debt.json")
    assert doc["version"] == 3 and len(doc["pool_series"]) == len(doc["pools"]) == 5

    code, out, err = saved(capsys, tmp_path / "debt.json", "--pr-body", str(tmp_path / "s.md"))
    assert code == 0, err
    assert out == live_out and out.count("\n+      ") == len(EXPECTED)
    assert (tmp_path / "s.md").read_text() == (tmp_path / "live.md").read_text()
    assert left_alone(err) == left_alone(live_err) and len(left_alone(err)) == 4
    assert "2 pool(s) changed in 1 stack file(s); 0 API call(s)" in err
    assert "onprem: left alone: not read (--no-prometheus)" in err
    calls = int(live_err.split("; ")[-1].split()[0])
    assert calls > 0  # the live read's discovery and GetMetricData; the snapshot's: none

    stack = repo / "stacks" / "Pulumi.prod.yaml"
    before = stack.read_text()
    code, _, err = saved(capsys, tmp_path / "debt.json", "--write")
    assert code == 0, err
    assert changed_lines(before, stack.read_text()) == EXPECTED
    assert main(["validate", "prod"]) == 0

    # without --no-prometheus: the Kubernetes pool is never read live beside the snapshot, and
    # this one (AWS only) does not hold it (test_rightsize_hybrid: one that does)
    code, _, err = run(capsys, "rightsize", "--stack", "prod", "--utilisation",
                       str(tmp_path / "debt.json"), "--min-span", "6h")
    assert code == 0, err
    assert f"onprem: left alone: not in the snapshot {tmp_path / 'debt.json'} (write one " \
           "that reads it: gpupool debt --stack STACK" in err
    assert "0 API call(s), 0 Prometheus" in err

    # a stack pool whose group the snapshot does not hold is said, never skipped in silence
    short = {**doc, "pools": [p for p in doc["pools"] if p["pool"] != "prod-l4"],
             "pool_series": [s for s in doc["pool_series"] if s["pool"] != "prod-l4"]}
    (tmp_path / "short.json").write_text(json.dumps(short))
    code, _, err = saved(capsys, tmp_path / "short.json")
    assert code == 0, err
    assert (f"prod/l4-inference: left alone: not in the snapshot {tmp_path / 'short.json'}: "
            "none of its groups in us-east-1 is tagged managed-by=gpupool, environment=prod, "
            "gpupool:pool=l4-inference\n") in err


def test_the_saved_figures_are_the_live_figures(
        window: Window, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Every proposal and every reason, evidence included, compared as values, not text."""
    from gpupool.catalog import load_catalog
    from gpupool.config.loader import load_stack
    from gpupool.debt.aws import make_clients
    from gpupool.debt.render import render_json
    from gpupool.debt.report import build_report
    from gpupool.rightsize.propose import StackEntry, propose
    from gpupool.rightsize.snapshot import read_saved

    monkeypatch.chdir(kit(tmp_path / "kit"))
    report = build_report(make_clients("us-east-1"), window, load_catalog(region="us-east-1"),
                          compute_optimizer=False)
    (tmp_path / "debt.json").write_text(render_json(report))
    back = read_saved(tmp_path / "debt.json")
    assert back.window == window
    s = load_stack("prod")
    entries = [StackEntry(s.name, s.shown_path, s.config, s.flat)]
    for pct, share in ((95, 0.2), (50, 0.0), (100, 1.0)):
        a = propose(report.pools, window, entries, pct=pct, headroom=share, min_span_hours=6)
        b = propose(back.pools, back.window, entries, pct=pct, headroom=share,
                    min_span_hours=6)
        assert a.proposals and a == b
    for f, g in zip(report.pools, back.pools, strict=True):
        assert (f.name, f.status, f.timeline, f.sums, f.peak_in_service) == (
            g.name, g.status, g.timeline, g.sums, g.peak_in_service)
        assert dict(f.pool.tags) == dict(g.pool.tags)  # type: ignore[attr-defined]


# -- bad snapshots: one line, exit 2 ---------------------------------------------------------


def _doc() -> dict[str, Any]:
    """A small valid version 2 document (no server: the synthetic fleet of the HTML tests)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "debt"))
    from html_fleet import fleet_report

    from gpupool.debt.render import render_json

    doc: dict[str, Any] = json.loads(render_json(fleet_report()))
    return doc


def _series(d: dict[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = d["pool_series"][1]
    return entry


BAD: list[tuple[str, Any, str]] = [
    ("version 1", lambda d: {**{k: v for k, v in d.items() if k != "pool_series"},
                             "version": 1},
     "version: expected a snapshot of version 2 or later, with each pool's per-bucket series "
     "(pool_series), got version 1"),
    ("no version", lambda d: {k: v for k, v in d.items() if k not in ("version", "pool_series")},
     "version: expected a snapshot of version 2 or later"),
    ("no series", lambda d: {k: v for k, v in d.items() if k != "pool_series"},
     "pool_series: expected each pool's per-bucket series"),
    ("short timeline", lambda d: _series(d)["timeline"]["used"].pop(),
     "pool_series[1].timeline.used: expected 24 value(s), one per bucket of the window, got 23"),
    ("negative GPUs", lambda d: _series(d)["timeline"]["allocated"].__setitem__(3, -1),
     "pool_series[1].timeline.allocated[3]: expected at least 0, got -1"),
    ("text for a number", lambda d: _series(d)["sums"].__setitem__("used_gpu_hours", "lots"),
     "pool_series[1].sums.used_gpu_hours: expected a number, got 'lots'"),
    ("out of order", lambda d: d["pool_series"].reverse(),
     "pool_series[0].pool: expected 'a' (the series follow the pools rows in order), got 'e"),
    ("one short", lambda d: {**d, "pool_series": d["pool_series"][:-1]},
     "pool_series: expected one entry per pools row (5), got 4"),
    ("no tags", lambda d: _series(d).__delitem__("tags"),
     "pool_series[1].tags: expected a value: this key is required"),
    ("bad status", lambda d: d["pools"][0].__setitem__("status", "fine"),
     "pools[0].status: expected "),
    ("ragged window", lambda d: d["window"].__setitem__("end", "2026-11-24T00:30:00Z"),
     "window: expected an end after the start by whole periods of 3600 s"),
    ("not the document", lambda d: {"pools": []}, "expected the JSON of `gpupool debt"),
]


def _kube_doc() -> dict[str, Any]:
    """The synthetic fleet and a Kubernetes pool (its entry pool_series[5]), version 3."""
    from dataclasses import replace

    from html_fleet import fleet_report
    from kube_figures import kube_pool

    from gpupool.debt.render import render_json

    r = fleet_report()
    doc: dict[str, Any] = json.loads(render_json(replace(
        r, pools=[*r.pools, kube_pool(r.window.buckets)])))
    return doc


def _pod(d: dict[str, Any], i: int) -> dict[str, Any]:
    pod: dict[str, Any] = d["pool_series"][5]["pods"][i]
    return pod


BAD_KUBE: list[tuple[str, Any, str]] = [
    ("no pods", lambda d: d["pool_series"][5].pop("pods"),
     "pool_series[5].pods: expected the pods of a kubernetes pool (a version 3 document "
     "carries them); write one with gpupool debt --format json --output FILE"),
    ("no labels", lambda d: d["pool_series"][5].pop("namespace_labels"),
     "pool_series[5].namespace_labels: expected the namespace labels of a kubernetes pool"),
    ("a pod's ragged series", lambda d: _pod(d, 0)["timeline"]["used"].pop(),
     "pool_series[5].pods[0].timeline.used: expected 24 value(s), as many as allocated, got 23"),
    ("a pod past the window", lambda d: _pod(d, 1).__setitem__("first_bucket", 23),
     "pool_series[5].pods[1].first_bucket: expected the pod's 2 value(s) to end within the "
     "window's 24 buckets, got first_bucket 23"),
    ("a pod's bad status", lambda d: _pod(d, 0).__setitem__("status", "fine"),
     "pool_series[5].pods[0].status: expected "),
    ("a pod's negative GPUs", lambda d: _pod(d, 0)["timeline"]["allocated"].__setitem__(0, -1),
     "pool_series[5].pods[0].timeline.allocated[0]: expected at least 0, got -1"),
    ("a label not text", lambda d: d["pool_series"][5]["namespace_labels"]["vision"]
     .__setitem__("team", 3), "pool_series[5].namespace_labels.vision.team: expected text, "
     "got 3"),
]


@pytest.mark.parametrize(("case", "spoil", "message"), BAD_KUBE, ids=[b[0] for b in BAD_KUBE])
def test_a_bad_kubernetes_entry_is_one_line_exit_2(
        case: str, spoil: Any, message: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    doc = _kube_doc()
    spoil(doc)
    path = tmp_path / "snap.json"
    path.write_text(json.dumps(doc))
    code, out, err = saved(capsys, path)
    assert code == 2, case
    assert out == "" and "Traceback" not in err
    assert err.count("\n") == 1 and err.startswith(f"gpupool rightsize: {path}: ")
    assert message in err, err


def test_the_kubernetes_doc_itself_is_read(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The unspoilt document of BAD_KUBE is good: each case fails for its own key."""
    monkeypatch.chdir(ROOT)
    path = tmp_path / "snap.json"
    path.write_text(json.dumps(_kube_doc()))
    code, _, err = run(capsys, "rightsize", "--stack", "prod", "--utilisation", str(path),
                       "--min-span", "6h")
    assert code == 0, err
    assert "eks-gpu: left alone: not the kit's" not in err  # its labels were read back
    assert "eks-gpu: left alone: no stack of environment 'prod' has a Kubernetes pool" in err


@pytest.mark.parametrize(("case", "spoil", "message"), BAD, ids=[b[0] for b in BAD])
def test_a_bad_snapshot_is_one_line_exit_2(
        case: str, spoil: Any, message: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the kit's own stacks: nothing is written, the snapshot fails first
    doc = _doc()
    spoiled = spoil(doc)
    path = tmp_path / "snap.json"
    path.write_text(json.dumps(spoiled if isinstance(spoiled, dict) else doc))
    code, out, err = saved(capsys, path)
    assert code == 2, case
    assert out == "" and "Traceback" not in err
    assert err.count("\n") == 1 and err.startswith(f"gpupool rightsize: {path}: ")
    assert message in err, err


@pytest.mark.parametrize("args", [("--since", "7d"), ("--region", "us-west-2"),
                                  ("--period", "300"),
                                  ("--prometheus", "onprem=http://127.0.0.1:9")])
def test_a_window_beside_a_snapshot_is_refused(
        args: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    path = tmp_path / "snap.json"
    path.write_text(json.dumps(_doc()))
    code, _, err = saved(capsys, path, *args)
    assert code == 2 and err.count("\n") == 1
    assert f"{args[0]} {args[1]}: expected no {args[0]} with --utilisation" in err


def test_a_missing_or_broken_file_is_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    code, _, err = saved(capsys, tmp_path / "none.json")
    assert code == 2 and err.count("\n") == 1 and "gpupool debt --format json" in err
    (tmp_path / "half.json").write_text(json.dumps(_doc())[:5000])
    code, _, err = saved(capsys, tmp_path / "half.json")
    assert code == 2 and err.count("\n") == 1 and "expected JSON" in err
