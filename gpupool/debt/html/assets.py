"""The page's one stylesheet and one script, inline, and the Content-Security-Policy that
allows exactly them (by SHA-256) and nothing else: no network, no other script, no frames.

The script only sorts tables: a click on a column header orders the rows by that column's
``data-v`` (numbers) or text; an empty cell (missing, never zero) sorts last either way.
"""

from __future__ import annotations

import base64
import hashlib

STYLE = """
:root { color-scheme: light; --ink: #1d1d1f; --mute: #666; --line: #ddd; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink);
       margin: 0 auto; max-width: 1040px; padding: 16px 20px 48px; background: #fff; }
h1 { font-size: 22px; margin: 8px 0 4px; }
h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid var(--line); }
p.meta, p.note { color: var(--mute); margin: 4px 0; }
dl.totals { display: grid; grid-template-columns: repeat(4, 1fr); gap: 8px; margin: 12px 0; }
dl.totals div { border: 1px solid var(--line); border-radius: 6px; padding: 6px 10px; }
dl.totals dt { color: var(--mute); font-size: 12px; }
dl.totals dd { margin: 0; font-size: 17px; font-weight: 600; }
figure.panel { margin: 10px 0 4px; }
figure.panel figcaption { font-size: 13px; margin-bottom: 2px; }
figure.panel svg { width: 100%; height: auto; display: block; }
svg.defs { position: absolute; }
.series { stroke-width: 0.8; }
.s-capacity { fill-opacity: 0.55; }
rect.gap { fill: #eef2f7; }
rect.swatch { stroke: #999; stroke-width: 0.5; }
ul.legend rect.gap { stroke: #aab; stroke-dasharray: 2 2; }
line.grid { stroke: #e3e3e3; stroke-width: 1; }
text.tick { font-size: 11px; fill: #555; }
text.nodata { font-size: 13px; fill: #888; }
ul.legend { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: 14px;
            font-size: 12px; color: var(--mute); }
ul.legend li { display: flex; align-items: center; gap: 5px; }
table { border-collapse: collapse; width: 100%; font-size: 12.5px; margin: 6px 0; }
th, td { padding: 3px 6px; border-bottom: 1px solid #eee; text-align: left;
         vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.missing { color: #999; font-style: italic; }
th button { font: inherit; font-weight: 600; background: none; border: 0; padding: 0;
            cursor: pointer; color: inherit; text-align: inherit; }
th[aria-sort="ascending"] button::after { content: " \\25B2"; }
th[aria-sort="descending"] button::after { content: " \\25BC"; }
.scroll { overflow-x: auto; }
footer { margin-top: 32px; color: var(--mute); font-size: 12px; }
"""

SCRIPT = """
"use strict";
(function () {
  function key(cell) {
    if (!cell || cell.dataset.v === "") { return null; }
    if (cell.dataset.v !== undefined) { return Number(cell.dataset.v); }
    return cell.textContent.trim().toLowerCase();
  }
  function sortBy(table, column, th) {
    var body = table.tBodies[0];
    var down = th.getAttribute("aria-sort") === "ascending";
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a.cells[column]), y = key(b.cells[column]);
      if (x === null || y === null) { return (x === null) - (y === null); }
      var c = x < y ? -1 : (x > y ? 1 : 0);
      return down ? -c : c;
    });
    rows.forEach(function (row) { body.appendChild(row); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) {
      h.removeAttribute("aria-sort");
    });
    th.setAttribute("aria-sort", down ? "descending" : "ascending");
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (t) {
    Array.prototype.forEach.call(t.tHead.rows[0].cells, function (th, column) {
      var button = th.querySelector("button");
      if (button) {
        button.addEventListener("click", function () { sortBy(t, column, th); });
      }
    });
  });
  document.documentElement.dataset.ready = "1";
})();
"""


def sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


CSP = ("default-src 'none'; "
       f"style-src '{sha256(STYLE)}'; script-src '{sha256(SCRIPT)}'; "
       "img-src 'none'; font-src 'none'; connect-src 'none'; object-src 'none'; "
       "base-uri 'none'; form-action 'none'")
