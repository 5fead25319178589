"""``gpupool check`` end to end: every format on real fixture plans, exit codes, --output,
configuration and waivers, and usage errors that are one clear line each."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from cli_support import (
    PULUMI_UPSIZE,
    ROOT,
    SCHEMAS,
    TF_PASS,
    TF_UPSIZE,
    Run,
    run_in_process,
    run_process,
)
from jsonschema import Draft7Validator

FORMATS = ("text", "json", "sarif", "junit", "markdown")


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def assert_one_clean_line_per_problem(run: Run, *needles: str) -> None:
    assert run.code == 2
    assert run.out == ""
    assert "Traceback" not in run.err
    lines = run.err_lines
    assert lines and all(line.startswith("gpupool check: ") for line in lines), run.err
    for needle in needles:
        assert any(needle in line for line in lines), (needle, run.err)


def check_report(fmt: str, text: str, verdict: str) -> None:
    """The report is well formed in its format and carries the verdict."""
    if fmt == "json":
        assert json.loads(text)["verdict"] == verdict
    elif fmt == "sarif":
        doc = json.loads(text)
        schema = json.loads((SCHEMAS / "sarif-schema-2.1.0.json").read_text())
        errors = list(Draft7Validator(schema, format_checker=Draft7Validator.FORMAT_CHECKER)
                      .iter_errors(doc))
        assert errors == []
        levels = {r["level"] for r in doc["runs"][0]["results"]}
        assert ("error" in levels) == (verdict == "fail")
    elif fmt == "junit":
        root = ET.fromstring(text)
        assert (int(root.get("failures", "0")) > 0) == (verdict == "fail")
    elif fmt == "markdown":
        assert text.splitlines()[1].startswith("## ❌" if verdict == "fail" else "## ✅")
    else:
        assert text.rstrip().splitlines()[-1].startswith(verdict.upper() + ":")


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_as_a_process(fmt: str) -> None:
    """``python -m gpupool``, as CI calls it: the fail verdict (exit 1), report on stdout."""
    failing = run_process(["check", rel(TF_UPSIZE), "--format", fmt])
    assert failing.code == 1, failing.err
    assert failing.err == ""
    check_report(fmt, failing.out, "fail")


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_passes_a_clean_plan(fmt: str) -> None:
    """Advisory findings only: reported in every format, and exit 0."""
    run = run_in_process(["check", str(TF_PASS), "--format", fmt])
    assert run.code == 0, run.err
    check_report(fmt, run.out, "pass")


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_in_process_on_a_pulumi_preview(fmt: str) -> None:
    run = run_in_process(["check", str(PULUMI_UPSIZE), "--format", fmt])
    assert run.code == 1 and run.err == ""
    check_report(fmt, run.out, "fail")


def test_sarif_points_at_the_plan_file_relative_to_the_repo() -> None:
    """Run from a subdirectory, as a monorepo job might: URIs are still repo-relative."""
    run = run_process(["check", str(TF_UPSIZE.relative_to(ROOT / "tests")), "--format", "sarif"],
                      cwd=ROOT / "tests")
    assert run.code == 1, run.err
    doc = json.loads(run.out)
    lines = TF_UPSIZE.read_text().splitlines()
    for r in doc["runs"][0]["results"]:
        phys = r["locations"][0]["physicalLocation"]
        assert phys["artifactLocation"]["uri"] == "tests/fixtures/terraform/upsize-g4dn.json"
        addr = r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"]
        assert json.dumps(addr) in lines[phys["region"]["startLine"] - 1]


def test_text_is_plain_when_piped() -> None:
    run = run_process(["check", rel(TF_UPSIZE)])
    assert "\x1b[" not in run.out
    assert run.out.rstrip().splitlines()[-1].startswith("FAIL: 5 mandatory violations")


def test_text_is_coloured_when_forced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.delenv("NO_COLOR", raising=False)
    run = run_in_process(["check", str(TF_UPSIZE)])
    assert "\x1b[" in run.out


def test_several_plans_in_one_run() -> None:
    run = run_in_process(["check", str(TF_PASS), str(PULUMI_UPSIZE), "--format", "json"])
    doc = json.loads(run.out)
    assert run.code == 1
    assert doc["summary"]["sources"] == [str(TF_PASS), str(PULUMI_UPSIZE)]
    assert {v["source"] for v in doc["violations"]} == {str(TF_PASS), str(PULUMI_UPSIZE)}


@pytest.mark.parametrize("fmt", FORMATS)
def test_output_file_and_verdict_on_stderr(fmt: str, tmp_path: Path) -> None:
    target = tmp_path / f"report.{fmt}"
    run = run_in_process(["check", str(TF_UPSIZE), "--format", fmt, "--output", str(target)])
    assert run.code == 1 and run.out == ""
    (line,) = run.err_lines
    assert line.startswith("gpupool check: FAIL: 5 mandatory violations")
    assert line.endswith(f"{fmt} report written to {target}")
    check_report(fmt, target.read_text(encoding="utf-8"), "fail")
    assert [p.name for p in tmp_path.iterdir()] == [target.name]  # no temporary left behind


def test_output_replaces_an_existing_file(tmp_path: Path) -> None:
    target = tmp_path / "r.json"
    target.write_text("old")
    run = run_in_process(["check", str(TF_PASS), "--format", "json", "--output", str(target)])
    assert run.code == 0 and json.loads(target.read_text())["verdict"] == "pass"


def test_output_into_a_missing_directory(tmp_path: Path) -> None:
    run = run_in_process(["check", str(TF_PASS), "--output", str(tmp_path / "no" / "r.txt")])
    assert_one_clean_line_per_problem(run, "--output", "cannot write")


# -- configuration and waivers -----------------------------------------------------------


def test_config_changes_the_verdict(tmp_path: Path) -> None:
    config = tmp_path / "policy.yaml"
    config.write_text("all: advisory\n")
    run = run_in_process(["check", str(TF_UPSIZE), "--config", str(config), "--format", "json"])
    doc = json.loads(run.out)
    assert run.code == 0 and doc["verdict"] == "pass"
    assert doc["summary"]["mandatory"] == 0 and doc["summary"]["advisory"] == 5


def test_waivers_reach_every_report(tmp_path: Path) -> None:
    config = tmp_path / "policy.yaml"
    config.write_text("gpu-pool-scales-on-utilisation: disabled\n")
    waivers = tmp_path / "waivers.yaml"
    waivers.write_text(
        "waivers:\n"
        + "".join(
            f"  - id: W-{i}\n    policy: {p}\n    resource: '*'\n    allowWildcard: true\n"
            "    owner: ml-platform\n"
            f"    reason: T4 bench until Q3\n    expires: 2099-12-31\n"
            for i, p in enumerate(("gpu-no-vertical-upsize", "gpu-smallest-instance"))
        )
    )
    base = ["check", str(TF_UPSIZE), "--config", str(config), "--waivers", str(waivers)]
    doc = json.loads(run_in_process([*base, "--format", "json"]).out)
    assert doc["verdict"] == "pass" and doc["summary"]["waived"] == 4
    assert doc["summary"]["advisory"] == 2  # each wildcard waiver is reported
    run = run_in_process([*base, "--format", "sarif"])
    assert run.code == 0
    results = [r for r in json.loads(run.out)["runs"][0]["results"]
               if r["ruleId"] != "gpupool-waiver"]
    assert len(results) == 4
    for r in results:
        (s,) = r["suppressions"]
        assert s["kind"] == "external"
        assert "ml-platform" in s["justification"] and "2099-12-31" in s["justification"]
    md = run_in_process([*base, "--format", "markdown"]).out
    assert "Waived (4)" in md and "T4 bench until Q3" in md


def test_expired_waiver_is_itself_a_violation(tmp_path: Path) -> None:
    waivers = tmp_path / "waivers.yaml"
    waivers.write_text(
        "waivers:\n  - id: W-old\n    policy: gpu-chargeback-tags\n    resource: 'aws_*'\n"
        "    owner: me\n    reason: r\n    expires: 2020-01-01\n"
    )
    run = run_in_process(["check", str(TF_PASS), "--waivers", str(waivers), "--format", "sarif"])
    assert run.code == 1
    results = json.loads(run.out)["runs"][0]["results"]
    (expired,) = [r for r in results if r["ruleId"] == "gpupool-waiver"]
    assert expired["level"] == "error"
    assert expired["locations"][0]["physicalLocation"]["region"]["startLine"] == 2


def test_bad_config_and_waivers_name_file_and_key(tmp_path: Path) -> None:
    config = tmp_path / "policy.yaml"
    config.write_text("gpu-smallest-instance: sometimes\n")
    run = run_in_process(["check", str(TF_PASS), "--config", str(config)])
    assert_one_clean_line_per_problem(run, f"{config}: gpu-smallest-instance")
    waivers = tmp_path / "waivers.yaml"
    waivers.write_text("waivers: {}\n")
    run = run_in_process(["check", str(TF_PASS), "--waivers", str(waivers)])
    assert_one_clean_line_per_problem(run, str(waivers))
    run = run_in_process(["check", str(TF_PASS), "--config", str(tmp_path / "none.yaml")])
    assert_one_clean_line_per_problem(run, "none.yaml")


# -- usage and unreadable input ----------------------------------------------------------


def test_nothing_to_check() -> None:
    assert_one_clean_line_per_problem(run_in_process(["check"]), "nothing to check")


def test_base_without_stack() -> None:
    run = run_in_process(["check", str(TF_PASS), "--base", "HEAD~1"])
    assert_one_clean_line_per_problem(run, "--base GIT_REF needs --stack")


def test_unknown_format_is_a_usage_error() -> None:
    run = run_in_process(["check", str(TF_PASS), "--format", "yaml"])
    assert_one_clean_line_per_problem(run, "--format: expected one of text, json, sarif, "
                                           "junit, markdown, optionally followed by =FILE, "
                                           "got 'yaml'")
    run = run_in_process(["check", str(TF_PASS), "--format", "sarfi"])
    assert_one_clean_line_per_problem(run, "(did you mean sarif?)")


@pytest.mark.parametrize(
    "content,needle",
    [
        (b"", "expected"),
        (b"{not json", "expected"),
        (b"\xff\xfe\x00garbage", "expected"),
        (b"[]", "expected"),
        (b'{"format_version": "1.2", "values": {}}', "Terraform state"),
        (b'{"steps": "nope"}', "steps"),
    ],
)
def test_unreadable_plans_exit_2(tmp_path: Path, content: bytes, needle: str) -> None:
    plan = tmp_path / "plan.json"
    plan.write_bytes(content)
    run = run_in_process(["check", str(plan), "--format", "json"])
    assert_one_clean_line_per_problem(run, str(plan), needle)


def test_every_problem_reported_at_once(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    config = tmp_path / "policy.yaml"
    config.write_text("no-such-policy: advisory\n")
    run = run_in_process(
        ["check", str(TF_PASS), str(bad), str(tmp_path / "missing.json"), "--config", str(config)]
    )
    assert_one_clean_line_per_problem(run, "bad.json", "missing.json", "no-such-policy")
    assert len(run.err_lines) == 3


def test_a_directory_is_not_a_plan(tmp_path: Path) -> None:
    assert_one_clean_line_per_problem(run_in_process(["check", str(tmp_path)]), str(tmp_path))


def test_usage_errors_as_a_process() -> None:
    run = run_process(["check", "does-not-exist.json"])
    assert_one_clean_line_per_problem(run, "does-not-exist.json")


# -- --stack (offline plan of the kit's own stack) -----------------------------------------


def test_stack_with_a_plan_file_in_sarif(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The kit's own dev stack passes; its findings point at the stack file in SARIF. (An
    extra required tag makes sure the stack has findings to point with.)"""
    monkeypatch.chdir(ROOT)
    config = tmp_path / "policy.yaml"
    config.write_text("gpu-chargeback-tags:\n  requiredTags: [team, budget-owner]\n")
    run = run_in_process(["check", rel(TF_PASS), "--stack", "dev", "--format", "sarif",
                          "--config", str(config)])
    assert run.code == 0, run.err
    check_report("sarif", run.out, "pass")
    doc = json.loads(run.out)
    assert doc["runs"][0]["properties"]["sources"] == [rel(TF_PASS), "stack dev (working tree)"]
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in doc["runs"][0]["results"]
        if "budget-owner" in r["message"]["text"]
    }
    assert uris == {"stacks/Pulumi.dev.yaml", rel(TF_PASS)}


