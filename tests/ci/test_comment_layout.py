"""The action's comment for a one-stack pull request is one screen (issue 16, item 24): one policy
table, not one per report; the quota section's figure is what the pull request adds, never the
fleet's total; a team and its first stack in one pull request are explained. The real kit's
comment is held to the same in test_action_script.py's end-to-end test."""

from __future__ import annotations

import re

import yaml
from action_support import TEAMS, Repo, RunAction

from gpupool.ci.sections import MARKER, NAMES, split
from policies.reports import markdown

OUT = "reports"


def comment(repo: Repo) -> str:
    return (repo.path / OUT / "comment.md").read_text()


def test_the_section_markers_are_the_reports_own() -> None:
    for name in NAMES:
        assert MARKER.match(markdown.SECTION.format(name=name))


def test_a_team_and_its_first_stack_in_one_pull_request_are_explained(
        repo: Repo, run_action: RunAction, fake_command: str) -> None:
    teams = yaml.safe_load(yaml.safe_dump(TEAMS))
    teams["teams"]["vision"] = {**teams["teams"]["ml-platform"], "owners": ["@acme/vision"]}
    (repo.path / "stacks" / "teams.yaml").write_text(yaml.safe_dump(teams))
    repo.write("stacks/Pulumi.vision-dev.yaml",
               (repo.path / "stacks" / "Pulumi.dev.yaml").read_text())
    repo.commit("team vision and its first stack")
    run_action("--base-ref", repo.base, "--out-dir", OUT, "--gpupool", fake_command,
               FAKE_CODES="vision-dev=1")
    text = comment(repo)
    assert "### 🆕 Team `vision` is new in this pull request" in text
    assert ("The checks read `stacks/teams.yaml` from the base branch, so that a pull request "
            "can never grant itself a quota") in text
    assert "Merge the teams change first" in text
    # what does not pass comes first
    titles = re.findall(r"^### Stack `([^`]+)`", text, flags=re.M)
    assert titles[0] == "vision-dev"


def test_quiet_stacks_share_a_line_and_the_policy_table_comes_once(
        repo: Repo, run_action: RunAction, fake_command: str) -> None:
    repo.write("infra/extra.py", "X = 1\n")  # a program change: every stack is checked
    repo.commit("program")
    run_action("--base-ref", repo.base, "--out-dir", OUT, "--gpupool", fake_command,
               FAKE_QUIET="dev,staging", FAKE_COST="dev=0.5,staging=")
    text = comment(repo)
    assert text.count("<summary>Policies of") == 1
    # a cost change is something to read: neither stack is folded into the quiet line
    assert "### Stack `dev`: ✅ pass" in text and "### Stack `staging`: ✅ pass" in text
    assert ("this pull request adds at least **+\\$365.00/month** (+\\$0.5000/h) at max size, "
            "on-demand, and 1 GPU resource not priced") in text
    run_action("--base-ref", repo.base, "--out-dir", OUT, "--gpupool", fake_command,
               FAKE_QUIET="dev,staging", FAKE_COST="")
    text = comment(repo)
    assert "### Stacks `dev`, `staging`: ✅ pass\n\nNo findings, and no change to GPU cost." in text
    assert "this pull request changes no GPU cost" in text


def test_reports_come_apart_by_their_markers() -> None:
    s = split("<!-- gpupool-check -->\n## ✅ passed\n\nsummary\n\n"
              "<!-- gpupool-section: findings -->\n| a |\n\n"
              "<!-- gpupool-section: policies -->\n<details>p</details>\n")
    assert s.head == "summary" and list(s.parts) == ["findings", "policies"]
    assert s.body(without={"policies"}) == "summary\n\n| a |" and not s.quiet
