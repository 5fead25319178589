"""The action's steps (gpupool/ci/action.py), run locally: the commands it runs with the inputs
it passes, the policy files it trusts, the stacks it picks, its outputs and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from action_support import CONFIG, TEAMS, Repo, RunAction, runner_outputs

OUT = "reports"


def commands(repo: Repo) -> list[list[str]]:
    log = repo.path / OUT / "commands.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()]


def checks(repo: Repo) -> list[list[str]]:
    """Each gpupool check's arguments after ``check`` (the command prefix dropped)."""
    return [c[c.index("check") + 1:] for c in commands(repo) if "check" in c]


def stack_checks(repo: Repo) -> list[list[str]]:
    return [a for a in checks(repo) if "--stack" in a]


def quota_checks(repo: Repo) -> list[list[str]]:
    return [a for a in checks(repo) if any(x.endswith("all-stacks.json") for x in a)]


def outputs(tmp_path: Path) -> dict[str, str]:
    return runner_outputs((tmp_path / "github-output").read_text())


def visible(text: str) -> list[str]:
    """The comment's lines a reader sees before opening any ``<details>``."""
    out, depth = [], 0
    for line in text.splitlines():
        depth += line.count("<details") - line.count("</details>")
        if depth == 0 and "</details>" not in line:
            out.append(line)
    return out


def edit_stack(repo: Repo, name: str = "dev", max_size: int = 8) -> None:
    path = repo.path / "stacks" / f"Pulumi.{name}.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["config"]["gpupool:pools"][0]["maxSize"] = max_size
    path.write_text(yaml.safe_dump(doc, sort_keys=False))


def test_only_the_changed_stack_is_checked_with_the_base_policy_files(
        repo: Repo, run_action: RunAction, fake_command: str, tmp_path: Path) -> None:
    edit_stack(repo)
    repo.commit("dev: more GPUs")
    code, out = run_action("--base-ref", repo.base, "--out-dir", OUT, "--gpupool", fake_command)
    assert code == 0, out
    trusted = repo.path / OUT / "trusted"
    reports = repo.path / OUT / "reports"
    assert stack_checks(repo) == [
        ["--stack", "dev", "--base", repo.base, "--config", str(trusted / "policy-config.json"),
         "--teams", str(trusted / "teams.yaml"), "--format", f"sarif={reports / 'dev.sarif'}",
         "--format", f"markdown={reports / 'dev.md'}", "--format", f"json={reports / 'dev.json'}"],
    ]  # one evaluation writes every report
    o = outputs(tmp_path)
    assert o["verdict"] == "pass" and o["stacks"] == "dev" and o["governed-changes"] == ""
    # and the team quotas once more over every stack's plan joined, with only that policy on
    planned = [c[c.index("plan") + 1] for c in commands(repo) if "plan" in c]
    assert planned == ["dev", "staging"]
    [quota] = quota_checks(repo)
    assert quota[quota.index("--teams") + 1] == str(trusted / "teams.yaml")
    config = json.loads((trusted / "team-quotas-config.json").read_text())
    assert config == {"all": "disabled", "team-gpu-quota": "mandatory"}


def test_no_quota_run_when_the_base_disables_the_policy(
        repo: Repo, run_action: RunAction, fake_command: str) -> None:
    (repo.path / "policy-config.json").write_text('{"team-gpu-quota": "disabled"}')
    repo.base = repo.commit("the base branch turns quotas off")
    edit_stack(repo)
    repo.commit("dev")
    run_action("--base-ref", repo.base, "--out-dir", OUT, "--gpupool", fake_command)
    assert quota_checks(repo) == [] and len(stack_checks(repo)) == 1


def test_a_pull_request_cannot_weaken_the_rules_that_judge_it(
        repo: Repo, run_action: RunAction, fake_command: str, tmp_path: Path) -> None:
    edit_stack(repo)
    weaker = {"team-gpu-quota": "disabled"}
    (repo.path / "policy-config.json").write_text(yaml.safe_dump(weaker))
    raised = json.loads(json.dumps(TEAMS))
    raised["teams"]["ml-platform"]["gpuQuota"]["dev"] = 100
    (repo.path / "stacks" / "teams.yaml").write_text(yaml.safe_dump(raised))
    repo.commit("dev: more GPUs, and the rules that would stop it, relaxed")
    _, out = run_action("--base-ref", repo.base, "--out-dir", OUT, "--gpupool", fake_command)
    trusted = repo.path / OUT / "trusted"
    # the checks ran with the BASE branch's files, byte for byte
    assert yaml.safe_load((trusted / "policy-config.json").read_text()) == CONFIG
    assert yaml.safe_load((trusted / "teams.yaml").read_text()) == TEAMS
    judged = [a for a in stack_checks(repo) if "json" not in a]
    compared = [a for a in stack_checks(repo) if "json" in a]
    assert len(judged) == 2  # dev and staging
    for args in judged:
        assert str(trusted / "policy-config.json") in args and str(trusted / "teams.yaml") in args
    # the PR's own files ran once more per stack, only to tell the reviewers what they change
    assert len(compared) == 2
    for args in compared:
        assert str(repo.path / "policy-config.json") in args
        assert str(repo.path / "stacks" / "teams.yaml") in args
    # the teams file changed, so every stack was checked
    assert outputs(tmp_path)["stacks"] == "dev staging"
    comment = (repo.path / OUT / "comment.md").read_text()
    assert "### ⚠️ This pull request changes what judges it" in comment
    assert "- `policy-config.json`\n- `stacks/teams.yaml`" in comment
    assert "with this pull request's own policy files" in comment
    assert "::warning file=policy-config.json::changes what judges pull requests" in out
    assert outputs(tmp_path)["governed-changes"] == "policy-config.json stacks/teams.yaml"


