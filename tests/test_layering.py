"""The house's shape, held by a test: no import circles, dependencies point one way, small files.

MISSION.md asks for small modules, no import circles and the CLI as the only place that reaches
into ``policies`` and ``infra``; DESIGN.md ("Dependencies point one way") says ``infra`` and
``policies`` use ``gpupool`` core and the CLI imports them lazily. Review alone let five
circles and nine oversized files in; this test reads every module of ``gpupool/``,
``policies/`` and ``infra/`` with :mod:`ast` (nothing is imported) and refuses a new one.

What counts as "module A imports module B":

- every ``import`` statement of A, wherever it stands: at the top, in a function (a lazy
  import), under ``if TYPE_CHECKING:``. A lazy import changes *when* B is loaded (so that
  ``gpupool --help`` starts fast), not *that* A needs B: a circle through one is still two
  modules neither of which can be read, tested or moved without the other, and it becomes an
  import-time circle the day the import is hoisted. A type-only import is a dependency for the
  reader and the type checker alike. (Rule 2 below is where *when* matters.)
- ``from X import name`` depends on ``X`` (its ``__init__`` runs and ``name`` is looked up in
  it: a package ``__init__``'s re-export), and also on ``X.name`` when that is a module.
  ``import X.Y`` depends on ``X.Y``. The parent packages that Python initialises on the way are
  not counted: every submodule has them, and they are not what its author wrote.

The allow-lists below name what is still wrong today and who is fixing it. They only shrink:
an entry that no longer matches anything fails the test until it is removed, so each owner
removes theirs with the fix.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("gpupool", "policies", "infra")
MAX_LINES = 400
# The CLI: the one place that reaches into gpupool, policies and infra (lazily).
CLI_MODULES = ("gpupool.cli", "gpupool.commands")
PULUMI = ("pulumi", "pulumi_aws", "pulumi_kubernetes", "pulumi_policy")

# Import circles that exist today, each with the engineer removing it. A circle found later must
# lie within one of these (a half-fixed circle is smaller, never larger).
CYCLES_BEING_FIXED: dict[frozenset[str], str] = {
}

# Files over MAX_LINES today, each with the engineer splitting it.
OVERSIZED_BEING_SPLIT: dict[str, str] = {
}


@dataclass(frozen=True)
class Import:
    target: str  # the module named (dotted), resolved for relative imports
    line: int
    lazy: bool  # inside a function: runs when called, not when the module is imported
    type_only: bool  # under ``if TYPE_CHECKING:``: never runs


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out[name] = path
    return out


MODULES = _modules()


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _statements(body: list[ast.stmt], lazy: bool, type_only: bool
                ) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool, bool]]:
    """Every import statement under ``body``, with where it stands."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node, lazy, type_only
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield from _statements(node.body, True, type_only)
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            yield from _statements(node.body, lazy, True)
            yield from _statements(node.orelse, lazy, type_only)
        else:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.stmt):
                    yield from _statements([child], lazy, type_only)
                elif isinstance(child, ast.ExceptHandler | ast.match_case):
                    yield from _statements(child.body, lazy, type_only)


