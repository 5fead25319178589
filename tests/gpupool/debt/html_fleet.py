"""The fleet the HTML page tests draw: measured, partly measured, unmeasured and untagged
pools, a gap in the group metrics and a name that is HTML."""

from __future__ import annotations

from dataclasses import replace

import synthetic as syn

from gpupool.debt.report import Report

HOSTILE = '<img src=x onerror="alert(1)">&</script>'


def fleet_report() -> Report:
    busy = [20, 40, 60, 80, 90, 70] * 4
    gap = [6.0] * 8 + [None] * 4 + [6.0] * 12  # four hours without group metrics
    return syn.report([
        (syn.pool("a", team="research", max_size=6), [4] * 8 + [None] * 4 + [2] * 12,
         [10] * 24),
        (syn.pool("b", "g4dn.12xlarge", team="ml", max_size=3), [1, 2, 3] * 8, busy),
        (syn.pool("c", "g5.xlarge", team=None, max_size=2), [1] * 24, [None] * 24),
        (syn.pool("d", team="research", max_size=4), [0] * 6 + [2] * 18,
         [None] * 6 + [50] * 9 + [None] * 9),
        (replace(syn.pool("e", team=HOSTILE, max_size=2)), [2] * 24, [35] * 24),
    ], max_series=gap)


def bucket_values(d: str, geometry: dict[str, float]) -> list[float | None]:
    """What a drawn series path says per bucket, in GPUs (None where nothing is drawn):
    the inverse of gpupool.debt.html.svg.series_path, from the geometry on its ``<svg>``."""
    import re

    n = int(geometry["buckets"])
    x0, x1 = geometry["x0"], geometry["x1"]
    y0, ytop, ymax = geometry["y0"], geometry["ytop"], geometry["ymax"]
    out: list[float | None] = [None] * n
    x = y = 0.0
    for cmd, args in re.findall(r"([MVHZ])([^MVHZ]*)", d):
        nums = [float(a) for a in args.split()]
        if cmd == "M":
            x, y = nums
        elif cmd == "V":
            y = nums[0]
        elif cmd == "H":
            i = round((x - x0) / (x1 - x0) * n)
            assert round((nums[0] - x0) / (x1 - x0) * n) == i + 1, "one bucket per step"
            out[i] = (y0 - y) / (y0 - ytop) * ymax
            x = nums[0]
    return out
