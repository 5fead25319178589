# ruff: noqa: RUF001, RUF002, RUF003  (× and − are the signs users read)
"""The report as text: rich tables that fit the width, with names printed as text.

Width: the terminal's, else ``COLUMNS``, else 100. A table never cuts a figure: figure columns
keep their full width and names wrap; when the figures alone do not fit, the least needed
columns are left out (idle first, then capacity, debt $/month, type, team) and a note says which
and where to find them (CSV and JSON carry every column). Every name (pools, teams, findings:
AWS and Kubernetes names are user data) is printed as text, never as rich markup, and control
characters are shown escaped, so ``[/]`` or an escape sequence in a name prints as itself.
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from gpupool.debt.discover import ROLE_LABELS
from gpupool.terminal import safe

By = Literal["pool", "team"]
NOT_MEASURED = "not measured"
DEFAULT_WIDTH = 100
MIN_WIDTH = 40
NAME_MIN = 12  # a name column wraps down to this


def plain(value: object) -> str:
    """A name as it may be printed: control characters and BIDI overrides shown as escapes
    (``\\xNN``, ``\\u202e``), through the kit's one helper for it."""
    return safe(value)


def width_for(given: int | None = None) -> int:
    """The width to render at: given (a terminal's), else ``COLUMNS``, else 100."""
    if given:
        return max(given, MIN_WIDTH)
    env = os.environ.get("COLUMNS", "").strip()
    if env.isdigit() and int(env) > 0:
        return max(int(env), MIN_WIDTH)
    return DEFAULT_WIDTH


def gh(value: float | None, missing: str = NOT_MEASURED) -> str:
    return missing if value is None else f"{value:,.1f}"


def pct(value: float | None, missing: str = NOT_MEASURED) -> str:
    return missing if value is None else f"{value:.1%}"


def usd(value: float | None) -> str:
    return "—" if value is None else f"${value:,.2f}"


@dataclass(frozen=True)
class Col:
    header: str
    right: bool = True  # figures are right-aligned
    wraps: bool = False  # names may wrap; figures never do
    drop: int = 0  # 0: always shown; otherwise the order in which columns are left out


def fit(cols: Sequence[Col], rows: Sequence[Sequence[str]], width: int
        ) -> tuple[list[int], list[int]]:
    """Indexes of the columns to show, and of those left out so that every figure fits.

    A table of n columns with its outer padding off takes Σ widths + 2n − 2 (padding) + n + 1
    (rules) characters; names count at ``NAME_MIN`` (they wrap), figures at their widest cell.
    """
    def need(i: int) -> int:
        widest = max([len(r[i]) for r in rows] + [max(len(w) for w in cols[i].header.split())])
        return min(widest, NAME_MIN) if cols[i].wraps else widest

    shown = list(range(len(cols)))
    dropped: list[int] = []
    for i in sorted((i for i, c in enumerate(cols) if c.drop), key=lambda i: cols[i].drop):
        total = sum(need(j) for j in shown) + 3 * len(shown) - 1
        if total <= width:
            break
        shown.remove(i)
        dropped.append(i)
    return shown, dropped


def table(console: Any, cols: Sequence[Col], rows: Sequence[Sequence[str]],
          styles: Sequence[str], width: int) -> None:
    """Print the fitted table, then the note naming the columns left out."""
    from rich.table import Table
    from rich.text import Text

    shown, dropped = fit(cols, rows, width)
    t = Table(pad_edge=False)
    for i in shown:
        c = cols[i]
        widest = max([len(r[i]) for r in rows] + [1])
        t.add_column(c.header, justify="right" if c.right else "left",
                     no_wrap=not c.wraps, overflow="fold",
                     min_width=None if c.wraps else widest)
    for row, style in zip(rows, styles, strict=True):
        t.add_row(*(Text(row[i]) for i in shown), style=style)
    console.print(t)
    if dropped:
        names = ", ".join(cols[i].header for i in dropped)
        console.print(Text(f"({names} left out to fit {width} columns; --format csv or json "
                           "has every column)"))


