"""``--chart``: the drawn data equals the report's figures, and the files are real images."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import synthetic as syn

from gpupool.debt.chart import MAX_PANELS, bucket_values, chart_data, draw, write_chart
from gpupool.errors import InputError


def fleet_report():  # type: ignore[no-untyped-def]
    busy = [20, 40, 60, 80, 90, 70] * 4
    return syn.report([
        (syn.pool("a", team="research", max_size=6), [4] * 12 + [2] * 12, [10] * 24),
        (syn.pool("b", "g4dn.12xlarge", team="ml", max_size=3), [1, 2, 3] * 8, busy),
        (syn.pool("c", "g5.xlarge", team=None, max_size=2), [1] * 24, [None] * 24),
        (syn.pool("d", team="research", max_size=4), [0] * 6 + [2] * 18,
         [None] * 6 + [50] * 9 + [None] * 9),
    ])


def drawn(fig, panel: int, gid: str) -> list[float | None]:  # type: ignore[no-untyped-def]
    ax = fig.axes[panel]
    (line,) = [ln for ln in ax.get_lines() if ln.get_gid() == gid]
    return bucket_values(list(line.get_ydata()))


def gpu_hours(values: list[float | None], hours: float = 1.0) -> float | None:
    known = [v for v in values if v is not None]
    return round(sum(known) * hours, 3) if known else None


@pytest.mark.parametrize("by", ["pool", "team"])
def test_drawn_lines_sum_to_the_reports_figures(by: str) -> None:
    report = fleet_report()
    d = report.to_dict()
    fig = draw(report, by)  # type: ignore[arg-type]
    rows = [("all", d["totals"])] + (
        [(r["pool"], r) for r in sorted(d["pools"], key=lambda r: (-(r["debt_usd"] or 0),
                                                                   -(r["debt_gpu_hours"] or 0),
                                                                   r["pool"]))]
        if by == "pool" else [(r["team"], r) for r in d["teams"]])
    assert len(fig.axes) == len(rows)
    for i, (name, row) in enumerate(rows):
        assert i == 0 or fig.axes[i].get_title(loc="left").startswith(f"{name}:")
        assert gpu_hours(drawn(fig, i, "capacity")) == row["capacity_gpu_hours"], name
        assert gpu_hours(drawn(fig, i, "allocated")) == row["allocated_gpu_hours"], name
        used = gpu_hours(drawn(fig, i, "used"))
        measured = gpu_hours(drawn(fig, i, "measured"))
        if row["used_gpu_hours"] is None:  # not measured: drawn as allocation without use
            assert measured == 0 or measured is None
        else:
            assert used == row["used_gpu_hours"], name
            assert round((measured or 0) - (used or 0), 3) == row["debt_gpu_hours"], name


def test_title_carries_the_totals_and_the_debt() -> None:
    report = fleet_report()
    t = report.to_dict()["totals"]
    title = draw(report)._suptitle.get_text()
    assert f"allocated {t['allocated_gpu_hours']:,.0f}" in title
    assert f"debt {t['debt_gpu_hours']:,.0f} GPU-h = ${t['debt_usd']:,.0f}" in title


def test_many_pools_share_a_last_panel() -> None:
    pools = [(syn.pool(f"p{i:02d}"), [1] * 24, [i] * 24) for i in range(MAX_PANELS + 3)]
    report = syn.report(pools)
    panels = chart_data(report)
    assert len(panels) == 1 + MAX_PANELS + 1
    assert panels[-1].title.startswith("3 other pools")
    assert sum(v or 0 for v in panels[-1].allocated) == 3 * 24
    assert sum(v or 0 for v in panels[0].allocated) == len(pools) * 24


def test_unknown_buckets_are_gaps_not_zero() -> None:
    report = fleet_report()
    c = next(p for p in chart_data(report) if p.title.startswith("c:"))
    assert all(u is None for u in c.used)
    fig = draw(report)
    index = [ax.get_title(loc="left") for ax in fig.axes].index(c.title)
    ys = next(ln for ln in fig.axes[index].get_lines() if ln.get_gid() == "used").get_ydata()
    assert all(math.isnan(y) for y in ys)


@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_files_are_written(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"debt{suffix}"
    write_chart(fleet_report(), str(path))
    data = path.read_bytes()
    assert len(data) > 10_000
    assert data.startswith(b"\x89PNG") if suffix == ".png" else b"<svg" in data[:500]


def test_other_suffixes_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"expected a file name ending in \.png or \.svg"):
        write_chart(fleet_report(), str(tmp_path / "debt.jpg"))


def test_pool_panels_say_which_are_proxies_or_kubernetes_nodes() -> None:
    from dataclasses import replace

    from gpupool.debt.discover import KUBERNETES_ROLE, PROXY_ROLE

    report = syn.report([
        (replace(syn.pool("proxies", max_size=2), role=PROXY_ROLE), [2] * 24, [10] * 24),
        (replace(syn.pool("nodes", max_size=2), role=KUBERNETES_ROLE), [1] * 24, [None] * 24),
    ])
    titles = [p.title for p in chart_data(report, "pool")]
    assert titles[1].startswith("proxies (remote-GPU proxies): 10% used")
    assert titles[2] == "nodes (Kubernetes nodes): not measured"
