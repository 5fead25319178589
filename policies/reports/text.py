"""``--format text``: a rich table grouped by resource, a verdict line, the GPU cost change.

Colour only when the caller says the output is a terminal (``color=True``; the check command asks
rich whether stdout is one, so NO_COLOR / FORCE_COLOR / TERM=dumb are honoured). Otherwise the
output is plain text with ASCII framing at a fixed width, so CI logs and golden files do not change
with the runner's terminal.
"""

from __future__ import annotations

import io

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from gpupool.terminal import safe
from policies.reports._common import (
    HOURS_PER_MONTH,
    by_resource,
    cost_sentence,
    money_or_dash,
    short_address,
    signed_per_hour,
    signed_per_month,
    status,
    verdict_line,
)
from policies.result import Result, Violation

PLAIN_WIDTH = 120
# A rich table costs about 1.3 ms a row: past this many rows findings are listed line by line
# (20,000 findings: 26 s as a table, well under a second as a listing), and the cost table shows
# the largest changes only.
TABLE_MAX_ROWS = 500
COST_MAX_ROWS = 50

_STATUS_STYLE = {
    "blocking": "bold red",
    "advisory": "yellow",  # the enforcement word itself is styled only when it blocks
    "cannot verify": "magenta",
    "waived": "dim",
}


def render(result: Result, *, color: bool = False, width: int | None = None) -> str:
    buf = io.StringIO()
    console = Console(
        file=buf,
        force_terminal=color,
        no_color=not color,
        color_system="standard" if color else None,
        width=width or PLAIN_WIDTH,
        highlight=False,
        emoji=False,
        legacy_windows=False,
        soft_wrap=False,
    )
    frame = box.ROUNDED if color else box.ASCII2
    if len(result.violations) > TABLE_MAX_ROWS:
        _print_listing(console, _violation_listing(result), color)
    elif result.violations:
        console.print(_violations_table(result, frame))
    if len(result.errors) > TABLE_MAX_ROWS:
        _print_listing(console, _error_listing(result), color)
    elif result.errors:
        console.print(_errors_table(result, frame))
    if result.cost:
        console.print(_cost_table(result, frame))
    sentence = cost_sentence(result.cost)
    if sentence is not None:
        console.print(Text(f"GPU cost change: {sentence}"))
    style = "bold red" if result.verdict == "fail" else "bold green"
    console.print(Text(verdict_line(result), style=style), soft_wrap=True)
    out = buf.getvalue()
    if not color:  # rich pads titles to the table width; plain text has no trailing blanks
        out = "\n".join(line.rstrip() for line in out.split("\n"))
    return out


def _violations_table(result: Result, frame: box.Box) -> Table:
    table = Table(title="Policy findings", box=frame, show_lines=False, title_justify="left")
    table.add_column("Resource", overflow="fold", ratio=2, min_width=16)
    table.add_column("Policy", no_wrap=True)
    table.add_column("Enforcement", no_wrap=True)
    table.add_column("Message", overflow="fold", ratio=3, min_width=24)
    groups = by_resource(result.violations)
    for gi, (resource, items) in enumerate(groups):
        for i, v in enumerate(items):
            table.add_row(
                Text(_names(resource) if i == 0 else ""),
                Text(safe(v.policy)),
                _enforcement(v),
                Text(safe(_message(v), multiline=True)),
                end_section=i == len(items) - 1 and gi < len(groups) - 1,
            )
    return table


def _names(key: str, sep: str = "\n") -> str:
    """The resources of a :func:`by_resource` key (addresses, one a line), as people read them."""
    return sep.join(safe(short_address(a)) for a in key.split("\n"))


def _enforcement(v: Violation) -> Text:
    """``mandatory``, plus a second line when the finding is not a plain one."""
    state = status(v)
    cell = Text(safe(v.enforcement), style=_STATUS_STYLE[state] if state == "blocking" else "")
    if state in ("cannot verify", "waived"):
        cell.append(f"\n{state}", style=_STATUS_STYLE[state])
    return cell


def _message(v: Violation) -> str:
    return f"{v.message} [waived by {v.waived_by}]" if v.waived_by is not None else v.message


def _errors_table(result: Result, frame: box.Box) -> Table:
    table = Table(title="Rule errors (the check fails)", box=frame, title_justify="left")
    table.add_column("Policy", overflow="fold")
    table.add_column("Resource", overflow="fold")
    table.add_column("Error", overflow="fold", ratio=3)
    for e in result.errors:
        table.add_row(Text(safe(e.policy)), Text(safe(e.resource or "—")),
                      Text(safe(e.message, multiline=True), style="red"))
    return table


def _cost_table(result: Result, frame: box.Box) -> Table:
    lines = list(result.cost)
    title = "GPU cost change (on-demand)"
    if len(lines) > COST_MAX_ROWS:
        lines.sort(key=lambda c: -abs(c.delta_per_hour or 0.0))
        lines = lines[:COST_MAX_ROWS]
        title += (f": the {COST_MAX_ROWS} largest of {len(result.cost)} changes "
                  "(--format json lists all)")
    table = Table(title=title, box=frame, title_justify="left")
    table.add_column("Resource", overflow="fold", ratio=3)
    table.add_column("Before $/h", justify="right", no_wrap=True)
    table.add_column("After $/h", justify="right", no_wrap=True)
    table.add_column("Change $/h", justify="right", no_wrap=True)
    table.add_column(f"Change $/month ({HOURS_PER_MONTH} h)", justify="right", no_wrap=True)
    table.add_column("Note", overflow="fold", ratio=2)
    for c in lines:
        d = c.delta_per_hour
        table.add_row(
            Text(safe(short_address(c.resource))),
            money_or_dash(c.before_per_hour),
            money_or_dash(c.after_per_hour),
            "—" if d is None else signed_per_hour(d),
            "—" if d is None else signed_per_month(d),
            Text(safe(c.note, multiline=True)),
        )
    return table


# A listing is (text, style) pieces; styles apply only in colour, plain output is joined directly.
Listing = list[tuple[str, str]]


def _violation_listing(result: Result) -> Listing:
    out: Listing = [(f"Policy findings ({len(result.violations)}, listed by resource)\n", "")]
    for resource, items in by_resource(result.violations):
        out.append((f"{_names(resource, ' + ')}\n", "bold"))
        for v in items:
            state = status(v)
            tag = str(v.enforcement)
            if state == "cannot verify":
                tag += ", cannot verify"
            elif state == "waived":
                tag += f", waived by {safe(v.waived_by)}"
            out.append(("  ", ""))
            out.append((f"[{tag}]", _STATUS_STYLE[state]))
            message = safe(v.message, multiline=True).replace("\n", "\n      ")
            out.append((f" {safe(v.policy)}: {message}\n", ""))
    return out


def _error_listing(result: Result) -> Listing:
    out: Listing = [(f"Rule errors ({len(result.errors)}; the check fails)\n", "")]
    for e in result.errors:
        where = f" on {safe(e.resource)}" if e.resource else ""
        out.append((f"  {safe(e.policy)}{where}: ", ""))
        out.append((f"{safe(e.message, multiline=True)}\n", "red"))
    return out


def _print_listing(console: Console, listing: Listing, color: bool) -> None:
    if not color:
        console.file.write("".join(text for text, _ in listing))
        return
    console.print(Text.assemble(*listing), soft_wrap=True, end="")