def test_rules_and_workflow_changes_are_reported(
        repo: Repo, run_action: RunAction, fake_command: str, tmp_path: Path) -> None:
    repo.write("policies/rules/x.py", "RULE = None\n")
    repo.write(".github/workflows/ci.yml", "on: push\n")
    repo.write("docs/readme.md", "hello\n")
    repo.commit("touch the rules")
    run_action("--base-ref", repo.base, "--out-dir", OUT, "--gpupool", fake_command,
               "--governed", "docs/*")
    assert outputs(tmp_path)["governed-changes"] == (
        ".github/workflows/ci.yml docs/readme.md policies/rules/x.py")
    assert outputs(tmp_path)["stacks"] == ""  # no stack or program changed
    assert "nothing to check" in (repo.path / OUT / "comment.md").read_text()


def test_a_policy_file_new_in_the_pull_request_is_not_applied(
        repo: Repo, run_action: RunAction, fake_command: str) -> None:
    repo.write("waivers.yaml", "waivers: []\n")
    edit_stack(repo)
    repo.commit("add waivers")
    run_action("--base-ref", repo.base, "--out-dir", OUT, "--gpupool", fake_command,
               "--waivers", "waivers.yaml")
    judged = [a for a in stack_checks(repo) if "json" not in a]
    assert judged and all("--waivers" not in args for args in judged)
    compared = [a for a in stack_checks(repo) if "json" in a]  # the PR's own, for reviewers
    assert compared and all("--waivers" in args for args in compared)
    comment = (repo.path / OUT / "comment.md").read_text()
    assert "`waivers.yaml` is new in this pull request: it is not applied until it is merged" \
        in comment


def test_a_program_change_checks_every_stack(repo: Repo, run_action: RunAction,
                                             fake_command: str, tmp_path: Path) -> None:
    repo.write("infra/extra.py", "X = 1\n")
    repo.commit("program")
    run_action("--base-ref", repo.base, "--out-dir", OUT, "--gpupool", fake_command)
    assert outputs(tmp_path)["stacks"] == "dev staging"


def test_a_deleted_stack_is_not_checked(repo: Repo, run_action: RunAction,
                                        fake_command: str, tmp_path: Path) -> None:
    (repo.path / "stacks" / "Pulumi.staging.yaml").unlink()
    repo.commit("retire staging")
    run_action("--base-ref", repo.base, "--out-dir", OUT, "--gpupool", fake_command)
    assert outputs(tmp_path)["stacks"] == ""


@pytest.mark.parametrize(("codes", "level", "expected"), [
    ("dev=1", "mandatory", 1),
    ("dev=1", "never", 0),
    ("", "mandatory", 0),
    ("", "advisory", 1),        # the fake's passing report carries one advisory finding
    ("dev=2", "never", 2),      # a check that could not run is never green
])
def test_fail_level_decides_the_exit_code(repo: Repo, run_action: RunAction, fake_command: str,
                                          codes: str, level: str, expected: int) -> None:
    edit_stack(repo)
    repo.commit("dev")
    code, _ = run_action("--base-ref", repo.base, "--out-dir", OUT, "--gpupool", fake_command,
                         "--fail-level", level, FAKE_CODES=codes)
    assert code == expected


def test_bad_input_shows_in_the_comment_and_as_an_error(
        repo: Repo, run_action: RunAction, fake_command: str, tmp_path: Path) -> None:
    edit_stack(repo)
    repo.commit("dev")
    code, out = run_action("--base-ref", repo.base, "--out-dir", OUT, "--gpupool", fake_command,
                           FAKE_CODES="dev=2")
    assert code == 2 and outputs(tmp_path)["verdict"] == "error"
    assert "::error::gpupool check (stack dev): gpupool check: stacks/Pulumi.dev.yaml: broken" \
        in out
    comment = (repo.path / OUT / "comment.md").read_text()
    assert "⛔ the check could not run (bad input, exit 2)" in comment
    assert len(stack_checks(repo)) == 1


