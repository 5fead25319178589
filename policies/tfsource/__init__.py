"""Where a planned Terraform resource is declared: the ``.tf`` file and line a reviewer edits.

A Terraform plan names resources by address (``module.pool["a"].aws_autoscaling_group.gpu[0]``);
SARIF viewers want a file and a line in the repository. The root module's sources are the
``.tf`` files of one directory (``gpupool check --tf-root DIR``, else the plan file's own
directory); a module's are those of the directory its call's ``source`` names (a local path,
``./modules/pool``, as the plan's ``configuration`` records it). Module calls from a registry or
git are not in the repository: their resources are located at the module block that calls them.
Files are parsed with python-hcl2 (:mod:`policies.tfsource.hcl`), each once.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path

from gpupool.record import Frozen
from policies.tfsource.hcl import Block, parse_blocks

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any

_ADDRESS = re.compile(
    r"^(?P<modules>(?:module\.[^.\[]+(?:\[(?:\"(?:[^\"\\]|\\.)*\"|[^\]]*)\])?\.)*)"
    r"(?P<data>data\.)?(?P<type>[^.\[]+)\.(?P<name>[^.\[]+)(?:\[.*\])?(?: \(deposed object .*\))?$")
_MODULE = re.compile(r"module\.([^.\[]+)")
_LOCAL = ("./", "../")

ModuleSources = Mapping[tuple[str, ...], str]  # module call path → its source as written
DynamicBlocks = Mapping[str, "tuple[str, ...] | None"]  # block name → its for_each's references


class Declared(Frozen):
    """Where a resource (and the argument a finding is about, when found) is written."""

    __slots__ = ("path", "line", "column", "key")

    path: Path
    line: int
    column: int
    key: str | None  # the argument or nested block pointed at ("instance_type")

    def __init__(self, path: Path, line: int, column: int, key: str | None = None) -> None:
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "line", line)
        object.__setattr__(self, "column", column)
        object.__setattr__(self, "key", key)


class NotFound(Frozen):
    """Why a resource could not be placed in the sources (said beside the plan location)."""

    __slots__ = ("reason",)

    reason: str

    def __init__(self, reason: str) -> None:
        object.__setattr__(self, "reason", reason)


def module_sources(plan_path: Path) -> dict[tuple[str, ...], str]:
    """Every module call's ``source`` in a plan's configuration (empty when unreadable)."""
    try:
        doc = json.loads(plan_path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return {}
    return module_sources_of(doc)


def module_sources_of(doc: Any) -> dict[tuple[str, ...], str]:
    """Every module call's ``source`` in a parsed plan's configuration."""
    out: dict[tuple[str, ...], str] = {}
    config = doc.get("configuration") if isinstance(doc, dict) else None
    _calls(config.get("root_module") if isinstance(config, dict) else None, (), out, 0)
    return out


def _calls(module: Any, path: tuple[str, ...], out: dict[tuple[str, ...], str], depth: int
           ) -> None:
    if not isinstance(module, dict) or depth > 32:
        return
    calls = module.get("module_calls")
    for name, call in (calls.items() if isinstance(calls, dict) else ()):
        if isinstance(call, dict) and isinstance(call.get("source"), str):
            out[(*path, name)] = call["source"]
            _calls(call.get("module"), (*path, name), out, depth + 1)


class TerraformSources:
    """The ``.tf`` files of a root module and its local modules, indexed on first use."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._dirs: dict[Path, dict[tuple[str, str, str], tuple[Path, Block]]] = {}
        self._manifest: dict[str, str] | None = None

    def has_sources(self) -> bool:
        return bool(self._index(self.root))

    def locate(self, address: str, prop: str | None, modules: ModuleSources
               ) -> Declared | NotFound:
        found = self._find(address, modules)
        if isinstance(found, (Declared, NotFound)):
            return found
        path, block = found
        spot = block.find(prop) if prop else None
        if spot is not None:
            return Declared(path, spot[0], spot[1], prop)
        return Declared(path, block.line, block.column)

    def dynamic_blocks(self, address: str, modules: ModuleSources) -> DynamicBlocks | None:
        """The ``dynamic`` blocks a resource's body writes (Terraform's JSON configuration
        leaves them out), by name, with what each one's ``for_each`` refers to (None: not
        readable); None when its source is not among these files."""
        found = self._find(address, modules, installed=True)
        if isinstance(found, (Declared, NotFound)):
            return None
        out: dict[str, tuple[str, ...] | None] = {}
        for b in found[1].blocks:
            if b.type == "dynamic" and b.labels:
                out[b.labels[0]] = None if b.labels[0] in out else b.for_each
        return out

    def _find(self, address: str, modules: ModuleSources, installed: bool = False
              ) -> tuple[Path, Block] | Declared | NotFound:
        """The resource's file and block; else where its module is called (a module from a
        registry or git, which a reviewer edits at its call), or why it is not found. With
        ``installed``, a registry or git module is read where ``terraform init`` put it
        (``.terraform/modules``), when it did."""
        m = _ADDRESS.match(address)
        if m is None:
            return NotFound(f"{address} is not a Terraform resource address")
        mode = "data" if m.group("data") else "resource"
        names = tuple(_MODULE.findall(m.group("modules")))
        directory = self.root
        for depth in range(len(names)):
            source = modules.get(names[: depth + 1])
            fetched = self._installed(names[: depth + 1]) if installed and source else None
            if fetched is not None:
                directory = fetched
                continue
            if source is None or not source.startswith(_LOCAL):
                call = self._call(directory, names[depth])
                where = f"module {'.'.join(names[: depth + 1])}"
                if call is not None:  # a registry or git module: its call is the place
                    return Declared(call[0], call[1].line, call[1].column, f"module.{names[depth]}")
                return NotFound(f"{where} is not declared under {directory}"
                                if source is None else f"{where} comes from {source}, "
                                "outside the repository")
            directory = (directory / source).resolve()
        found = self._index(directory).get((mode, m.group("type"), m.group("name")))
        if found is None:
            if not self._index(directory):
                return NotFound(f"no .tf files in {directory}")
            return NotFound(f"{mode} {m.group('type')}.{m.group('name')} is not declared in "
                            f"the .tf files of {directory}")
        return found

    def _installed(self, names: tuple[str, ...]) -> Path | None:
        """Where ``terraform init`` installed a module call (its ``modules.json`` manifest in
        the root's ``.terraform/modules``, keyed by the dotted call names), if it did."""
        if self._manifest is None:
            self._manifest = _read_manifest(self.root)
        where = self._manifest.get(".".join(names))
        return None if where is None else (self.root / where).resolve()

    def _call(self, directory: Path, name: str) -> tuple[Path, Block] | None:
        return self._index(directory).get(("module", name, ""))

    def _index(self, directory: Path) -> dict[tuple[str, str, str], tuple[Path, Block]]:
        found = self._dirs.get(directory)
        if found is not None:
            return found
        out: dict[tuple[str, str, str], tuple[Path, Block]] = {}
        try:
            files = sorted(p for p in directory.iterdir() if p.suffix == ".tf" and p.is_file())
        except OSError:
            files = []
        for path in files:
            for block in parse_blocks(path):
                if block.type in ("resource", "data") and len(block.labels) == 2:
                    out.setdefault((block.type, block.labels[0], block.labels[1]), (path, block))
                elif block.type == "module" and len(block.labels) == 1:
                    out.setdefault(("module", block.labels[0], ""), (path, block))
        self._dirs[directory] = out
        return out