def test_stack_against_a_git_base(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    run = run_in_process(["check", "--stack", "dev", "--base", "HEAD", "--format", "json"])
    assert run.code == 0, run.err
    doc = json.loads(run.out)
    assert doc["summary"]["sources"] == ["stack dev @ HEAD..worktree"]
    assert doc["summary"]["resources_evaluated"] > 10


def test_unknown_stack_and_bad_ref(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    assert_one_clean_line_per_problem(run_in_process(["check", "--stack", "nosuch"]), "nosuch")
    run = run_in_process(["check", "--stack", "dev", "--base", "no-such-ref-xyz"])
    assert_one_clean_line_per_problem(run, "no-such-ref-xyz")


def test_stack_is_not_planned_when_other_input_is_bad(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Bad input is reported at once, without paying seconds for an offline plan first."""
    monkeypatch.chdir(ROOT)
    run = run_in_process(["check", str(tmp_path / "missing.json"), "--stack", "nosuch"])
    assert_one_clean_line_per_problem(run, "missing.json")
    assert not any("nosuch" in line for line in run.err_lines)


@pytest.mark.parametrize("plan,code", [(TF_UPSIZE, 1), (TF_PASS, 0)])
def test_closed_pipe_keeps_the_verdict(plan: Path, code: int) -> None:
    """`gpupool check plan.json | head` under pipefail: a failing check still exits 1."""
    import subprocess
    import sys

    p = subprocess.Popen([sys.executable, "-m", "gpupool", "check", str(plan)], cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.stdout is not None and p.stderr is not None
    p.stdout.close()  # the reader is gone before the report is written
    err = p.stderr.read().decode()
    assert p.wait(timeout=60) == code
    assert "Traceback" not in err and "BrokenPipe" not in err


@pytest.fixture(scope="module")
def dev_plan_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`gpupool plan dev --format json`: the third kind of plan file check reads."""
    out = tmp_path_factory.mktemp("plan") / "dev-plan.json"
    run = run_process(["plan", "dev", "--format", "json", "--output", str(out)])
    assert run.code == 0, run.err
    return out


@pytest.mark.parametrize("fmt", FORMATS)
def test_offline_plan_file_of_the_kits_own_stack_passes(fmt: str, dev_plan_file: Path) -> None:
    run = run_in_process(["check", str(dev_plan_file), "--format", fmt])
    assert run.code == 0, run.out + run.err
    check_report(fmt, run.out, "pass")
