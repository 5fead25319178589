"""``--format html`` without a browser: the page is self-contained, its policy allows exactly
its own style and script, user text is escaped, and what is drawn is the report's series."""

from __future__ import annotations

import base64
import hashlib
import json
import re

import pytest
from html_fleet import HOSTILE, bucket_values, fleet_report

from gpupool.debt.chart import chart_data
from gpupool.debt.html import render_html
from gpupool.debt.html.svg import nice_max, series_path


def page() -> str:
    return render_html(fleet_report())


def sha(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


def test_the_policy_allows_exactly_the_inline_style_and_script() -> None:
    html = page()
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)[1]  # type: ignore[index]
    csp = csp.replace("&#x27;", "'")
    styles = re.findall(r"<style>(.*?)</style>", html, re.S)
    scripts = re.findall(r"<script>(.*?)</script>", html, re.S)
    assert len(styles) == 1 and len(scripts) == 1
    assert f"style-src '{sha(styles[0])}'" in csp and f"script-src '{sha(scripts[0])}'" in csp
    assert "default-src 'none'" in csp and "connect-src 'none'" in csp
    # nothing to fetch: no URL anywhere but the SVG pattern's fragment reference
    assert not re.search(r'<[^>]*\s(src|href)=|https?://|@import|url\((?!#unmeasured\))', html)


def test_user_text_is_escaped_and_the_data_block_cannot_end_early() -> None:
    html = page()
    assert HOSTILE not in html and "<img" not in html
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;&lt;/script&gt;" in html
    block = re.search(r'<script type="application/json" id="gpupool-debt">(.*?)</script>',
                      html, re.S)[1]  # type: ignore[index]
    assert "<" not in block and ">" not in block
    inline, fresh = json.loads(block), json.loads(json.dumps(fleet_report().to_dict()))
    inline.pop("generated_at"), fresh.pop("generated_at")  # two reports, a second apart at most
    assert inline == fresh


def test_missing_figures_are_not_measured_never_zero() -> None:
    html = page()
    row = re.search(r"<tr><td>c</td>.*?</tr>", html)[0]  # type: ignore[index]
    assert row.count('class="num missing" data-v=""') >= 3  # used, debt, utilisation
    assert "not measured" in row and 'data-v="0' not in row.split("not measured")[1][:40]


@pytest.mark.parametrize("by", ["pool", "team"])
def test_drawn_paths_are_the_chart_data(by: str) -> None:
    report = fleet_report()
    html = render_html(report)
    section = re.search(rf'<section class="chart" id="chart-{by}".*?</section>', html, re.S)[0]  # type: ignore[index]
    svgs = re.findall(r"<svg viewBox[^>]*>.*?</svg>", section, re.S)
    panels = chart_data(report, by)  # type: ignore[arg-type]
    assert len(svgs) == len(panels)
    for svg, panel in zip(svgs, panels, strict=True):
        geometry = {k: float(v) for k, v in re.findall(r'data-(x0|x1|y0|ytop|ymax|buckets)='
                                                       r'"([\d.]+)"', svg)}
        for key in ("capacity", "allocated", "measured", "used"):
            d = re.search(rf'data-series="{key}"[^>]* d="([^"]*)"', svg)[1]  # type: ignore[index]
            drawn = bucket_values(d, geometry)
            want = getattr(panel, key)
            assert [v is None for v in drawn] == [v is None for v in want], (panel.title, key)
            assert all(abs(a - b) < 1e-3 * geometry["ymax"] for a, b in
                       zip(drawn, want, strict=True) if a is not None and b is not None)


def test_a_gap_breaks_the_path_and_is_banded() -> None:
    x = [float(i * 10) for i in range(5)]
    assert series_path((1.0, None, 2.0, 2.0), x, 100.0, 10.0) == (
        "M0 100V90H10V100ZM20 100V80H30V80H40V100Z")
    assert series_path((None, None, None, None), x, 100.0, 10.0) == ""
    html = page()
    first = re.search(r'<figure class="panel" id="panel-0">.*?</figure>', html, re.S)[0]  # type: ignore[index]
    assert first.count('<rect class="gap"') == 0  # pools without the gap fill it in the total
    assert html.count('<rect class="gap"') >= 4  # pool a's four hours without data


def test_unit_and_window_are_stated() -> None:
    html = page()
    assert "GPUs per 1 h bucket, 2026-11-23 00:00 .. 2026-11-24 00:00 UTC (24 h)" in html
    assert "Figures in GPU-hours over the window" in html


@pytest.mark.parametrize(("value", "top"), [(0, 1), (0.4, 0.4), (7, 8), (12, 15), (24, 25),
                                            (101, 150)])
def test_nice_max(value: float, top: float) -> None:
    assert nice_max(value) == top
