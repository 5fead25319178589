"""teams.yaml: validated with every problem at once, one line each, naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpupool.errors import InputError
from gpupool.teams import load_teams, parse_teams

ROOT = Path(__file__).resolve().parents[3]
GOOD = {"owners": ["@acme/ml"], "costCenter": "cc-1", "allowedGpus": ["T4"],
        "gpuQuota": {"dev": 2}, "monthlyBudgetUsd": 500}


def test_the_kits_own_and_the_golden_teams_files_are_valid() -> None:
    kit = load_teams(ROOT / "stacks" / "teams.yaml")
    assert kit.require("research").quota("prod") == 24
    assert kit.require("research").quota("sandbox") == 0  # absent environment: no GPUs
    golden = load_teams(ROOT / "tests" / "fixtures" / "golden" / "teams.yaml")
    assert golden.require("vision").allows("t4g")


@pytest.mark.parametrize(("team", "expected"), [
    ({**GOOD, "owners": []}, "teams.ab.owners: expected at least 1 item(s)"),
    ({**GOOD, "owners": ["bob"]}, "teams.ab.owners[0]: expected a GitHub user or team"),
    ({**GOOD, "gpuQuota": {"prod": -1}}, "teams.ab.gpuQuota.prod: expected at least 0"),
    ({**GOOD, "gpuQuota": {"prod": 2.5}}, "teams.ab.gpuQuota.prod: expected a whole number"),
    ({**GOOD, "gpuQuota": {"prod": True}}, "teams.ab.gpuQuota.prod: expected a whole number"),
    ({**GOOD, "gpuQuota": {"prod": "8"}}, "teams.ab.gpuQuota.prod: expected a whole number"),
    ({**GOOD, "gpuQuota": {"qa": 1}}, "teams.ab.gpuQuota.qa: expected an environment"),
    ({**GOOD, "monthlyBudgetUsd": float("nan")}, "teams.ab.monthlyBudgetUsd: expected a finite"),
    ({**GOOD, "monthlyBudgetUsd": "lots"}, "teams.ab.monthlyBudgetUsd: expected a number"),
    ({**GOOD, "monthlyBudgetUsd": 0}, "teams.ab.monthlyBudgetUsd: expected more than 0"),
    ({**GOOD, "allowedGpus": ["T5"]}, "teams.ab.allowedGpus[0]: expected a GPU model of the"),
    ({**GOOD, "quota": 3}, "teams.ab.quota: expected a known key"),
    ({k: v for k, v in GOOD.items() if k != "costCenter"}, "teams.ab.costCenter: expected a "
     "value: this key is required"),
])
def test_bad_team_entries_name_the_key(team: dict[str, object], expected: str) -> None:
    with pytest.raises(InputError) as e:
        parse_teams({"teams": {"a1": GOOD, "ab": team}}, "teams.yaml")
    assert [line for line in e.value.problems if expected in line], e.value.problems
    assert all(line.startswith("teams.yaml: teams.ab") for line in e.value.problems)


def test_whole_floats_count_as_gpus() -> None:
    # JSON policy config reaches the CrossGuard pack as protobuf doubles: 8 arrives as 8.0
    teams = parse_teams({"teams": {"ab": {**GOOD, "gpuQuota": {"prod": 8.0}}}}, "x")
    assert teams.require("ab").quota("prod") == 8


def test_every_problem_at_once() -> None:
    with pytest.raises(InputError) as e:
        parse_teams({"teams": {"Bad Name": GOOD, "bb": {**GOOD, "owners": [],
                                                         "monthlyBudgetUsd": -1}}}, "t.yaml")
    assert len(e.value.problems) == 3


@pytest.mark.parametrize("doc", [None, [], {"team": {}}, {"teams": {}}])
def test_wrong_shapes(doc: object) -> None:
    with pytest.raises(InputError) as e:
        parse_teams(doc, "t.yaml")
    assert len(e.value.problems) == 1 and e.value.problems[0].startswith("t.yaml: ")


def test_yaml_problems_come_from_the_shared_reader(tmp_path: Path) -> None:
    f = tmp_path / "teams.yaml"
    f.write_text("teams:\n  a: {}\n  a: {}\n")
    with pytest.raises(InputError, match="appears twice"):
        load_teams(f)


def test_unknown_team_suggests_the_close_one() -> None:
    teams = load_teams(ROOT / "stacks" / "teams.yaml")
    with pytest.raises(InputError, match=r"teams\.reseach: no such team \(did you mean research"):
        teams.require("reseach")


def test_cache_sees_an_edited_file(tmp_path: Path) -> None:
    import yaml

    f = tmp_path / "teams.yaml"
    f.write_text(yaml.safe_dump({"teams": {"ab": GOOD}}))
    assert load_teams(f).require("ab").quota("dev") == 2
    f.write_text(yaml.safe_dump({"teams": {"ab": {**GOOD, "gpuQuota": {"dev": 7}}}}) + "\n\n")
    assert load_teams(f).require("ab").quota("dev") == 7


def test_the_kits_own_stacks_are_within_their_teams_quotas() -> None:
    from gpupool.teams.usage import team_usage

    teams = load_teams(ROOT / "stacks" / "teams.yaml")
    for name, team in teams.teams.items():
        use = team_usage(name, ROOT / "stacks")
        for env in ("dev", "staging", "prod", "sandbox", "test"):
            assert use.gpus(env) <= team.quota(env), (name, env)
        month = use.per_month()
        assert month is not None and month <= team.monthly_budget_usd, name


def test_remote_gpu_proxies_count_against_their_team() -> None:
    from gpupool.config import load_stack
    from gpupool.teams.usage import pool_uses

    uses = pool_uses(load_stack(str(ROOT / "stacks" / "Pulumi.staging.yaml")))
    stack = load_stack(str(ROOT / "stacks" / "Pulumi.staging.yaml"))
    tiers = {t.name for t in stack.config.remote_gpu}
    assert tiers and tiers <= {u.pool for u in uses}
    for u in uses:
        if u.pool in tiers:
            assert u.gpus_max > 0 and u.team == stack.config.team


def test_a_name_with_surrounding_whitespace_never_replaces_a_team(tmp_path: Path) -> None:
    """``"research "`` was stripped before the duplicate check and silently replaced
    ``research`` (its quota, GPUs and budget): now both lines name the key, exit 2."""
    f = tmp_path / "teams.yaml"
    f.write_text("teams:\n"
                 "  research: {owners: ['@acme/r'], costCenter: cc-1, allowedGpus: [T4],\n"
                 "             gpuQuota: {dev: 2}, monthlyBudgetUsd: 500}\n"
                 "  'research ': {owners: ['@acme/r'], costCenter: cc-1, allowedGpus: [T4],\n"
                 "               gpuQuota: {dev: 400}, monthlyBudgetUsd: 900000}\n")
    with pytest.raises(InputError) as e:
        load_teams(f, "stacks/teams.yaml")
    assert e.value.problems == [
        "stacks/teams.yaml: teams.'research ': expected a team name without surrounding "
        "whitespace, got 'research '",
        "stacks/teams.yaml: teams.'research ': expected a team name used once, but it differs "
        "from teams.research only in case or whitespace, so the two name one team; keep one",
    ]


@pytest.mark.parametrize(("teams", "expected"), [
    ({" ab": GOOD}, ["t.yaml: teams.' ab': expected a team name without surrounding whitespace, "
                     "got ' ab'"]),
    ({"ab": GOOD, "Ab": GOOD}, [
        "t.yaml: teams.Ab: expected a team name used once, but it differs from teams.ab only in "
        "case or whitespace, so the two name one team; keep one",
        "t.yaml: teams.Ab: expected a lowercase team name of 2-32 characters (a-z, 0-9, '-'), "
        "such as research, got 'Ab'"]),
    ({"ab": {**GOOD, "gpuQuota": {"dev": 1, "dev\t": 9}}}, [
        "t.yaml: teams.ab.gpuQuota.'dev\\t': expected a key without surrounding whitespace, "
        "got 'dev\\t'",
        "t.yaml: teams.ab.gpuQuota.'dev\\t': expected a key used once, but it differs from "
        "teams.ab.gpuQuota.dev only in case or whitespace, so the two are one key; keep one",
        "t.yaml: teams.ab.gpuQuota.'dev\\t': expected an environment ('dev', 'staging', 'prod', "
        "'sandbox' or 'test'), got 'dev\\t'"]),
], ids=["leading-space", "case", "quota-key"])
def test_keys_that_differ_only_in_whitespace_or_case_are_refused(
        teams: dict[str, object], expected: list[str]) -> None:
    with pytest.raises(InputError) as e:
        parse_teams({"teams": teams}, "t.yaml")
    assert e.value.problems == expected


def test_the_quota_policy_refuses_the_same_in_its_inline_teams() -> None:
    """team-gpu-quota's ``teams`` parameter (policy config, the CrossGuard pack) is the same
    model: a whitespace twin is bad config there too, never a bigger quota."""
    from policies.settings import parse_config

    with pytest.raises(InputError, match=r"teams\.'ab ': expected a team name without"):
        parse_config({"team-gpu-quota": {"teams": {"ab": GOOD, "ab ": GOOD}}}, "config.json")
