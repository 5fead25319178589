"""The pull-request comment: verdict, findings table, cost, folded details, escaping, size."""

from __future__ import annotations

import re

import pytest
from report_samples import POLICIES, TF_ADDR, advisory_only_result, empty_result, full_result

from policies.reports import markdown
from policies.result import CostLine, Result, RuleError, Violation
from policies.rules.base import Enforcement

M, A = Enforcement.MANDATORY, Enforcement.ADVISORY


def unescaped_pipes(row: str) -> int:
    return len(re.findall(r"(?<!\\)\|", row))


def table_rows(md: str, header_start: str) -> list[str]:
    lines = md.splitlines()
    i = next(n for n, line in enumerate(lines) if line.startswith(header_start))
    rows = []
    for line in lines[i + 2:]:
        if not line.startswith("|"):
            break
        rows.append(line)
    return rows


def test_headline_and_findings_table() -> None:
    md = markdown.render(full_result())
    lines = md.splitlines()
    assert lines[0] == markdown.MARKER
    # the stack is read from the URN of a finding (a preview or offline plan names it there)
    assert lines[1] == ("## ❌ gpupool check failed for stack dev: 3 mandatory violations, "
                        "2 rule errors")
    rows = table_rows(md, "| | Policy |")
    assert len(rows) == 5  # the six findings less the waived one
    assert all(unescaped_pipes(r) == 6 for r in rows)  # five cells, nothing split them
    icons = [r.split("|")[1].strip() for r in rows]
    assert icons[:3].count("❌") == 2 and icons.count("⚠️") == 1 and icons.count("❔") == 2
    assert "mandatory (cannot verify)" in md


def test_pass_headlines() -> None:
    assert markdown.render(empty_result()).splitlines()[1] == "## ✅ gpupool check passed"
    md = markdown.render(advisory_only_result())
    assert md.splitlines()[1] == "## ✅ gpupool check passed: 1 advisory, 1 waived"
    assert "No findings." in markdown.render(empty_result())


def test_cost_section_per_hour_and_month() -> None:
    md = markdown.render(full_result())
    assert "**+\\$0.226/h** (+\\$164.98/month at 730 h)" in md
    assert "2 resources not priced" in md
    rows = table_rows(md, "| Resource | Before")
    assert len(rows) == 3 and all(unescaped_pipes(r) == 7 for r in rows)
    saved = markdown.render(advisory_only_result())  # 4.352 → 0.526 per hour
    assert "**-\\$3.826/h** (-\\$2,792.98/month at 730 h)" in saved


def test_details_are_folded() -> None:
    md = markdown.render(full_result())
    assert md.count("<details>") == md.count("</details>") == 3
    waived = md.split("<summary>Waived (1)</summary>")[1].split("</details>")[0]
    assert "W-7" in waived and "ml-team" in waived and "2027-01-31" in waived
    errors = md.split("<summary>Rule errors (2)")[1].split("</details>")[0]
    assert "KeyError: 'target\\_value'" in errors
    policies = md.split("Policies (6)</summary>")[1]
    for p in POLICIES:
        assert f"`{p['id']}`" in policies
    assert "open to SSRF credential theft" in policies


def test_escaping_of_plan_controlled_text() -> None:
    nasty = "a|b\nc <script>alert(1)</script> *bold* [x](http://e) $1 and $2 & `tick`"
    res = Result([Violation("p", M, "aws_instance.x[`0`]|y", nasty)], [], [], [], 1)
    md = markdown.render(res)
    (row,) = table_rows(md, "| | Policy |")
    assert unescaped_pipes(row) == 6
    assert "<script>" not in md and "\\<script\\>" in row
    assert "<br>" in row and "\n" not in row
    assert "\\$1 and \\$2" in row  # no inline maths
    assert "\\*bold\\*" in row and "\\[x\\]" in row and "\\&" in row
    assert "aws\\_instance.x\\[\\`0\\`\\]\\|y" in row  # the resource: escaped text


@pytest.mark.parametrize("value,expected", [
    ("plain", "`plain`"),
    ("a`b", "``a`b``"),
    ("`edge`", "`` `edge` ``"),
    ("x|y\nz", "`x\\|y z`"),
])
def test_code_spans(value: str, expected: str) -> None:
    assert markdown.code(value) == expected


def test_stays_under_githubs_limit_and_says_what_was_cut() -> None:
    many = [
        Violation("gpu-smallest-instance", M, f"module.fleet.aws_instance.gpu[{i}]",
                  "g4dn.2xlarge is not the smallest size for its GPU (T4) " + "x" * 150)
        for i in range(3000)
    ]
    waived = [Violation("gpu-smallest-instance", M, f"w{i}", "w", waived_by="W-1")
              for i in range(500)]
    res = Result(many + waived, [RuleError("p", "e")], ["plan.json"], POLICIES, 3500,
                 [CostLine(TF_ADDR, 0.526, 0.752)])
    md = markdown.render(res)
    assert len(md) <= markdown.GITHUB_COMMENT_LIMIT
    rows = table_rows(md, "| | Policy |")
    assert 100 < len(rows) < 3000
    note = re.search(r"_… (\d+) findings not shown", md)
    assert note and int(note.group(1)) + len(rows) == 3000
    # the verdict, the cost and the closing of every fold survive the cut
    assert md.splitlines()[1].startswith("## ❌ gpupool check failed: 3000 mandatory")
    assert "+\\$0.226/h" in md
    assert md.count("<details>") == md.count("</details>")
    assert "waived findings not shown" in md  # lower priority sections are cut first


def test_small_limit_is_respected_exactly() -> None:
    for limit in (2000, 4000, 8000):
        md = markdown.render(full_result(), limit=limit)
        assert len(md) <= limit
    assert "not shown" not in markdown.render(full_result())


def test_advisory_sorted_after_blocking() -> None:
    res = Result([Violation("b", A, "r1", "adv"), Violation("a", M, "r2", "block")],
                 [], [], [], 2)
    rows = table_rows(markdown.render(res), "| | Policy |")
    assert rows[0].startswith("| ❌") and rows[1].startswith("| ⚠️")


def test_many_sources_do_not_crowd_out_the_comment() -> None:
    res = Result([], [], [f"plans/p{i}.json" for i in range(5000)], POLICIES, 0)
    md = markdown.render(res)
    assert len(md) < 5000 and "4995 more" in md