@cache
def imports_of(module: str) -> tuple[Import, ...]:
    path = MODULES[module]
    tree = ast.parse(path.read_text(), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[Import] = []
    for node, lazy, type_only in _statements(tree.body, False, False):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            targets = [base] + [f"{base}.{a.name}" for a in node.names
                                if f"{base}.{a.name}" in MODULES]
        found += [Import(t, node.lineno, lazy, type_only) for t in targets]
    return tuple(found)


def import_graph() -> dict[str, set[str]]:
    return {m: {i.target for i in imports_of(m) if i.target in MODULES and i.target != m}
            for m in MODULES}


def circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """Strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(frozenset(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def _path_through(component: frozenset[str], graph: dict[str, set[str]]) -> str:
    """One circle inside ``component``, as ``a -> b -> a``, for the failure message."""
    start = min(component)
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        node = frontier.pop(0)
        for child in sorted(graph[node] & component):
            if child == start:
                chain = [node]
                while chain[-1] != start:
                    chain.append(previous[chain[-1]])
                return " -> ".join([*reversed(chain), start])
            if child not in previous:
                previous[child] = node
                frontier.append(child)
    return ", ".join(sorted(component))


# --------------------------------------------------------------------------- the rules


def test_no_new_import_circle() -> None:
    graph = import_graph()
    new = []
    for component in circles(graph):
        if not any(component <= allowed for allowed in CYCLES_BEING_FIXED):
            new.append(f"{_path_through(component, graph)} (all of: "
                       f"{', '.join(sorted(component))})")
    assert not new, ("import circles (a lazy or TYPE_CHECKING import counts too; move what "
                     "both need into a module of its own):\n" + "\n".join(new))


def test_circle_allow_list_only_shrinks() -> None:
    found = circles(import_graph())
    stale = [f"{', '.join(sorted(allowed))} ({owner})"
             for allowed, owner in CYCLES_BEING_FIXED.items()
             if not any(component <= allowed for component in found)]
    assert not stale, ("these circles are gone: remove them from CYCLES_BEING_FIXED in "
                       "tests/test_layering.py:\n" + "\n".join(stale))


def _top(target: str) -> str:
    return target.partition(".")[0]


def _is_cli(module: str) -> bool:
    return any(module == c or module.startswith(c + ".") for c in CLI_MODULES)


def test_core_never_imports_pulumi_policies_or_infra() -> None:
    """gpupool core is the bottom layer: no Pulumi SDK, no policy engine, no infra program, not
    even lazily (a lazy import is still the dependency). Only the CLI reaches up, and lazily:
    ``gpupool --help`` and ``gpupool validate`` must not load them."""
    wrong = []
    for module in MODULES:
        if _top(module) != "gpupool":
            continue
        for imp in imports_of(module):
            top = _top(imp.target)
            if top not in (*PULUMI, "policies", "infra"):
                continue
            if _is_cli(module) and (imp.lazy or imp.type_only):
                continue
            where = ("at module level in the CLI (import it inside the command's function)"
                     if _is_cli(module) else "in gpupool core (only the CLI may)")
            wrong.append(f"{MODULES[module].relative_to(ROOT)}:{imp.line}: imports "
                         f"{imp.target} {where}")
    assert not wrong, "\n".join(wrong)


def test_policies_and_infra_never_import_each_other() -> None:
    """Both use gpupool core; the CLI is the only place that imports the two together."""
    wrong = [f"{MODULES[m].relative_to(ROOT)}:{i.line}: imports {i.target}"
             for m in MODULES if _top(m) in ("policies", "infra")
             for i in imports_of(m)
             if _top(i.target) in ("policies", "infra") and _top(i.target) != _top(m)]
    assert not wrong, "\n".join(wrong)


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines())


def test_modules_stay_small() -> None:
    over = [f"{p.relative_to(ROOT)}: {_lines(p)} lines" for p in MODULES.values()
            if _lines(p) > MAX_LINES
            and str(p.relative_to(ROOT)) not in OVERSIZED_BEING_SPLIT]
    assert not over, (f"modules over {MAX_LINES} lines (one job per module: split it):\n"
                      + "\n".join(over))


def test_size_allow_list_only_shrinks() -> None:
    stale = [f"{name} ({owner}): " + ("gone" if not (ROOT / name).exists()
                                      else f"{_lines(ROOT / name)} lines")
             for name, owner in OVERSIZED_BEING_SPLIT.items()
             if not (ROOT / name).exists() or _lines(ROOT / name) <= MAX_LINES]
    assert not stale, ("these files are within the cap now: remove them from "
                       "OVERSIZED_BEING_SPLIT in tests/test_layering.py:\n" + "\n".join(stale))


# --------------------------------------------------------------------------- the reader itself


@pytest.mark.parametrize(("source", "expected"), [
    ("import a.b", {("a.b", False, False)}),
    ("from . import x", {("gpupool.remoting", False, False)}),
    ("from .budget import y", {("gpupool.remoting.budget", False, False)}),
    ("from gpupool.remoting import replay, Profile",
     {("gpupool.remoting", False, False), ("gpupool.remoting.replay", False, False)}),
    ("def f():\n    import policies.engine", {("policies.engine", True, False)}),
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from infra import x",
     {("typing", False, False), ("infra", False, True)}),
    ("try:\n    import a\nexcept ImportError:\n    import b",
     {("a", False, False), ("b", False, False)}),
    ("class C:\n    def m(self):\n        from x import y", {("x", True, False)}),
], ids=["import", "relative-package", "relative-module", "from-package", "lazy",
        "type-checking", "try-except", "method"])
def test_reader_sees_every_kind_of_import(source: str, expected: set[tuple[str, bool, bool]],
                                          tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                          ) -> None:
    path = tmp_path / "assess.py"
    path.write_text(source + "\n")
    monkeypatch.setitem(MODULES, "gpupool.remoting.assess_probe", path)
    imports_of.cache_clear()
    try:
        got = {(i.target, i.lazy, i.type_only) for i in imports_of("gpupool.remoting.assess_probe")}
    finally:
        imports_of.cache_clear()
    assert got == expected


def test_circles_are_found_with_their_path() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert circles(graph) == [frozenset({"a", "b", "c"})]
    assert _path_through(frozenset({"a", "b", "c"}), graph) == "a -> b -> c -> a"
