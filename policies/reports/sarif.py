"""``--format sarif``: SARIF 2.1.0 for GitHub code scanning (and any other SARIF viewer).

Choices a reader of the output should know:

- One run; ``tool.driver.rules`` are the evaluated policies (plus any id a finding names that the
  policy list lacks, so every ``ruleIndex`` resolves).
- Levels: a finding that blocks the check is ``error``; an advisory one ``warning``; an advisory
  "cannot verify" (value unknown until apply) is a ``note`` — it is reported, never a silent
  pass, but it is no proven violation. A "cannot verify" configured as mandatory blocks, so it
  is an ``error``.
- Message: the resources named as people read them (``dev-inference-asg
  (aws.autoscaling.Group)``; Terraform addresses as they are), then the finding. A finding with
  one cause on several resources (a group and its launch template) is one result naming all.
- Location: where a reviewer fixes it (:mod:`policies.reports.sarif_locations`). A Terraform
  finding points at the ``.tf`` file and line that declare the resource (``--tf-root DIR``, else
  the plan's directory, and its local modules), the plan entry as a related location; when the
  sources do not declare it, at the plan entry with a note saying why. For ``--stack``, the
  stack file, at the line of the key that sets the value (``gpupool:pools[0].minSize``, see
  ``gpupool.config.provenance``), the key the change since ``--base`` touched, or the pool
  entry. Paths are relative to ``root`` (the repository checkout, by default the working
  directory) under ``uriBaseId`` ``%SRCROOT%``. Every resource named is a logical location.
- ``partialFingerprints`` hash policy + resource, so GitHub keeps one alert per finding across
  runs even though plan files are regenerated and their line numbers move.
- Waived findings carry an external, accepted suppression with the waiver as justification.
- Rule errors are ``toolExecutionNotifications`` and make ``executionSuccessful`` false.
- GitHub rejects a run of more than 25,000 results: past that the least severe are left out
  (suppressed, then notes, then warnings) and a notification says how many.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from importlib.metadata import PackageNotFoundError, metadata
from pathlib import Path
from typing import Any, Final

from gpupool import __version__
from policies.reports import indented
from policies.reports._common import (
    policy_index,
    resource_names,
    stacks,
    waiver_justification,
)
from policies.reports.sarif_locations import Locator, address_lines
from policies.result import Result, RuleError, Violation
from policies.rules.params import Enforcement

SCHEMA_URI: Final = "https://json.schemastore.org/sarif-2.1.0.json"
FINGERPRINT_KEY: Final = "gpupoolFinding/v1"
GITHUB_MAX_RESULTS: Final = 25_000  # code scanning rejects a run with more
PRETTY_MAX_RESULTS: Final = 2_000

_LEVEL = {
    Enforcement.MANDATORY: "error",
    Enforcement.ADVISORY: "warning",
    Enforcement.DISABLED: "none",
}


def render(result: Result, *, root: Path | None = None, tf_root: Path | None = None) -> str:
    """Indented for people up to PRETTY_MAX_RESULTS results; compact past that, because
    indenting forces json's pure-Python encoder (about 0.5 s per thousand results)."""
    doc = to_sarif(result, root=root, tf_root=tf_root)
    if len(result.violations) <= PRETTY_MAX_RESULTS:
        return indented.dumps(doc) + "\n"
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False) + "\n"


def to_sarif(
    result: Result, *, root: Path | None = None, tf_root: Path | None = None,
    max_results: int = GITHUB_MAX_RESULTS,
) -> dict[str, Any]:
    base = (root or Path.cwd()).resolve()
    policies = policy_index(result)
    ids = list(policies)
    index = {pid: i for i, pid in enumerate(ids)}
    locator = Locator(base, tf_root)
    kept = _most_severe(result.violations, max_results)
    results = [_result(v, index, locator) for v in kept]
    invocation: dict[str, Any] = {
        "executionSuccessful": not result.errors,
        "exitCode": result.exit_code,
    }
    notifications = [_notification(e, index) for e in result.errors]
    omitted = len(result.violations) - len(kept)
    if omitted:
        notifications.append({
            "level": "warning",
            "message": {"text": f"{omitted} of {len(result.violations)} results left out, the "
                                f"least severe first, to stay within GitHub's limit of "
                                f"{max_results} results per run; the JSON report has all"},
        })
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "gpupool",
                "version": __version__,
                "semanticVersion": __version__,
                **_information_uri(),
                "rules": [_rule(policies[pid]) for pid in ids],
            }
        },
        "invocations": [invocation],
        "originalUriBaseIds": {"%SRCROOT%": {"uri": base.as_uri().rstrip("/") + "/"}},
        "columnKind": "unicodeCodePoints",
        "results": results,
        "properties": {
            "verdict": result.verdict,
            "resultsOmitted": omitted,
            "resourcesEvaluated": result.resources_evaluated,
            "sources": list(result.sources),
            "stacks": stacks(result),
        },
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def _information_uri() -> dict[str, str]:
    """The project's home page as the package declares it; SARIF makes it optional."""
    try:
        meta = metadata("gpupool")
    except PackageNotFoundError:
        return {}
    for entry in meta.get_all("Project-URL") or []:
        label, _, url = entry.partition(",")
        if label.strip().lower() in ("homepage", "home", "documentation", "source") and url:
            return {"informationUri": url.strip()}
    homes = meta.get_all("Home-page") or []
    return {"informationUri": str(homes[0])} if homes else {}