def test_every_stack_fits_one_comment(repo: Repo, run_action: RunAction, fake_command: str,
                                      tmp_path: Path) -> None:
    repo.write("infra/extra.py", "X = 1\n")
    repo.commit("program")
    run_action("--base-ref", repo.base, "--out-dir", OUT, "--gpupool", fake_command,
               FAKE_ROWS="4000", FAKE_CODES="dev=1")
    comment = (repo.path / OUT / "comment.md").read_text()
    assert len(comment) <= 65_536
    assert "### Stack `dev`: ❌ fail" in comment and "### Stack `staging`: ✅ pass" in comment
    assert "### Team quotas across every stack: ✅ pass" in comment
    assert comment.count("cut to fit the comment") == 3  # three big reports, each its share
    assert "<!-- gpupool-check -->" not in comment  # the sticky action keeps its own marker
    report = (repo.path / OUT / "reports" / "dev.md").read_text()
    assert len(report) > 65_536  # the whole report stays in the artifact


def test_sarif_is_merged_with_a_category_per_stack(repo: Repo, run_action: RunAction,
                                                   fake_command: str, tmp_path: Path) -> None:
    repo.write("infra/extra.py", "X = 1\n")
    repo.commit("program")
    plan = repo.path / "plan.json"
    plan.write_text("{}")
    run_action("--base-ref", repo.base, "--out-dir", OUT, "--gpupool", fake_command,
               "--plans", f"{plan} other.json", FAKE_CODES="plans=1")
    o = outputs(tmp_path)
    doc = json.loads(Path(o["sarif"]).read_text())
    assert [r["automationDetails"]["id"] for r in doc["runs"]] == [
        "gpupool/dev/", "gpupool/staging/", "gpupool/plans/", "gpupool/team-quotas/"]
    assert o["mandatory"] == "1" and o["advisory"] == "3" and o["verdict"] == "fail"
    plans = [a for a in checks(repo) if str(plan) in a]
    assert plans[0][:2] == [str(plan), "other.json"]  # one check over every plan file


def test_utilisation_snapshot_is_passed_to_every_check(repo: Repo, run_action: RunAction,
                                                       fake_command: str) -> None:
    edit_stack(repo)
    repo.commit("dev")
    run_action("--base-ref", repo.base, "--out-dir", OUT, "--gpupool", fake_command,
               "--utilisation", "debt.json")
    assert all(args[args.index("--utilisation") + 1] == "debt.json"
               for args in stack_checks(repo))


def test_inputs_come_from_the_environment_as_action_yml_passes_them(
        repo: Repo, run_action: RunAction, fake_command: str, tmp_path: Path) -> None:
    edit_stack(repo)
    repo.commit("dev")
    git_base = repo.base
    code, _ = run_action(GPUPOOL_BASE_REF=git_base, GPUPOOL_OUT_DIR=OUT,
                         GPUPOOL_COMMAND=fake_command, GPUPOOL_FAIL_LEVEL="never",
                         GPUPOOL_STACKS="all", GPUPOOL_CONFIG="", FAKE_CODES="dev=1")
    assert code == 0 and outputs(tmp_path)["stacks"] == "dev staging"
    assert all("--config" not in args for args in stack_checks(repo))


def test_a_base_missing_from_a_shallow_clone_says_how_to_fix_it(
        repo: Repo, run_action: RunAction, fake_command: str) -> None:
    code, out = run_action("--base-ref", "origin/main", "--out-dir", OUT, "--gpupool",
                           fake_command)
    assert code == 2
    assert "base ref 'origin/main' is not in this checkout" in out and "fetch-depth: 0" in out


def test_end_to_end_with_the_real_kit(repo: Repo, run_action: RunAction, tmp_path: Path) -> None:
    """The real gpupool: dev grows past its team's quota while the PR raises the quota; the base
    branch's teams file fails it, and the comment says the PR's own file would pass it."""
    raised = json.loads(json.dumps(TEAMS))
    raised["teams"]["ml-platform"]["gpuQuota"]["dev"] = 100
    (repo.path / "stacks" / "teams.yaml").write_text(yaml.safe_dump(raised))
    (repo.path / "stacks" / "Pulumi.staging.yaml").unlink()  # one stack: fewer plans to run
    repo.commit("raise our own quota")
    code, out = run_action("--base-ref", repo.base, "--out-dir", OUT)
    assert code == 1, out
    comment = (repo.path / OUT / "comment.md").read_text()
    assert "### Stack `dev`: ❌ fail" in comment
    assert "team ml-platform in dev: 6 GPUs at max exceeds its quota of 2" in comment
    assert "- stack `dev`: ✅ pass with this pull request's own policy files" in comment
    doc = json.loads((repo.path / OUT / "gpupool.sarif").read_text())
    assert doc["runs"][0]["automationDetails"] == {"id": "gpupool/dev/"}
    assert any(r["ruleId"] == "team-gpu-quota" for r in doc["runs"][0]["results"])
    assert "### Team quotas across every stack: ❌ fail" in comment
    # one screen (issue 16 item 24): one policy table, folded; the quota section says what the
    # pull request adds (nothing: it only raises a quota), never dev planned as if new
    assert comment.count("<summary>Policies (") == 1
    quota = comment[comment.index("### Team quotas"):comment.index("### Policies")]
    assert "This pull request changes no GPU cost." in quota and "GPU cost change" not in quota
    assert "1 stack checked (1 not passing) · this pull request changes no GPU cost" in comment
    assert len(visible(comment)) <= 40, "\n".join(visible(comment))
