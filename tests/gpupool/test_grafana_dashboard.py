"""``gpupool render``'s Grafana dashboard: a ConfigMap the Grafana chart's sidecar loads, its
JSON valid against Grafana's dashboard schema (vendored, gpupool/k8s/grafana/SOURCES.md), the
same picture as ``gpupool debt`` (its colours, gaps as gaps), and left out when the stack says
so. Its queries run against a real Prometheus in tests/gpupool/debt/test_grafana_queries.py."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from gpupool.cli import main
from gpupool.debt.chart import COLOURS
from gpupool.k8s import render
from gpupool.k8s.grafana import dashboard as board
from gpupool.k8s.grafana.validate import configmap_problems, problems
from gpupool.yamlio import read_yaml_documents
from tests.infra.test_k8s_pool import EKS_STACK

ROOT = Path(__file__).resolve().parents[2]
GRAFANA = ROOT / "gpupool" / "k8s" / "grafana"


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("render")
    assert main(["render", str(ROOT / "stacks" / "Pulumi.prod.yaml"), "--out", str(out)]) == 0
    (path,) = (out / "onprem").glob("*-configmap-gpupool-system-gpupool-onprem-dashboard.yaml")
    (doc,) = read_yaml_documents(path)
    return doc.value


def test_the_vendored_schema_is_the_one_sources_names() -> None:
    digest = hashlib.sha256((GRAFANA / "dashboard.jsonschema.json").read_bytes()).hexdigest()
    assert digest in (GRAFANA / "SOURCES.md").read_text()


def test_a_configmap_the_sidecar_loads(rendered: dict[str, Any]) -> None:
    meta = rendered["metadata"]
    assert meta["labels"]["grafana_dashboard"] == "1"  # the chart's sidecar.dashboards.label
    assert meta["namespace"] == "gpupool-system" and meta["labels"]["team"] == "ml-platform"
    (key,) = rendered["data"]
    assert key == "gpupool-onprem.json"
    dash = json.loads(rendered["data"][key])
    assert list(problems(dash)) == [] and list(configmap_problems(rendered)) == []
    assert dash["uid"] == "gpupool-onprem" and dash["schemaVersion"] == board.SCHEMA_VERSION


def test_the_same_picture_as_gpupool_debt(rendered: dict[str, Any]) -> None:
    dash = json.loads(next(iter(rendered["data"].values())))
    assert board.COLOURS == COLOURS
    (main_panel,) = [p for p in dash["panels"] if p["title"].startswith("GPUs of pool onprem")]
    colours = {o["matcher"]["options"]["names"][0]: o["properties"][0]["value"]["fixedColor"]
               for o in main_panel["fieldConfig"]["overrides"]}
    assert colours == COLOURS
    assert [t["legendFormat"] for t in main_panel["targets"]] == ["capacity", "allocated", "used"]
    assert "Unit: GPUs; window: the dashboard's time range" in main_panel["description"]
    for panel in dash["panels"]:
        for target in panel["targets"]:
            assert "vector(0)" not in target["expr"]  # a gap stays a gap
            assert 'label_gpupool_io_pool="onprem"' in target["expr"]
        if panel["type"] == "timeseries":
            custom = panel["fieldConfig"]["defaults"]["custom"]
            assert custom["spanNulls"] is False and custom["lineInterpolation"] == "stepAfter"
            assert custom["axisLabel"] == "GPUs"
    stats = [p["title"] for p in dash["panels"] if p["type"] == "stat"]
    assert all("over the range" in t for t in stats)


def test_a_pool_without_node_selector_reads_every_node() -> None:
    assert board.node_filter({}) == ""
    assert "kube_node_labels" not in board.queries({})["capacity"]
    assert board.kube_label("nvidia.com/gpu.present") == "label_nvidia_com_gpu_present"
    assert 'label_x="a\\"b"' in board.node_filter({"x": 'a"b'})


@pytest.mark.parametrize(("change", "expected"), [
    (lambda d: d.pop("schemaVersion"), ".: 'schemaVersion' is a required property"),
    (lambda d: d.update(refresh_rate="5m"), "'refresh_rate' was unexpected"),
    (lambda d: d["panels"][0]["gridPos"].update(w=30), ".panels[0].gridPos.w: 30 is greater "
                                                        "than the maximum of 24"),
    (lambda d: d["panels"][4]["fieldConfig"]["defaults"].update(colour="red"),
     ".panels[4].fieldConfig.defaults: Additional properties are not allowed ('colour'"),
    (lambda d: d["templating"]["list"][0].update(type="dropdown"),
     ".templating.list[0].type: 'dropdown' is not one of"),
])
def test_a_dashboard_grafana_would_not_read_is_refused(change: Any, expected: str) -> None:
    dash = board.dashboard("onprem", {"gpupool.io/pool": "onprem"})
    change(dash)
    assert any(p.startswith(expected) or expected in p for p in problems(dash)), list(
        problems(dash))


def test_render_refuses_a_broken_dashboard_configmap(rendered: dict[str, Any]) -> None:
    broken = copy.deepcopy(rendered)
    dash = json.loads(broken["data"]["gpupool-onprem.json"])
    dash["panels"][0]["gridPos"]["h"] = 0
    broken["data"]["gpupool-onprem.json"] = json.dumps(dash)
    broken["data"]["notes.txt"] = "hello"
    lines = render.validate([render.RenderedObject("onprem", broken)], {"onprem": "1.31"},
                            "stacks/Pulumi.prod.yaml")
    assert lines == [
        "stacks/Pulumi.prod.yaml: pool onprem: ConfigMap gpupool-system/gpupool-onprem-dashboard"
        ": data.gpupool-onprem.json: Grafana dashboard .panels[0].gridPos.h: 0 is less than or "
        "equal to the minimum of 0",
        "stacks/Pulumi.prod.yaml: pool onprem: ConfigMap gpupool-system/gpupool-onprem-dashboard"
        ": data.notes.txt: expected a dashboard file name ending in .json"]


def test_the_stack_can_opt_out(tmp_path: Path) -> None:
    stack = tmp_path / "Pulumi.eks.yaml"
    stack.write_text(EKS_STACK.replace("      gpuOperator: true\n", "      gpuOperator: true\n"
                                       "      monitoring: {grafanaDashboard: false}\n"))
    out = tmp_path / "out"
    assert main(["render", str(stack), "--out", str(out)]) == 0
    assert not list((out / "eks-gpu").glob("*configmap*"))
    stack.write_text(EKS_STACK)
    assert main(["render", str(stack), "--out", str(out)]) == 0
    (cm,) = (out / "eks-gpu").glob("*configmap*dashboard*")
    (doc,) = read_yaml_documents(cm)
    dash = json.loads(doc.value["data"]["gpupool-eks-gpu.json"])
    assert list(problems(dash)) == []