def _rule(policy: Mapping[str, Any]) -> dict[str, Any]:
    pid = str(policy["id"])
    title = str(policy.get("title") or pid)
    rationale = str(policy.get("rationale") or title)
    enforcement = _enforcement(policy.get("enforcement"))
    config: dict[str, Any] = {"level": _LEVEL.get(enforcement, "warning")} if enforcement else {}
    if enforcement is Enforcement.DISABLED:
        config = {"enabled": False, "level": "none"}
    rule: dict[str, Any] = {
        "id": pid,
        "name": "".join(part.capitalize() for part in re.split(r"[^A-Za-z0-9]+", pid) if part),
        "shortDescription": {"text": title},
        "fullDescription": {"text": rationale},
        "help": {"text": rationale, "markdown": f"**{title}**\n\n{rationale}"},
        "properties": {"tags": ["gpupool", "infrastructure"]},
    }
    if config:
        rule["defaultConfiguration"] = config
        rule["properties"]["enforcement"] = str(enforcement)
    return rule


def _enforcement(value: Any) -> Enforcement | None:
    try:
        return Enforcement(str(value))
    except ValueError:
        return None


def level(v: Violation) -> str:
    if v.enforcement is Enforcement.MANDATORY:
        return "error"
    return "note" if v.unknown else "warning"


def _most_severe(violations: Sequence[Violation], limit: int) -> list[Violation]:
    """At most ``limit`` findings, dropping suppressed, then notes, then warnings first;
    the kept ones stay in their original order."""
    if len(violations) <= limit:
        return list(violations)
    rank = {"error": 0, "warning": 1, "note": 2}

    def key(i: int) -> tuple[int, int]:
        v = violations[i]
        return (3 if v.waived_by is not None else rank[level(v)], i)

    keep = set(sorted(range(len(violations)), key=key)[:limit])
    return [v for i, v in enumerate(violations) if i in keep]


def fingerprint(policy: str, resource: str) -> str:
    return hashlib.sha256(f"{policy}\x00{resource}".encode()).hexdigest()[:32]


def _result(v: Violation, index: Mapping[str, int], locator: Locator) -> dict[str, Any]:
    location, related = locator.place(v)
    out: dict[str, Any] = {
        "ruleId": v.policy,
        "ruleIndex": index[v.policy],
        "level": level(v),
        "message": {"text": f"{resource_names(v)}: {v.message or v.policy}"},
        "locations": [location],
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint(v.policy, v.resource)},
        "properties": {
            "enforcement": str(v.enforcement),
            "blocking": v.blocking,
            "cannotVerify": v.unknown,
            "resourceType": v.resource_type,
            "source": v.source,
        },
    }
    if related:
        out["relatedLocations"] = related
    if v.waived_by is not None:
        out["suppressions"] = [
            {"kind": "external", "status": "accepted", "justification": waiver_justification(v)}
        ]
    return out


def _notification(e: RuleError, index: Mapping[str, int]) -> dict[str, Any]:
    message = f"{e.policy}: {e.message}" + (f" (resource {e.resource})" if e.resource else "")
    out: dict[str, Any] = {
        "level": "error",
        "message": {"text": message},
        "associatedRule": {"id": e.policy, "index": index[e.policy]},
    }
    if e.resource:
        out["locations"] = [
            {"logicalLocations": [{"fullyQualifiedName": e.resource, "kind": "resource"}]}
        ]
    return out


__all__ = ["SCHEMA_URI", "address_lines", "fingerprint", "level", "render", "to_sarif"]
