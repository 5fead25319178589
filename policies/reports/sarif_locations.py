"""Where a SARIF result points: the file and line a reviewer changes to fix the finding.

- Terraform: the ``.tf`` file and line that declare the resource (the argument the finding is
  about when the block writes it, such as ``instance_type`` or ``instance_requirements``), found
  in the root module's sources (``gpupool check --tf-root DIR``, else the plan's directory) and
  its local modules (:mod:`policies.tfsource`); the plan entry is a related location. When the
  sources do not declare it, the plan's entry, with a note saying why.
- The kit's stacks (``--stack``): the stack file, at the key that sets the value
  (``gpupool:pools[0].minSize``, :mod:`gpupool.config.provenance`); for a finding about no
  particular key, the key of the pool entry the change since ``--base`` touched; else the entry.
- Plans of other kinds: the line where the plan names the resource (one regex pass per file,
  skipped past 32 MiB); a manifest's own ``file:line``; line 1 when nothing better is known.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any, Final
from urllib.parse import quote

from gpupool.config.provenance import KeyLine, locate
from policies.result import Violation
from policies.tfsource import Declared, ModuleSources, TerraformSources, module_sources

MAX_SCAN_BYTES: Final = 32 * 1024 * 1024
MAX_PLAIN_SCAN_BYTES: Final = 1024 * 1024  # a plain search per finding: small files only
_TERRAFORM_MARKS: Final = (b'"format_version"', b'"resource_changes"', b'"terraform_version"')

Region = tuple[int, int]


class Locator:
    """Finding → physical and logical locations, with every file read once."""

    def __init__(self, root: Path, tf_root: Path | None = None) -> None:
        self.root = root
        self.tf_root = tf_root
        self._lines: dict[Path, dict[str, Region]] = {}
        self._artifacts: dict[str, tuple[str, Path | None]] = {}
        self._terraform: dict[Path, bool] = {}
        self._sources: dict[Path, TerraformSources] = {}
        self._modules: dict[Path, ModuleSources] = {}
        self._bases: dict[tuple[Path, str], str | None] = {}

    def place(self, v: Violation) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The finding's location, and its related locations (the plan entry of a resource
        located in its Terraform sources)."""
        source = v.source
        if source not in self._artifacts:
            self._artifacts[source] = self._artifact(source)
        uri, path = self._artifacts[source]
        region: Region = (1, 1)
        note: str | None = None
        related: list[dict[str, Any]] = []
        at = _FILE_LINE.match(source)
        if path is not None and at is not None and not Path(source).is_file():
            region = (int(at.group("line")), 1)  # a manifest's file:line (ResourceChange.origin)
        elif path is not None and path.suffix in (".yaml", ".yml") and _STACK_ORIGIN.match(source):
            key = self._stack_key(path, source, v)
            if key is not None:
                region, note = (key.line, key.column), f"set by {key.key}"
            else:
                region = self._plan_region(path, v.resource)
        elif path is not None:
            region = self._plan_region(path, v.resource)
            if self._is_terraform(path):
                declared, why = self._declared(path, v)
                if declared is not None:
                    related = [_related(uri, region)]
                    uri = self._uri(declared.path)
                    region = (declared.line, declared.column)
                    note = f"{v.resource}: {declared.key or 'declared'} here"
                else:
                    note = f"{why}; pointing at the plan (give --tf-root DIR for the sources)"
        out: dict[str, Any] = {
            "physicalLocation": {
                "artifactLocation": _artifact_location(uri, path is not None),
                "region": {"startLine": region[0], "startColumn": region[1]},
            },
            "logicalLocations": _logical(v),
        }
        if note:
            out["message"] = {"text": note}
        return out, related

    # -- Terraform sources

    def _is_terraform(self, path: Path) -> bool:
        known = self._terraform.get(path)
        if known is None:
            try:
                with path.open("rb") as f:
                    head = f.read(65536)
            except OSError:
                head = b""
            known = self._terraform[path] = head.lstrip()[:1] == b"{" and any(
                mark in head for mark in _TERRAFORM_MARKS)
        return known

    def _declared(self, plan: Path, v: Violation) -> tuple[Declared | None, str]:
        root = (self.tf_root or plan.parent).resolve()
        sources = self._sources.get(root)
        if sources is None:
            sources = self._sources[root] = TerraformSources(root)
        if not sources.has_sources():
            return None, f"no Terraform sources (*.tf) in {self._shown(root)}"
        modules: ModuleSources = {}
        if v.resource.startswith("module."):
            if plan not in self._modules:
                self._modules[plan] = module_sources(plan)
            modules = self._modules[plan]
        found = sources.locate(v.resource, v.prop, modules)
        if isinstance(found, Declared):
            return found, ""
        return None, found.reason.replace(str(root), self._shown(root))

    # -- stack files

    def _stack_key(self, path: Path, source: str, v: Violation) -> KeyLine | None:
        base = self._base_text(path, source)
        return locate(path, v.resource, v.prop, base=base)

    def _base_text(self, path: Path, source: str) -> str | None:
        """The stack file at ``--base REF`` (the origin says which), to tell what changed."""
        m = _BASE_REF.match(source)
        if m is None:
            return None
        key = (path, m.group("ref"))
        if key not in self._bases:
            try:
                done = subprocess.run(
                    ["git", "-C", str(path.parent), "show", f"{m.group('ref')}:./{path.name}"],
                    capture_output=True, timeout=30, check=False)
                self._bases[key] = (done.stdout.decode("utf-8", "replace")
                                    if done.returncode == 0 else None)
            except (OSError, subprocess.SubprocessError):
                self._bases[key] = None
        return self._bases[key]

    # -- plan files and URIs

    def _plan_region(self, path: Path, resource: str) -> Region:
        if path not in self._lines:
            self._lines[path] = address_lines(path)
        found = self._lines[path].get(resource)
        return found if found else _first_mention(path, resource)

    def _uri(self, full: Path) -> str:
        try:
            return quote(full.resolve().relative_to(self.root).as_posix())
        except ValueError:
            return full.resolve().as_uri()

    def _shown(self, directory: Path) -> str:
        try:
            return directory.relative_to(self.root).as_posix() or "."
        except ValueError:
            return str(directory)

    def _artifact(self, source: str) -> tuple[str, Path | None]:
        """A URI for the plan: repo-relative when the file is inside root, else absolute."""
        path = Path(source) if source else None
        if path is not None and path.is_file():
            full = path.resolve()
            return self._uri(full), full
        at = _FILE_LINE.match(source)
        if at is not None and Path(at.group("file")).is_file():
            return self._artifact(at.group("file"))
        stack_file = _stack_file(source)
        if stack_file is not None:
            return self._artifact(str(stack_file))
        # Not a file ("crossguard", a stack file since removed): named, encoded as a reference.
        return quote(source or "plan", safe="/@.-_~"), None


