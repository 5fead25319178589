"""Old and new inputs without a cloud account: diff two offline plans of a stack by URN.

``gpupool check --stack S --base REF`` plans the stack at the git ref and in the working tree
and compares them: a URN only in the working tree is a CREATE, one only at the ref a DELETE,
one in both an UPDATE when its inputs differ and a NO-OP when they do not. Offline plans cannot
tell which input changes force a replacement (that needs the provider's schema), so changed
resources are UPDATEs with old and new inputs, which is what the rules need.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from gpupool.errors import InputError
from policies.model import ChangeKind, Plan, ResourceChange, resource_kind
from policies.sources import offline
from policies.sources.gitplan import PlanRun, repo_root, resolve_commit, worktree
from policies.sources.reading import problem


def diff_offline_plans(base: dict[str, Any] | None, head: dict[str, Any], origin: str) -> Plan:
    """Changes from ``base`` to ``head`` (both offline plan documents; no base: all creates)."""
    new = offline.read(head, f"{origin} (head)")
    old = offline.read(base, f"{origin} (base)") if base is not None else None
    before = {r.urn: r for r in old.resources} if old is not None else {}
    changes: list[ResourceChange] = []
    for r in new.resources:
        prior = before.pop(r.urn, None)
        if prior is None:
            changes.append(offline.change(r, ChangeKind.CREATE, None))
        else:
            kind = ChangeKind.NOOP if prior.inputs == r.inputs else ChangeKind.UPDATE
            changes.append(offline.change(r, kind, prior.inputs))
    for r in before.values():  # left in base only: removed from the stack
        changes.append(
            ResourceChange(
                address=r.urn,
                type=r.type,
                name=r.name,
                change=ChangeKind.DELETE,
                new=None,
                old=r.inputs,
                source=offline.SOURCE,
                kind=resource_kind(r.type),
                references=r.references,
                parent=r.parent,
            )
        )
    meta = dict(new.meta)
    if old is not None:
        meta["base_envelope"] = old.meta.get("envelope")
    return Plan(source=offline.SOURCE, origin=origin, changes=tuple(changes), meta=meta)


def plan_stack(stack: str, *, base: str | None, cwd: Path) -> Plan:
    """The normalised plan of ``gpupool check --stack STACK [--base GIT_REF]``.

    Without ``base``: the working tree's offline plan (everything a create). With it: the
    diff from the plan at the ref to the working tree's; a stack file missing at the ref means
    an empty base (everything a create). The two plans run in parallel.
    """
    return plan_stacks([stack], base=base, cwd=cwd)[0]


def plan_stacks(stacks: Sequence[str], *, base: str | None, cwd: Path) -> list[Plan]:
    """:func:`plan_stack` for several stacks at once (``--stack A --stack B``): every plan runs
    in parallel, and the ref is checked out once for all of them."""
    cwd = cwd.resolve()
    if base is None:
        origins = [f"stack {s} (working tree)" for s in stacks]
        with ExitStack() as cleanup:
            runs = [cleanup.enter_context(PlanRun(s, cwd, cwd, o))
                    for s, o in zip(stacks, origins, strict=True)]
            docs = _results(runs)
            return [diff_offline_plans(None, d, o) for d, o in zip(docs, origins, strict=True)]
    repo = repo_root(cwd, base).resolve()
    commit = resolve_commit(repo, base)
    at_ref = [_stack_at_ref(s, cwd, repo) for s in stacks]
    # Exits run last-in first-out: the ref's plans are stopped before its worktree is removed,
    # and nothing (run, worktree, temporary directory) outlives an error or a signal.
    with ExitStack() as cleanup:
        heads = [cleanup.enter_context(PlanRun(s, cwd, repo, f"stack {s} (working tree)"))
                 for s in stacks]
        tree = cleanup.enter_context(worktree(repo, commit))
        bases: list[PlanRun | None] = []
        for s, (ref_stack, ref_file) in zip(stacks, at_ref, strict=True):
            if not (tree / ref_file).is_file():
                bases.append(None)  # the stack did not exist at the ref
                continue
            ref_cwd = tree / cwd.relative_to(repo)
            stack_arg = str(tree / ref_stack) if ref_stack is not None else s
            bases.append(cleanup.enter_context(
                PlanRun(stack_arg, ref_cwd, tree, f"stack {s} @ {base}")))
        head_docs = _results(heads)  # every stack's problems at once, the working tree's first
        base_docs = _results(bases)
    return [diff_offline_plans(b, h, f"stack {s} @ {base}..worktree")
            for s, b, h in zip(stacks, base_docs, head_docs, strict=True)]


def _results(runs: Sequence[PlanRun | None]) -> list[Any]:
    """Each run's plan document (None for no run), or one InputError with every run's
    problems: a check of several stacks reports all that is wrong, not the first stack's."""
    docs: list[Any] = []
    problems: list[str] = []
    for run in runs:
        try:
            docs.append(None if run is None else run.result())
        except InputError as e:
            problems += e.problems
    if problems:
        raise InputError(problems)
    return docs


def _stack_at_ref(stack: str, cwd: Path, repo: Path) -> tuple[Path | None, Path]:
    """(the stack path relative to the repo if STACK is a path, else None; the stack file
    relative to the repo), so both can be found inside the ref's worktree."""
    from gpupool.config import stack_path

    as_path = Path(stack)
    is_path = as_path.suffix in {".yaml", ".yml"} or "/" in stack
    if is_path:
        file = as_path if as_path.is_absolute() else cwd / as_path
        if not file.is_file():
            raise problem(f"{stack}: expected a stack file, but there is no such file")
    else:
        file = stack_path(stack, cwd)
    try:
        rel = file.resolve().relative_to(repo)
    except ValueError:
        raise problem(
            f"{stack}: expected a stack file inside the git repository {repo}, "
            "so that it has a version at the base ref"
        ) from None
    return (rel if is_path else None), rel
