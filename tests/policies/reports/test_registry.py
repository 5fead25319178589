"""``render(result, fmt)``: every format reachable by name, each loaded only when asked for."""

from __future__ import annotations

import subprocess
import sys

import pytest
from report_samples import full_result

from policies.reports import FORMATS, render


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_renders(fmt: str) -> None:
    out = render(full_result(), fmt)
    assert out.endswith("\n") and len(out) > 200


def test_unknown_format() -> None:
    with pytest.raises(ValueError, match="unknown report format 'yaml'"):
        render(full_result(), "yaml")


def test_machine_formats_do_not_load_rich() -> None:
    code = (
        "import sys\n"
        "from policies.result import Result\n"
        "from policies.reports import render\n"
        "r = Result([], [], [], [], 0)\n"
        "for f in ('json', 'sarif', 'junit', 'markdown'): render(r, f)\n"
        "print('rich' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
