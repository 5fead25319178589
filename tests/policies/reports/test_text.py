# ruff: noqa: RUF001  (messages carry the multiplication sign)
"""The terminal report: grouped by resource, marked, a verdict line; plain off a terminal."""

from __future__ import annotations

import re

import pytest
from report_samples import ASG_ADDR, LT_ADDR, TF_ADDR, empty_result, full_result

from policies.reports import text

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def test_plain_output_is_stable_uncoloured_ascii_framed() -> None:
    out = text.render(full_result())
    assert out == text.render(full_result())
    assert not ANSI.search(out)
    assert all(line == line.rstrip() for line in out.splitlines())
    frame = [line for line in out.splitlines() if line.startswith("+")]
    assert frame and all(set(line) <= set("+-") for line in frame)
    # tables fit the fixed width; the verdict stays one line however long (grep-able in CI logs)
    assert max(len(line) for line in out.splitlines()[:-1]) <= text.PLAIN_WIDTH


def test_grouped_by_resource_with_markers() -> None:
    out = text.render(full_result())
    rows = [line for line in out.split("Rule errors")[0].splitlines() if line.startswith("| ")]
    first_cells = [r.split("|")[1].strip() for r in rows[1:]]
    # each resource is named once, at the head of its group; its other rows leave it blank
    for addr in ("aws_launch_template.gpu", "aws_autoscaling_group.gpu"):
        assert first_cells.count(addr) == 1
    assert first_cells[first_cells.index(LT_ADDR) + 1] == ""
    assert "cannot verify" in out and "waived" in out and "[waived by W-7]" in out
    assert out.count("gpu-smallest-instance") == 3
    assert TF_ADDR[:20] in out and ASG_ADDR in out


def test_errors_cost_and_verdict() -> None:
    lines = text.render(full_result()).splitlines()
    assert any("KeyError: 'target_value'" in line for line in lines)
    assert "GPU cost change: +$0.226/h (+$164.98/month at 730 h); 2 resources not priced" in lines
    assert lines[-1].startswith("FAIL: 3 mandatory violations, 2 rule errors, 2 advisory, 1 waived")
    assert "12 resources evaluated" in lines[-1]


def test_pass_without_findings_is_one_line() -> None:
    out = text.render(empty_result())
    expected = "PASS: no violations (3 resources evaluated in plans/tf.json)"
    assert out.strip().splitlines() == [expected]


def test_colour_only_when_asked() -> None:
    coloured = text.render(full_result(), color=True, width=100)
    assert ANSI.search(coloured)
    assert ANSI.sub("", coloured).count("gpu-no-vertical-upsize") == 1


def test_many_findings_are_listed_not_tabled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text, "TABLE_MAX_ROWS", 1)
    out = text.render(full_result())
    lines = out.splitlines()
    assert lines[0] == "Policy findings (6, listed by resource)"
    i = lines.index(TF_ADDR)
    assert lines[i + 1].startswith("  [mandatory] gpu-no-vertical-upsize: g4dn.xlarge")
    assert lines[i + 2] == "      add 1 × g4dn.xlarge"  # a message's own line breaks stay indented
    assert "  [mandatory, cannot verify] gpu-smallest-instance: cannot verify" in out
    assert "  [mandatory, waived by W-7] gpu-smallest-instance: g5.2xlarge" in out
    assert "Rule errors (2; the check fails)" in out
    assert "  gpu-pool-scales-on-utilisation on aws_autoscaling_group.gpu: KeyError" in out
    assert lines[-1].startswith("FAIL: 3 mandatory violations")
    coloured = text.render(full_result(), color=True)
    assert ANSI.search(coloured) and "[mandatory, waived by W-7]" in ANSI.sub("", coloured)


def test_cost_table_shows_the_largest_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text, "COST_MAX_ROWS", 1)
    out = text.render(full_result())
    assert "the 1 largest of 3 changes" in out
    cost = out.split("GPU cost change (on-demand)")[1]
    assert TF_ADDR[:20] in cost and "new pool" not in cost
    assert "GPU cost change: +$0.226/h" in out  # the total still covers every line


def test_urns_read_as_name_and_type_in_tables() -> None:
    from policies.reports._common import short_address

    urn = "urn:pulumi:dev::gpupool::gpupool:aws:GpuPool$aws:autoscaling/group:Group::dev-asg"
    assert short_address(urn) == "dev-asg (aws.autoscaling.Group)"
    assert short_address("module.a.aws_instance.x[0]") == "module.a.aws_instance.x[0]"
    assert short_address("urn:pulumi:broken") == "urn:pulumi:broken"