def pool_rows(d: dict[str, Any], by: By) -> tuple[list[Col], list[list[str]], list[str]]:
    """The pools (or teams) table: its columns, cells and row styles (red below threshold)."""
    first = "pool" if by == "pool" else "team"
    cols = [Col(first, right=False, wraps=True)]
    many = by == "pool" and len({(r.get("account"), r.get("region")) for r in d["pools"]
                                 if r.get("platform") == "aws"}) > 1
    if many:
        cols += [Col("account/region", right=False, wraps=True, drop=6)]
    if by == "pool":
        cols += [Col("team", right=False, wraps=True, drop=5),
                 Col("type", right=False, wraps=True, drop=4)]
    else:
        cols += [Col("pools", right=False, wraps=True, drop=4)]
    cols += [Col("capacity", drop=2), Col("allocated"), Col("used"), Col("debt"),
             Col("idle", drop=1), Col("utilisation"), Col("debt $"),
             Col("debt $/month", drop=3)]
    rows: list[list[str]] = []
    styles: list[str] = []
    for r in d["pools"] if by == "pool" else d["teams"]:
        if by == "pool":
            lead = [plain(r["pool"]) + ROLE_LABELS.get(r["role"], "")]
            if many:
                lead.append(plain(f"{r['account'] or '-'}/{r['region'] or '-'}"
                                  if r.get("platform") == "aws" else r.get("source") or "-"))
            lead += [plain(r["team"] or "(untagged)"), plain(type_label(r))]
        else:
            lead = [plain(r["team"]), f"{r['pools']}" + (
                f" ({r['not_measured_pools']} not measured)" if r["not_measured_pools"]
                else "")]
        missing = "no metrics" if r.get("status") == "no group metrics" else NOT_MEASURED
        util = r["utilisation"]
        rows.append([*lead, gh(r["capacity_gpu_hours"], missing),
                     gh(r["allocated_gpu_hours"], missing), gh(r["used_gpu_hours"], missing),
                     gh(r["debt_gpu_hours"], missing), gh(r["idle_gpu_hours"], missing),
                     pct(util, missing), usd(r["debt_usd"]), usd(r["debt_usd_per_month"])])
        styles.append("red" if util is not None and util < d["threshold"] else "")
    return cols, rows, styles


def type_label(r: dict[str, Any]) -> str:
    """``g4dn.xlarge 1×T4``; beyond AWS the platform says where: ``g6.xlarge 1×L4 (k8s)``,
    ``on-prem 2×L40S``."""
    gpus = f"{r['gpus_per_instance']:g}×{r['gpu_model']}"
    if r.get("platform", "aws") == "aws":
        return f"{r['instance_type']} {gpus}"
    if r["platform"] == "kubernetes":
        return f"{r['instance_type'] or 'nodes'} {gpus} (k8s)"
    return f"{r['platform']} {gpus}"


def namespace_rows(d: dict[str, Any]) -> tuple[list[Col], list[list[str]], list[str]]:
    """The Kubernetes namespaces table (and each pool's unattributed use)."""
    cols = [Col("pool/namespace", right=False, wraps=True), Col("team", right=False, wraps=True,
                                                                 drop=2),
            Col("pods", drop=1), Col("allocated"), Col("used"), Col("debt"), Col("utilisation"),
            Col("debt $", drop=3)]
    rows: list[list[str]] = []
    styles: list[str] = []
    for r in d["namespaces"]:
        missing = NOT_MEASURED
        util = r["utilisation"]
        rows.append([plain(f"{r['pool']}/{r['namespace']}"), plain(r["team"]), f"{r['pods']}",
                     gh(r["allocated_gpu_hours"], missing), gh(r["used_gpu_hours"], missing),
                     gh(r["debt_gpu_hours"], missing), pct(util, missing), usd(r["debt_usd"])])
        styles.append("red" if util is not None and util < d["threshold"] else "")
    return cols, rows, styles


def new_console(width: int, color: bool) -> tuple[Any, io.StringIO]:
    from rich.console import Console

    buf = io.StringIO()
    console = Console(file=buf, width=width, color_system="standard" if color else None,
                      force_terminal=color, highlight=False, markup=False, emoji=False)
    return console, buf