def _artifact_location(uri: str, is_file: bool) -> dict[str, Any]:
    artifact: dict[str, Any] = {"uri": uri}
    if is_file and not uri.startswith("file:"):
        artifact["uriBaseId"] = "%SRCROOT%"
    return artifact


def _related(uri: str, region: Region) -> dict[str, Any]:
    return {"id": 1, "physicalLocation": {
                "artifactLocation": _artifact_location(uri, True),
                "region": {"startLine": region[0], "startColumn": region[1]}},
            "message": {"text": "the planned change"}}


def _logical(v: Violation) -> list[dict[str, Any]]:
    logical = []
    for r in v.resources:
        entry: dict[str, Any] = {"fullyQualifiedName": r.address, "kind": "resource"}
        if r.type:
            entry["decoratedName"] = r.type
        logical.append(entry)
    return logical


_FILE_LINE = re.compile(r"^(?P<file>.+):(?P<line>[0-9]+)$")
_STACK_ORIGIN = re.compile(r"^stack (?P<stack>.+?)(?: \(working tree\)| @ \S+)$")
_BASE_REF = re.compile(r"^stack .+? @ (?P<ref>\S+?)\.\.worktree$")


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


def _first_mention(path: Path, needle: str) -> Region:
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


def address_lines(path: Path) -> dict[str, Region]:
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
    found: dict[str, Region] = {}
    preferred: dict[str, Region] = {}
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
