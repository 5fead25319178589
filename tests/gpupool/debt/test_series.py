"""The JSON document's ``pool_series`` (format version 3): written beside the rows, read back
whole by ``rightsize --utilisation`` (gpupool.rightsize.snapshot), Kubernetes lines, pods and
namespace labels included."""

from __future__ import annotations

import json
from dataclasses import replace

import synthetic as syn
from html_fleet import fleet_report
from kube_figures import kube_pool

from gpupool.debt.render import render_json
from gpupool.debt.report import Report
from gpupool.rightsize.snapshot import parse_saved


def report() -> Report:
    r = fleet_report()
    return replace(r, pools=[*r.pools, kube_pool(r.window.buckets)])


def test_the_document_is_the_report_dict_plus_one_series_line_a_pool() -> None:
    r = report()
    text = render_json(r)
    doc = json.loads(text)
    assert doc.pop("version") == 3
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
        assert f.pods == g.pods and f.namespace_labels == g.namespace_labels
    assert back.pools[-1].lines[0].timeline.used[0] == 1 / 3  # unrounded
    assert back.pools[0].pool.region == "us-east-1"  # an AWS row without one: the document's
    assert back.pools[-1].pool.region is None  # a Kubernetes pool is in no AWS region
    assert back.pools[-1].pods and back.pools[-1].namespace_labels  # not vacuous
    assert back.kubernetes == [back.pools[-1]] and back.left_alone == []


def test_a_pod_is_kept_over_the_buckets_it_ran_in_only() -> None:
    r = report()
    entry = json.loads(render_json(r))["pool_series"][-1]
    held, brief = entry["pods"]
    assert held["first_bucket"] == 0 and len(held["timeline"]["allocated"]) == 24
    assert brief["first_bucket"] == 2 and brief["timeline"] == {
        "allocated": [1.0, 1.0], "used": [None, None], "measured": [0.0, 0.0]}  # no capacity
    assert "pods" not in json.loads(render_json(r))["pool_series"][0]  # AWS: as in version 2


def test_a_version_2_document_keeps_its_aws_pools_and_says_why_not_its_kubernetes() -> None:
    doc = json.loads(render_json(report()))
    doc["version"] = 2
    for entry in doc["pool_series"]:
        entry.pop("pods", None), entry.pop("namespace_labels", None)
    back = parse_saved(doc, "old.json")
    assert len(back.pools) == 6 and back.kubernetes == [] and back.version == 2
    assert back.left_alone == [("eks-gpu", "the snapshot is format version 2, which does not "
                                "carry the pods' series and namespace labels of Kubernetes "
                                "and on-premises pools: not proposed from it; write a version "
                                "3 one with gpupool debt --stack STACK --format json --output "
                                "FILE")]


def test_an_empty_report_is_still_a_document() -> None:
    r = replace(syn.report([]), pools=[])
    doc = json.loads(render_json(r))
    assert doc["pool_series"] == [] and doc["version"] == 3
    assert parse_saved(doc, "debt.json").pools == []
