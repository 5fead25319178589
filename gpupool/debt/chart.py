"""``--chart FILE.png|FILE.svg``: capacity, allocation and use over time (matplotlib).

The picture of the seed article: capacity grey, allocation yellow, use green, drawn over one
another (use ⊂ allocation ⊂ capacity), so the yellow band above the green is the debt and the
grey above the yellow is idle capacity. The top panel is every pool together; one panel
follows per pool or team, the largest debt first (at most ``MAX_PANELS``; the rest share one
panel). The title carries the totals and the debt.

:func:`chart_data` is what is drawn, and the tests check it against the report; matplotlib is
imported only when a chart is written (it costs ~0.3 s).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from gpupool.debt.discover import ROLE_LABELS
from gpupool.debt.model import Charge, PoolFigures, Timeline, combine
from gpupool.debt.report import Group, Report
from gpupool.errors import InputError

MAX_PANELS = 8
COLOURS = {"capacity": "#b0b0b0", "allocated": "#f2c12e", "used": "#3a9a48"}
FORMATS = {".png": "png", ".svg": "svg"}


@dataclass(frozen=True)
class Panel:
    title: str
    starts: tuple[datetime, ...]  # bucket starts; the last bucket ends at ``end``
    end: datetime
    capacity: tuple[float | None, ...]
    allocated: tuple[float | None, ...]
    used: tuple[float | None, ...]
    measured: tuple[float | None, ...]  # allocation whose use is known

    def ends(self) -> tuple[datetime, ...]:
        return (*self.starts[1:], self.end)


def _panel(title: str, report: Report, timeline: Timeline) -> Panel:
    w = report.window
    starts = tuple(w.bucket_start(i) for i in range(w.buckets))
    return Panel(title, starts, w.end, timeline.capacity, timeline.allocated, timeline.used,
                 timeline.measured)


def _label(name: str, figures: Sequence[PoolFigures | Charge]) -> str:
    s = combine(figures)
    if len(figures) == 1 and figures[0].status in ("no group metrics", "not measured"):
        status = figures[0].status
        return f"{name}: {status}" + ("" if status == "not measured" else
                                      " (no capacity or allocation data)")
    util = "use not measured" if s.utilisation is None else f"{s.utilisation:.0%} used"
    debt = "" if s.debt_gpu_hours is None else f", debt {s.debt_gpu_hours:,.0f} GPU-h"
    usd = "" if s.debt_usd is None else f" (${s.debt_usd:,.0f})"
    unmeasured = "" if not s.unmeasured_gpu_hours else (
        f"; {s.unmeasured_gpu_hours:,.0f} GPU-h allocated without measurement")
    return f"{name}: {util}{debt}{usd}{unmeasured}"


def chart_data(report: Report, by: Literal["pool", "team"] = "pool") -> list[Panel]:
    """The panels drawn: the total first, then pools or teams by debt, the rest combined."""
    panels = [_panel(_label("all GPU pools", report.pools), report, report.total.timeline)]
    # pools are named with their role and, beyond AWS, their platform
    groups: list[Group]
    if by == "team":
        groups = list(report.teams)
    else:
        groups = [Group(f.name + ROLE_LABELS.get(f.pool.role, "") + (
            "" if f.platform == "aws" else f" ({f.platform})"), [f], f.sums, f.timeline)
                  for f in report.pools]
        groups.sort(key=lambda g: (-(g.sums.debt_usd or 0.0), -(g.sums.debt_gpu_hours or 0.0),
                                   g.name))
    shown, rest = groups[:MAX_PANELS], groups[MAX_PANELS:]
    if len(rest) == 1:
        shown, rest = groups, []
    for g in shown:
        panels.append(_panel(_label(g.name, g.figures), report, g.timeline))
    if rest:
        figures: list[PoolFigures | Charge] = [f for g in rest for f in g.figures]
        timeline = Timeline.add([g.timeline for g in rest], report.window.buckets)
        panels.append(_panel(_label(f"{len(rest)} other {by}s", figures), report, timeline))
    return panels


def _title(report: Report) -> str:
    d = report.to_dict()
    t, w = d["totals"], d["window"]

    def gh(v: float | None) -> str:
        return "not measured" if v is None else f"{v:,.0f}"

    util = "not measured" if t["utilisation"] is None else f"{t['utilisation']:.1%}"
    usd = "" if t["debt_usd"] is None else f" = ${t['debt_usd']:,.0f}"
    return (f"GPU capacity, allocation and use, {report.region}, {w['start'][:16]} .. "
            f"{w['end'][:16]} UTC\ncapacity {gh(t['capacity_gpu_hours'])} GPU-h · allocated "
            f"{gh(t['allocated_gpu_hours'])} · used {gh(t['used_gpu_hours'])} ({util}) · "
            f"debt {gh(t['debt_gpu_hours'])} GPU-h{usd}")


def steps(panel: Panel, key: str) -> tuple[list[datetime], list[float]]:
    """Two points per bucket (its start and end at its value), NaN between unknown buckets:
    each bucket is drawn as a flat step over its own period and a gap breaks nothing else."""
    xs: list[datetime] = []
    ys: list[float] = []
    for start, end, v in zip(panel.starts, panel.ends(), getattr(panel, key), strict=True):
        y = math.nan if v is None else float(v)
        xs += [start, end]
        ys += [y, y]
    return xs, ys


def bucket_values(ys: list[float]) -> list[float | None]:
    """Inverse of :func:`steps` (for tests that read the drawn lines back)."""
    return [None if math.isnan(y) else y for y in ys[::2]]


def draw(report: Report, by: Literal["pool", "team"] = "pool") -> Any:
    """The matplotlib Figure (not saved); its lines (gid = series) carry :func:`chart_data`."""
    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter
    from matplotlib.figure import Figure

    panels = chart_data(report, by)
    fig = Figure(figsize=(11, 1.3 + 2.0 * len(panels)), layout="constrained")
    axes = fig.subplots(len(panels), 1, sharex=True, squeeze=False)[:, 0]
    for ax, panel in zip(axes, panels, strict=True):
        x, cap = steps(panel, "capacity")
        _, alloc = steps(panel, "allocated")
        _, measured = steps(panel, "measured")
        _, used = steps(panel, "used")
        ax.fill_between(x, cap, color=COLOURS["capacity"], alpha=0.55, linewidth=0,
                        label="capacity")
        ax.fill_between(x, measured, alloc, facecolor="white", edgecolor=COLOURS["allocated"],
                        hatch="////", linewidth=0, label="allocated, use not measured")
        ax.fill_between(x, measured, color=COLOURS["allocated"], alpha=0.9, linewidth=0,
                        label="allocated (debt above use)")
        ax.fill_between(x, used, color=COLOURS["used"], alpha=0.95, linewidth=0, label="used")
        for key, ys in (("capacity", cap), ("allocated", alloc), ("measured", measured),
                        ("used", used)):
            ax.plot(x, ys, color=COLOURS.get(key, COLOURS["allocated"]), linewidth=0.9,
                    gid=key)
        if all(v is None for v in panel.capacity + panel.allocated):
            ax.text(0.5, 0.5, "no data in the window", transform=ax.transAxes, ha="center",
                    va="center", fontsize=9, color="#777777")
            ax.set_ylim(0, 1)
        ax.set_title(panel.title, loc="left", fontsize=9)
        ax.set_ylabel("GPUs", fontsize=8)
        ax.set_ylim(bottom=0)
        ax.margins(x=0)
        ax.tick_params(labelsize=8)
        ax.grid(axis="y", alpha=0.3)
    locator = AutoDateLocator()
    axes[-1].xaxis.set_major_locator(locator)
    axes[-1].xaxis.set_major_formatter(ConciseDateFormatter(locator))
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=4,
               fontsize=8, frameon=False)
    fig.suptitle(_title(report), fontsize=10)
    return fig


def write_chart(report: Report, path: str, by: Literal["pool", "team"] = "pool") -> None:
    fmt = FORMATS.get(Path(path).suffix.lower())
    if fmt is None:
        raise InputError(f"--chart {path}: expected a file name ending in .png or .svg")
    try:
        fig = draw(report, by)
    except ImportError as e:
        raise InputError(f"--chart {path}: drawing needs matplotlib ({e.name or e} is not "
                         "installed); the report itself was written") from None
    except (ValueError, RuntimeError, OverflowError, MemoryError) as e:
        raise InputError(f"--chart {path}: cannot draw the chart ({type(e).__name__}: {e}); "
                         "the report itself was written") from None
    try:
        fig.savefig(path, format=fmt, dpi=110)
    except OSError as e:
        raise InputError(f"--chart {path}: cannot write there ({e.strerror or e}); the report "
                         "itself was written") from None
