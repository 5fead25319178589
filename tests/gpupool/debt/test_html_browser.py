"""``--format html`` in a real headless Chromium (Debian's ``chromium``, over the DevTools
protocol: tests/gpupool/debt/browser.py): the page renders with no console error and no
request beyond itself, the series drawn (read from the DOM) are the report's figures, the
tables sort, and a screenshot shows the chart."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser import SKIP, Browser, chromium, executable
from html_fleet import bucket_values, fleet_report

from gpupool.debt.chart import chart_data
from gpupool.debt.html import render_html
from gpupool.debt.report import Report

pytestmark = pytest.mark.skipif(executable() is None, reason=SKIP)

PANELS = """Array.from(document.querySelectorAll('section.chart')).map(s => ({
  by: s.dataset.by,
  panels: Array.from(s.querySelectorAll('figure.panel')).map(f => {
    const svg = f.querySelector('svg');
    const g = {};
    for (const k of ['x0', 'x1', 'y0', 'ytop', 'ymax', 'buckets']) g[k] = Number(svg.dataset[k]);
    const series = {};
    for (const p of svg.querySelectorAll('path[data-series]'))
      series[p.dataset.series] = p.getAttribute('d');
    const box = svg.getBoundingClientRect();
    return {title: f.querySelector('figcaption').textContent, geometry: g, series,
            width: box.width, height: box.height};
  })}))"""


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Browser, Report]]:
    report = fleet_report()
    path = tmp_path_factory.mktemp("html") / "debt.html"
    path.write_text(render_html(report), encoding="utf-8")
    with chromium() as browser:
        browser.open(path.as_uri())
        yield browser, report


def test_renders_without_errors_or_requests(loaded: tuple[Browser, Report]) -> None:
    browser, _ = loaded
    assert browser.evaluate("document.documentElement.dataset.ready") == "1"  # the script ran
    assert browser.evaluate("getComputedStyle(document.body).maxWidth") == "1040px"  # the style
    assert browser.errors() == []
    urls = browser.evaluate("performance.getEntriesByType('resource').map(e => e.name)")
    assert urls == []  # nothing fetched beyond the page itself


def test_drawn_series_are_the_reports_figures(loaded: tuple[Browser, Report]) -> None:
    browser, report = loaded
    charts = browser.evaluate(PANELS)
    assert [c["by"] for c in charts] == ["pool", "team"]
    d = report.to_dict()
    rows: dict[str, list[dict[str, Any]]] = {
        "pool": [d["totals"], *sorted(d["pools"], key=lambda r: (-(r["debt_usd"] or 0),
                                                                 -(r["debt_gpu_hours"] or 0),
                                                                 r["pool"]))],
        "team": [d["totals"], *d["teams"]]}
    for chart in charts:
        panels = chart_data(report, chart["by"])
        assert [p["title"] for p in chart["panels"]] == [p.title for p in panels]
        for drawn, panel, row in zip(chart["panels"], panels, rows[chart["by"]], strict=True):
            assert drawn["width"] > 500 and drawn["height"] > 80  # laid out, visible
            h = report.window.bucket_hours
            values = {k: bucket_values(v, drawn["geometry"]) for k, v in drawn["series"].items()}
            for key in ("capacity", "allocated", "measured", "used"):
                want = getattr(panel, key)
                got = values[key]
                assert [v is None for v in got] == [v is None for v in want], (panel.title, key)
            assert total(values, "capacity", h) == rounded(row["capacity_gpu_hours"]), panel.title
            assert total(values, "allocated", h) == rounded(row["allocated_gpu_hours"]), panel.title
            if row["used_gpu_hours"] is not None:
                assert total(values, "used", h) == rounded(row["used_gpu_hours"]), panel.title
                debt = (total(values, "measured", h) or 0) - (total(values, "used", h) or 0)
                assert round(debt, 1) == rounded(row["debt_gpu_hours"]), panel.title


def total(values: dict[str, list[float | None]], key: str, hours: float) -> float | None:
    known = [v for v in values[key] if v is not None]
    return round(sum(known) * hours, 1) if known else None


def rounded(v: float | None) -> float | None:
    return None if v is None else round(v, 1)


def column(browser: Browser, table: str, index: int) -> list[str]:
    return browser.evaluate(
        f"Array.from(document.querySelectorAll('#{table} tbody tr'))"
        f".map(r => r.cells[{index}].dataset.v ?? r.cells[{index}].textContent)")


def test_tables_sort_with_missing_figures_last(loaded: tuple[Browser, Report]) -> None:
    browser, _ = loaded
    headers = browser.evaluate("Array.from(document.querySelectorAll('#pools thead th'))"
                               ".map(h => h.textContent)")
    i = headers.index("debt GPU-h")
    click = f"document.querySelectorAll('#pools thead th button')[{i}].click()"
    browser.evaluate(click)
    up = column(browser, "pools", i)
    known = [float(v) for v in up if v != ""]
    assert known == sorted(known) and up[len(known):] == [""] * (len(up) - len(known))
    assert len(known) < len(up)  # pool c is not measured
    browser.evaluate(click)
    down = column(browser, "pools", i)
    assert [float(v) for v in down if v != ""] == sorted(known, reverse=True)
    assert down[-1] == ""
    assert browser.evaluate(f"document.querySelectorAll('#pools thead th')[{i}]"
                            ".getAttribute('aria-sort')") == "descending"
    j = headers.index("pool")
    browser.evaluate(f"document.querySelectorAll('#pools thead th button')[{j}].click()")
    assert column(browser, "pools", j) == sorted(column(browser, "pools", j))
    assert browser.errors() == []


def test_screenshot_shows_the_chart(loaded: tuple[Browser, Report], tmp_path: Path) -> None:
    image_module = pytest.importorskip("PIL.Image", reason="Pillow (matplotlib's dependency)")
    browser, _ = loaded
    png = browser.screenshot()
    assert png.startswith(b"\x89PNG")
    image = image_module.open(io.BytesIO(png)).convert("RGB")
    colours = image.getcolors(1 << 24)  # [(count, (r, g, b))]
    size = image.width * image.height

    def near(rgb: tuple[int, int, int]) -> int:
        return sum(n for n, c in colours if all(abs(a - b) < 24 for a, b in zip(c, rgb,
                                                                             strict=True)))

    background = sum(n for n, c in colours if c == (255, 255, 255))
    green, yellow = near((0x3A, 0x9A, 0x48)), near((0xF2, 0xC1, 0x2E))
    assert size - background > 0.1 * size  # not blank
    assert green > 5000 and yellow > 5000  # use and allocation are drawn


def test_the_error_check_sees_a_blocked_script(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above is live: a script the policy does not name is blocked and reported."""
    import gpupool.debt.html.page as page

    monkeypatch.setattr(page, "SCRIPT", page.SCRIPT + "\n")  # its hash no longer matches
    path = tmp_path / "blocked.html"
    path.write_text(render_html(fleet_report()), encoding="utf-8")
    with chromium() as browser:
        browser.open(path.as_uri())
        assert browser.evaluate("document.documentElement.dataset.ready") is None
        (error,) = browser.errors()
        assert "Content Security Policy" in error
