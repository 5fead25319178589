"""One comment from several reports: within GitHub's limit, every stack in it, valid markdown."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gpupool.ci.comment import COMMENT_LIMIT, Part, assemble, fair_shares, fit

NOTE = "the whole report is in the artifact"


def report(rows: int, width: int = 80) -> str:
    table = ["| Policy | Resource | Message |", "| --- | --- | --- |"]
    table += [f"| `p` | `r{i}` | {'x' * width} |" for i in range(rows)]
    return "\n".join(["**1 mandatory violation**", "", *table, "",
                      "<details><summary>Policies (7)</summary>", "", *table, "", "</details>"])


def test_small_reports_are_kept_whole() -> None:
    parts = [Part("### Stack `dev`", report(3)), Part("### Stack `prod`", report(2))]
    text = assemble("## gpupool", parts, "<sub>footer</sub>", NOTE)
    for p in parts:
        assert p.body in text
    assert "cut to fit" not in text


def test_three_huge_stacks_share_the_comment_fairly() -> None:
    parts = [Part(f"### Stack `{s}`", report(2000)) for s in ("dev", "staging", "prod")]
    text = assemble("## gpupool: fail", parts, "<sub>footer</sub>", NOTE)
    assert len(text) <= COMMENT_LIMIT
    for s in ("dev", "staging", "prod"):  # the old workflow cut the last stacks off entirely
        assert f"### Stack `{s}`" in text
    assert text.count("cut to fit the comment") == 3
    assert text.rstrip().endswith("<sub>footer</sub>")
    sections = text.split("### Stack ")[1:]
    sizes = [len(s) for s in sections]
    assert max(sizes) - min(sizes) < 0.05 * max(sizes)  # fair shares


def test_a_small_stack_keeps_everything_beside_a_huge_one() -> None:
    small = report(5)
    text = assemble("## h", [Part("### Stack `a`", small), Part("### Stack `b`", report(5000))],
                    "f", NOTE)
    assert small in text and len(text) <= COMMENT_LIMIT


def test_cut_inside_details_closes_it_and_never_splits_a_row() -> None:
    body = report(1000)
    out = fit(body, 60_000, NOTE)
    assert len(out) <= 60_000
    assert out.count("<details") == out.count("</details>")
    table_lines = [line for line in out.splitlines() if line.startswith("|")]
    assert all(line.endswith("|") for line in table_lines)
    assert "more lines cut to fit the comment; the whole report is in the artifact" in out


def test_open_code_fence_is_closed() -> None:
    body = "```\n" + "\n".join("line" * 20 for _ in range(500)) + "\n```\n"
    out = fit(body, 2000, NOTE)
    assert out.count("```") % 2 == 0 and len(out) <= 2000


@given(st.lists(st.integers(0, 200_000), min_size=1, max_size=8), st.integers(0, 70_000))
def test_fair_shares_never_exceed_the_budget_or_the_need(sizes: list[int], budget: int) -> None:
    shares = fair_shares(sizes, budget)
    assert sum(shares) <= budget
    assert all(0 <= s <= n for s, n in zip(shares, sizes, strict=True))
    if sum(sizes) <= budget:
        assert shares == sizes


@given(st.lists(st.text(max_size=3000), min_size=1, max_size=5), st.integers(200, 70_000))
def test_any_reports_fit_any_limit(bodies: list[str], limit: int) -> None:
    parts = [Part(f"### {i}", b) for i, b in enumerate(bodies)]
    assert len(assemble("## head", parts, "foot", NOTE, limit=limit)) <= limit
