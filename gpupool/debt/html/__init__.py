"""``gpupool debt --format html``: the report as one self-contained page (see
:mod:`gpupool.debt.html.page`)."""

from gpupool.debt.html.page import render_html

__all__ = ["render_html"]
