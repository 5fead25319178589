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
- Location: the plan file the finding came from, relative to ``root`` (the repository checkout,
  by default the working directory) under ``uriBaseId`` ``%SRCROOT%``. For ``--stack``, the
  stack file, at the line of the key that sets the value (``gpupool:pools[0].minSize``, see
  ``gpupool.config.provenance``) or of the pool entry. In a plan file, the line where the plan
  names the resource when that is cheap to find (one regex pass per plan file, skipped for files
  over 32 MiB); otherwise line 1. Every resource named is a logical location.
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
from urllib.parse import quote

from gpupool import __version__
from gpupool.config.provenance import locate
from policies.reports._common import (
    policy_index,
    resource_names,
    stacks,
    waiver_justification,
)
from policies.result import Result, RuleError, Violation
from policies.rules.base import Enforcement

SCHEMA_URI: Final = "https://json.schemastore.org/sarif-2.1.0.json"
FINGERPRINT_KEY: Final = "gpupoolFinding/v1"
GITHUB_MAX_RESULTS: Final = 25_000  # code scanning rejects a run with more
PRETTY_MAX_RESULTS: Final = 2_000
MAX_SCAN_BYTES: Final = 32 * 1024 * 1024
MAX_PLAIN_SCAN_BYTES: Final = 1024 * 1024  # a plain search per finding: small files only

_LEVEL = {
    Enforcement.MANDATORY: "error",
    Enforcement.ADVISORY: "warning",
    Enforcement.DISABLED: "none",
}


def render(result: Result, *, root: Path | None = None) -> str:
    """Indented for people up to PRETTY_MAX_RESULTS results; compact past that, because
    indenting forces json's pure-Python encoder (about 0.5 s per thousand results)."""
    doc = to_sarif(result, root=root)
    if len(result.violations) <= PRETTY_MAX_RESULTS:
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False) + "\n"


def to_sarif(
    result: Result, *, root: Path | None = None, max_results: int = GITHUB_MAX_RESULTS
) -> dict[str, Any]:
    base = (root or Path.cwd()).resolve()
    policies = policy_index(result)
    ids = list(policies)
    index = {pid: i for i, pid in enumerate(ids)}
    locator = _Locator(base)
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


def _result(v: Violation, index: Mapping[str, int], locator: _Locator) -> dict[str, Any]:
    out: dict[str, Any] = {
        "ruleId": v.policy,
        "ruleIndex": index[v.policy],
        "level": level(v),
        "message": {"text": f"{resource_names(v)}: {v.message or v.policy}"},
        "locations": [locator.location(v)],
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint(v.policy, v.resource)},
        "properties": {
            "enforcement": str(v.enforcement),
            "blocking": v.blocking,
            "cannotVerify": v.unknown,
            "resourceType": v.resource_type,
            "source": v.source,
        },
    }
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


