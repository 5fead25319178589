"""``gpupool debt --format html --forecast`` end to end: the week of the messy cluster read from
the real Prometheus, the page opened in a real headless Chromium (tests/gpupool/debt/browser.py):
no console error, the Kubernetes namespaces and the forecast are there, and the total panel's
drawn series add up to the totals of the JSON document the page carries."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from browser import SKIP, chromium, executable
from html_fleet import bucket_values

from gpupool.cli import main
from gpupool.debt.window import iso

pytestmark = pytest.mark.skipif(executable() is None, reason=SKIP)

TOTAL = """(() => {
  const svg = document.querySelector('#chart-pool figure.panel svg');
  const g = {};
  for (const k of ['x0', 'x1', 'y0', 'ytop', 'ymax', 'buckets']) g[k] = Number(svg.dataset[k]);
  const series = {};
  for (const p of svg.querySelectorAll('path[data-series]'))
    series[p.dataset.series] = p.getAttribute('d');
  return {geometry: g, series,
          doc: JSON.parse(document.getElementById('gpupool-debt').textContent)};
})()"""


def test_the_clusters_page(prometheus: Any, tmp_path: Path) -> None:
    page = tmp_path / "debt.html"
    assert main(["debt", "--no-aws", "--start", iso(prometheus.start), "--end",
                 iso(prometheus.end), "--period", "3600", "--resolution", "1800",
                 "--prometheus", prometheus.url, "--forecast", "30d", "--format", "html",
                 "--output", str(page)]) == 0
    with chromium() as browser:
        browser.open(page.as_uri())
        assert browser.errors() == []
        drawn = browser.evaluate(TOTAL)
        doc = drawn["doc"]
        rows = browser.evaluate("document.querySelectorAll('#namespaces tbody tr').length")
        assert rows == len(doc["namespaces"]) > 0
        pools = browser.evaluate("Array.from(document.querySelectorAll('#forecast-pools tbody "
                                 "tr')).map(r => r.cells[0].textContent)")
        assert pools == [p["pool"] for p in doc["forecast"]["pools"]]
    totals = doc["totals"]
    for key in ("capacity", "allocated", "used"):
        values = [v for v in bucket_values(drawn["series"][key], drawn["geometry"])
                  if v is not None]
        assert round(sum(values), 1) == round(totals[f"{key}_gpu_hours"], 1), key
    assert {p["platform"] for p in doc["pools"]} == {"kubernetes", "on-prem"}
