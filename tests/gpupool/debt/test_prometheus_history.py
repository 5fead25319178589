"""The seeded history speaks the pinned exporters' language: its series carry exactly the
label names their real /metrics samples carry (tests/fixtures/prometheus, with sources), and
it is valid OpenMetrics for promtool (timestamps ascending per series, ``# EOF`` last)."""

from __future__ import annotations

import re
from pathlib import Path

import prom_history as ph

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "prometheus"
SAMPLE = re.compile(r"^([A-Za-z_:][A-Za-z0-9_:]*)\{(.*)\} (\S+)")
TARGET = {"job", "instance"}  # what the scrape adds


def real_labels(name: str) -> dict[str, set[frozenset[str]]]:
    out: dict[str, set[frozenset[str]]] = {}
    for line in (FIXTURES / name).read_text().splitlines():
        m = SAMPLE.match(line)
        if m:
            keys = frozenset(k.strip() for k, _ in re.findall(r'([\w]+)\s*=\s*"([^"]*)"', m[2]))
            out.setdefault(m[1], set()).add(keys)
    return out


def generated() -> dict[str, set[frozenset[str]]]:
    hist = ph.cluster(1_700_000_000 // 3600 * 3600)
    return {metric: {frozenset(labels) - TARGET for labels, _ in series}
            for metric, series in hist.families.items()}


def test_kube_state_metrics_label_sets_are_v2_20_0s() -> None:
    real, ours = real_labels("kube-state-metrics-v2.20.0-pod0.prom"), generated()
    for family in ("kube_pod_container_resource_requests", "kube_pod_status_phase"):
        assert ours[family] == real[family], family


def test_dcgm_exporter_label_sets_are_4_8_2s() -> None:
    ours = generated()
    (server,) = real_labels("dcgm-exporter-4.5.3-4.8.2-server.prom")["TEST_METRIC"]
    readme: set[str] = set().union(*(keys for found in real_labels(
        "dcgm-exporter-4.5.3-4.8.2-README.metrics").values() for keys in found))
    mig = {"GPU_I_PROFILE", "GPU_I_ID"}
    mapped = {"container", "namespace", "pod"}
    pod_labels = {"team", "cost_center", "app_kubernetes_io_name"}  # the kit's allowlist
    for family in (ph.UTIL, ph.ENGINE):
        for keys in ours[family]:
            # every device series: the server's full set, the static DCGM_FI_DRIVER_VERSION
            # label (default-counters.csv), and only the exporter's optional groups
            assert server <= keys, (family, keys)
            assert keys - server - {"DCGM_FI_DRIVER_VERSION"} <= mig | mapped | pod_labels
    assert readme <= {*server, *mapped}
    assert any(mapped <= keys and not keys & mig for keys in ours[ph.UTIL])
    assert any(mig <= keys for keys in ours[ph.ENGINE])


def test_the_history_is_openmetrics_promtool_reads(tmp_path: Path) -> None:
    path = tmp_path / "h.om"
    lines = ph.cluster(1_700_000_000 // 3600 * 3600).write(path)
    text = path.read_text().splitlines()
    assert len(text) == lines and text[-1] == "# EOF"
    last: dict[str, int] = {}
    for line in text:
        if line.startswith("#"):
            continue
        series, _value, ts = line.rsplit(" ", 2)
        assert int(ts) > last.get(series, 0)
        last[series] = int(ts)
    assert 40_000 < lines < 80_000  # the fixture stays cheap to backfill