def _read_manifest(root: Path) -> dict[str, str]:
    """``.terraform/modules/modules.json`` (``{"Modules": [{"Key", "Source", "Dir"}]}``, written by
    ``terraform init``): module key → directory relative to the root; empty when absent or
    not that shape."""
    try:
        doc = json.loads((root / ".terraform" / "modules" / "modules.json").read_bytes())
    except (OSError, ValueError, RecursionError):
        return {}
    entries = doc.get("Modules") if isinstance(doc, dict) else None
    return {e["Key"]: e["Dir"] for e in entries if isinstance(e, dict)
            and isinstance(e.get("Key"), str) and e["Key"] and isinstance(e.get("Dir"), str)
            } if isinstance(entries, list) else {}


def dynamic_blocks_reader(doc: Any, root: Path) -> Callable[[str], DynamicBlocks | None]:
    """For a Terraform plan whose root module's sources are in ``root``: resource address →
    the ``dynamic`` blocks its ``.tf`` source writes (None when not found). Files are parsed
    on the first question, each once."""
    sources = TerraformSources(root)
    modules: dict[tuple[str, ...], str] | None = None

    def dynamic_blocks(address: str) -> DynamicBlocks | None:
        nonlocal modules
        if modules is None:
            modules = module_sources_of(doc)
        return sources.dynamic_blocks(address, modules)

    return dynamic_blocks