class _Locator:
    """Plan file → artifact URI and the line each resource address sits on (cached per file)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._lines: dict[Path, dict[str, tuple[int, int]]] = {}
        self._artifacts: dict[str, tuple[str, Path | None]] = {}

    def location(self, v: Violation) -> dict[str, Any]:
        source, resource = v.source, v.resource
        if source not in self._artifacts:
            self._artifacts[source] = self._artifact(source)
        uri, path = self._artifacts[source]
        line, column, note = 1, 1, None
        at = _FILE_LINE.match(source)
        if path is not None and at is not None and not Path(source).is_file():
            line = int(at.group("line"))  # a manifest's file:line (ResourceChange.origin)
        elif path is not None:
            key = (locate(path, resource, v.prop) if path.suffix in (".yaml", ".yml")
                   and _STACK_ORIGIN.match(source) else None)
            if key is not None:  # the stack file line that sets the value
                line, column = key.line, key.column
                note = f"set by {key.key}"
            else:
                if path not in self._lines:
                    self._lines[path] = address_lines(path)
                found = self._lines[path].get(resource)
                line, column = found if found else _first_mention(path, resource)
        artifact: dict[str, Any] = {"uri": uri}
        if path is not None and not uri.startswith("file:"):
            artifact["uriBaseId"] = "%SRCROOT%"
        logical = []
        for r in v.resources:
            entry: dict[str, Any] = {"fullyQualifiedName": r.address, "kind": "resource"}
            if r.type:
                entry["decoratedName"] = r.type
            logical.append(entry)
        out: dict[str, Any] = {
            "physicalLocation": {
                "artifactLocation": artifact,
                "region": {"startLine": line, "startColumn": column},
            },
            "logicalLocations": logical,
        }
        if note:
            out["message"] = {"text": note}
        return out

    def _artifact(self, source: str) -> tuple[str, Path | None]:
        """A URI for the plan: repo-relative when the file is inside root, else absolute."""
        path = Path(source) if source else None
        if path is not None and path.is_file():
            full = path.resolve()
            try:
                return quote(full.relative_to(self.root).as_posix()), full
            except ValueError:
                return full.as_uri(), full
        at = _FILE_LINE.match(source)
        if at is not None and Path(at.group("file")).is_file():
            return self._artifact(at.group("file"))
        stack_file = _stack_file(source)
        if stack_file is not None:
            return self._artifact(str(stack_file))
        # Not a file ("crossguard", a stack file since removed): named, encoded as a reference.
        return quote(source or "plan", safe="/@.-_~"), None


_FILE_LINE = re.compile(r"^(?P<file>.+):(?P<line>[0-9]+)$")
_STACK_ORIGIN = re.compile(r"^stack (?P<stack>.+?)(?: \(working tree\)| @ \S+)$")


def _stack_file(source: str) -> Path | None:
    """The stack file behind a ``--stack`` origin ("stack dev @ main..worktree"), so that
    GitHub links the finding to the file a pull request changed. STACK is a path or a name
    (``stacks/Pulumi.<name>.yaml`` of the project in the working directory)."""
    m = _STACK_ORIGIN.match(source)
    if m is None:
        return None
    stack = m.group("stack")
    for candidate in (Path(stack), Path("stacks") / f"Pulumi.{stack}.yaml"):
        try:
            if candidate.is_file():
                return candidate
        except OSError:
            continue
    return None


def _first_mention(path: Path, needle: str) -> tuple[int, int]:
    """Line/column of the first plain mention (a waiver id in a YAML file); small files only."""
    try:
        if not needle or path.stat().st_size > MAX_PLAIN_SCAN_BYTES:
            return 1, 1
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return 1, 1
    at = text.find(needle)
    if at < 0:
        return 1, 1
    line_start = text.rfind("\n", 0, at) + 1
    return text.count("\n", 0, at) + 1, at - line_start + 1


_ADDRESS = re.compile(rb'"(?:address|urn)"\s*:\s*"((?:[^"\\]|\\.)*)"')


def address_lines(path: Path) -> dict[str, tuple[int, int]]:
    """First (line, column) of every ``"address"``/``"urn"`` value, in one linear pass.

    Terraform plans name a resource first in ``planned_values``; the entry a reviewer wants is
    in ``resource_changes``, so occurrences after that key win. Columns count code points
    (``columnKind``); the running counts keep a one-line minified plan linear too.
    """
    try:
        if path.stat().st_size > MAX_SCAN_BYTES:
            return {}
        data = path.read_bytes()
    except OSError:
        return {}
    start = data.find(b'"resource_changes"')
    found: dict[str, tuple[int, int]] = {}
    preferred: dict[str, tuple[int, int]] = {}
    line, column, pos = 1, 1, 0
    for m in _ADDRESS.finditer(data):
        offset = m.start()
        newlines = data.count(b"\n", pos, offset)
        if newlines:
            line += newlines
            pos = data.rfind(b"\n", pos, offset) + 1
            column = 1
        # Every match starts at an ASCII quote, so the slice decodes on character boundaries.
        column += len(data[pos:offset].decode("utf-8", "replace"))
        pos = offset
        try:
            value = json.loads(b'"' + m.group(1) + b'"')
        except ValueError:
            continue
        if isinstance(value, str):
            target = preferred if 0 <= start < offset else found
            target.setdefault(value, (line, column))
    return {**found, **preferred}
