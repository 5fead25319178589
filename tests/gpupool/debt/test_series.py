"""The JSON document's ``pool_series`` (format version 2): written beside the rows, read back
whole by ``rightsize --utilisation`` (gpupool.rightsize.snapshot), Kubernetes lines included."""

from __future__ import annotations

import json
from dataclasses import replace

import synthetic as syn
from html_fleet import fleet_report

from gpupool.debt.model import Charge, KubePool, PoolFigures, Sums, Timeline
from gpupool.debt.render import render_json
from gpupool.debt.report import Report
from gpupool.rightsize.snapshot import parse_saved


def kube_pool(buckets: int) -> PoolFigures:
    def t(alloc: float | None, used: float | None) -> Timeline:
        return Timeline((8.0,) * buckets, (alloc,) * buckets, (used,) * buckets,
                        (alloc if used is not None else None,) * buckets)

    s = Sums(capacity_gpu_hours=8.0 * buckets, allocated_gpu_hours=3.0 * buckets,
             used_gpu_hours=0.1 * buckets, measured_gpu_hours=3.0 * buckets)
    info = KubePool("eks-gpu", "kubernetes", "http://127.0.0.1:9090", "ml", None,
                    "g4dn.xlarge", "T4", 1.0, 8, min_size=2, max_size=8)
    lines = [Charge("eks-gpu", "vision", "namespace", "measured", s, t(2.0, 1 / 3),
                    namespace="vision", pods=("a-0", "a-1")),
             Charge("eks-gpu", "ml", "capacity", "partial", Sums(), t(None, None))]
    return PoolFigures(info, "measured", s, t(3.0, 0.1), None, 0.526, buckets, buckets, None,
                       lines=lines, namespace_quota={"vision": 4.0},
                       autoscalers=[{"kind": "ScaledObject", "max_replicas": 6}])


def report() -> Report:
    r = fleet_report()
    return replace(r, pools=[*r.pools, kube_pool(r.window.buckets)])


def test_the_document_is_the_report_dict_plus_one_series_line_a_pool() -> None:
    r = report()
    text = render_json(r)
    doc = json.loads(text)
    assert doc.pop("version") == 2
    series = doc.pop("pool_series")
    plain = json.loads(json.dumps(r.to_dict()))
    plain.pop("version"), plain.pop("generated_at"), doc.pop("generated_at")
    assert doc == plain  # the rows and every other key as before
    assert [s["pool"] for s in series] == [p["pool"] for p in doc["pools"]]
    lines = text.splitlines()
    at = lines.index('  "pool_series": [')
    assert all(line.startswith("    {") for line in lines[at + 1:at + 1 + len(series)])
    assert lines[-2:] == ["  ]", "}"]


def test_read_back_the_figures_are_the_reports() -> None:
    r = report()
    back = parse_saved(json.loads(render_json(r)), "debt.json")
    assert back.window == r.window and len(back.pools) == len(r.pools) == 6
    for f, g in zip(r.pools, back.pools, strict=True):
        assert (f.name, f.status, f.platform, f.team, f.timeline, f.sums, f.peak_in_service,
                f.price_per_gpu_hour, f.namespace_quota, f.autoscalers) == (
            g.name, g.status, g.platform, g.team, g.timeline, g.sums, g.peak_in_service,
            g.price_per_gpu_hour, g.namespace_quota, g.autoscalers)
        assert f.lines == g.lines  # Kubernetes charge lines: timelines and sums, exactly
        assert g.pool.gpus_per_instance == f.pool.gpus_per_instance
    assert back.pools[-1].lines[0].timeline.used[0] == 1 / 3  # unrounded
    assert back.pools[0].pool.region == "us-east-1"  # an AWS row without one: the document's
    assert back.pools[-1].pool.region is None  # a Kubernetes pool is in no AWS region


def test_an_empty_report_is_still_a_document() -> None:
    r = replace(syn.report([]), pools=[])
    doc = json.loads(render_json(r))
    assert doc["pool_series"] == [] and doc["version"] == 2
    assert parse_saved(doc, "debt.json").pools == []
