"""Waivers that cannot be misread (issue 7, item 8): wildcards only on purpose, stale and
soon-to-lapse waivers reported, dates that are dates, owners and reasons that are text, an
expiry day that is stated to be inclusive, and ``--today`` to test all of it."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from gpupool.errors import InputError
from policies.engine import evaluate
from policies.model import Plan
from policies.result import Result
from policies.rules.base import Enforcement, Example
from policies.settings import load_settings
from tests.cli.cli_support import TF_UPSIZE, run_in_process

BIG = {"type": "aws:ec2/instance:Instance", "name": "big",
       "new": {"instanceType": "g4dn.2xlarge", "metadataOptions": {"httpTokens": "required"},
               "rootBlockDevice": {"encrypted": True},
               "tags": {"team": "ml", "cost-center": "cc", "environment": "dev"}}}
PLAN = Plan("test", "plan.json", tuple(Example("t", True, [BIG]).changes()))
ONE = """\
waivers:
  - id: W-1
    policy: gpu-smallest-instance
    resource: "{resource}"
    owner: ml-platform
    reason: benchmark
    expires: {expires}
"""


def waivers_file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "waivers.yaml"
    path.write_text(text)
    return str(path)


def run(tmp_path: Path, text: str, today: date) -> Result:
    return evaluate([PLAN], load_settings(None, waivers_file(tmp_path, text)), today=today)


def about_waivers(result: Result) -> list[tuple[str, str]]:
    return [(v.enforcement.value, v.message) for v in result.violations
            if v.policy == "gpupool-waiver"]


def refused(tmp_path: Path, text: str) -> str:
    with pytest.raises(InputError) as err:
        load_settings(None, waivers_file(tmp_path, text))
    (line,) = err.value.problems
    return line.removeprefix(str(tmp_path) + "/")


# -- wildcards -------------------------------------------------------------------------------


def test_a_waiver_of_every_resource_needs_allow_wildcard_and_is_reported(tmp_path: Path) -> None:
    text = ONE.format(resource="*", expires="2027-01-31")
    assert refused(tmp_path, text) == (
        "waivers.yaml: waivers[0].resource: '*' waives gpu-smallest-instance on every resource; "
        "expected a narrower pattern, or allowWildcard: true to mean it")
    result = run(tmp_path, text + "    allowWildcard: true\n", date(2026, 6, 1))
    assert result.verdict == "pass"
    assert about_waivers(result) == [("advisory", (
        "waiver W-1 (gpu-smallest-instance on *) waives gpu-smallest-instance on every resource "
        "(allowWildcard: true), owner ml-platform, until 2027-01-31"))]
    assert refused(tmp_path, text + "    allowWildcard: yes please\n").startswith(
        "waivers.yaml: waivers[0].allowWildcard: expected true or false, got 'yes please'")


# -- stale and soon-to-lapse -------------------------------------------------------------------


def test_a_waiver_that_matches_nothing_is_a_warning(tmp_path: Path) -> None:
    result = run(tmp_path, ONE.format(resource="urn:*::small", expires="2027-01-31"),
                 date(2026, 6, 1))
    assert result.verdict == "fail"  # the finding it was meant for still blocks
    assert about_waivers(result) == [("advisory", (
        "waiver W-1 (gpu-smallest-instance on urn:*::small) matched no finding: remove it, or "
        "fix its resource pattern"))]


@pytest.mark.parametrize(("today", "says"), [
    (date(2026, 3, 16), None),  # 15 days ahead: quiet
    (date(2026, 3, 17), "its last day is 2026-03-31, in 14 days"),
    (date(2026, 3, 30), "its last day is 2026-03-31, in 1 day;"),
    (date(2026, 3, 31), "today is its last day"),
])
def test_expiring_within_14_days_is_a_warning_and_the_expiry_day_still_waives(
        tmp_path: Path, today: date, says: str | None) -> None:
    result = run(tmp_path, ONE.format(resource="urn:*::big", expires="2026-03-31"), today)
    assert result.verdict == "pass"
    assert [v.waived_by for v in result.violations if v.policy != "gpupool-waiver"] == ["W-1"]
    found = about_waivers(result)
    if says is None:
        assert found == []
    else:
        [(level, message)] = found
        assert level == "advisory" and says in message and "expires soon" in message


def test_the_day_after_the_expiry_day_the_waiver_is_expired(tmp_path: Path) -> None:
    result = run(tmp_path, ONE.format(resource="urn:*::big", expires="2026-03-31"),
                 date(2026, 4, 1))
    assert result.verdict == "fail"
    [(level, message)] = about_waivers(result)
    assert level == "mandatory"
    assert "expired: its last day was 2026-03-31 (the expiry day is included)" in message


def test_the_warning_window_is_configurable(tmp_path: Path) -> None:
    text = "expiryWarningDays: 30\n" + ONE.format(resource="urn:*::big", expires="2026-03-31")
    [(_, message)] = about_waivers(run(tmp_path, text, date(2026, 3, 6)))
    assert "in 25 days" in message and "warned 30 days ahead" in message
    assert refused(tmp_path, "expiryWarningDays: soon\n" + ONE.format(
        resource="x", expires="2026-03-31")).startswith(
        "waivers.yaml: expiryWarningDays: ")


# -- types -----------------------------------------------------------------------------------


@pytest.mark.parametrize("expires", ["20260331", "0", "2026-03-31T10:00:00Z", "true", "[2026]"])
def test_an_expiry_that_is_not_a_date_is_refused(tmp_path: Path, expires: str) -> None:
    assert refused(tmp_path, ONE.format(resource="x", expires=expires)).startswith(
        "waivers.yaml: waivers[0].expires: expected a date YYYY-MM-DD (the last day the waiver "
        "applies), got ")


def test_a_quoted_iso_date_is_a_date(tmp_path: Path) -> None:
    (w,) = load_settings(None, waivers_file(
        tmp_path, ONE.format(resource="x", expires='"2026-03-31"'))).waivers
    assert w.expires == date(2026, 3, 31)


@pytest.mark.parametrize(("key", "value"), [("owner", "42"), ("reason", "[a, b]"),
                                            ("owner", "{team: ml}"), ("reason", "true")])
def test_owner_and_reason_must_be_text(tmp_path: Path, key: str, value: str) -> None:
    text = ONE.format(resource="x", expires="2026-03-31").replace(
        f"    {key}: ", f"    {key}: {value}\n    old-{key}: ")
    text = "\n".join(line for line in text.splitlines() if "old-" not in line) + "\n"
    assert refused(tmp_path, text).startswith(
        f"waivers.yaml: waivers[0].{key}: expected a non-empty string, got ")


def test_a_blank_owner_waives_nothing(tmp_path: Path) -> None:
    text = ONE.format(resource="urn:*::big", expires="2026-03-31").replace(
        "owner: ml-platform", 'owner: "  "')
    result = run(tmp_path, text, date(2026, 3, 1))
    assert result.verdict == "fail"
    [(level, message)] = about_waivers(result)
    assert level == Enforcement.MANDATORY and "no owner" in message


def test_a_second_expires_is_refused_not_silently_taken(tmp_path: Path) -> None:
    text = ONE.format(resource="x", expires="2026-03-31") + "    expires: 2099-12-31\n"
    assert "key 'expires' appears twice" in refused(tmp_path, text)


# -- --today ---------------------------------------------------------------------------------


def test_check_today_judges_expiry_on_that_day(tmp_path: Path) -> None:
    waivers = waivers_file(tmp_path, "".join(
        f"  - id: W-{i}\n    policy: {p}\n    resource: 'aws_*'\n    owner: ml\n"
        f"    reason: bench\n    expires: 2026-03-31\n"
        for i, p in enumerate(("gpu-no-vertical-upsize", "gpu-smallest-instance",
                               "gpu-pool-scales-on-utilisation")))
        .join(["waivers:\n", ""]))
    base = ["check", str(TF_UPSIZE), "--waivers", waivers, "--format", "json"]
    last_day = run_in_process([*base, "--today", "2026-03-31"])
    assert last_day.code == 0, last_day.out
    assert run_in_process([*base, "--today", "2026-04-01"]).code == 1
    bad = run_in_process([*base, "--today", "31/03/2026"])
    assert bad.code == 2 and bad.err_lines == [
        "gpupool check: --today: expected a date YYYY-MM-DD, got '31/03/2026'"]
