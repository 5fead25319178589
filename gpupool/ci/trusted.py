"""What judges the pull request: the policy files from the base branch, and what it changes.

The policy config, waivers and teams file are taken **from the base branch** (``git show``), so
a pull request cannot weaken the rules that judge it; a file the PR changes is used as the base
has it, and the change is reported for its owners' review (CODEOWNERS), with the verdict the
PR's own version would give.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from pathlib import Path

from gpupool.ci.git import Git
from gpupool.ci.inputs import Inputs

# Paths whose change alters what judges a pull request (besides the config, waivers and teams).
GOVERNED = (".github/**", "action.yml", "CODEOWNERS", "policies/**")
_TEAM = re.compile(r"^[a-z][a-z0-9-]{0,30}[a-z0-9]$")  # a team name (gpupool.teams.models)


@dataclass
class Trusted:
    """The policy files the checks use, and what the pull request does to them."""

    args: list[str] = field(default_factory=list)  # --config/--waivers/--teams from the base
    head_args: list[str] = field(default_factory=list)  # the same from the PR's working tree
    changed: list[str] = field(default_factory=list)  # policy files this PR changes
    notes: list[str] = field(default_factory=list)

    def arg(self, flag: str) -> str | None:
        """The base branch's file given as ``flag`` (``--teams``), if any."""
        return self.args[self.args.index(flag) + 1] if flag in self.args else None

    def head_arg(self, flag: str) -> str | None:
        return self.head_args[self.head_args.index(flag) + 1] if flag in self.head_args else None


def trusted_files(i: Inputs, git: Git, cwd: Path, folder: Path,
                  changed: list[str] | None) -> Trusted:
    """The base branch's copies of the policy files (written into ``folder``)."""
    t = Trusted()
    folder.mkdir(parents=True, exist_ok=True)
    for flag, path in (("--config", i.config), ("--waivers", i.waivers), ("--teams", i.teams)):
        if not path:
            continue
        here = cwd / path
        head_exists = here.is_file()
        if head_exists:
            t.head_args += [flag, str(here)]
        if not i.policy_ref:  # no base (a push, a manual run): the checkout is trusted
            if head_exists:
                t.args += [flag, str(here)]
            continue
        text = git.show(i.policy_ref, git.repo_path(path))
        if text is None:
            if head_exists:
                t.changed.append(path)
                t.notes.append(f"`{path}` is new in this pull request: it is not applied "
                               "until it is merged")
            continue
        copy = folder / Path(path).name
        copy.write_text(text, encoding="utf-8")
        t.args += [flag, str(copy)]
        if changed is not None and git.repo_path(path) in changed:
            t.changed.append(path)
    if i.utilisation:  # data, not policy: taken as the workflow gives it
        t.args += ["--utilisation", i.utilisation]
        t.head_args += ["--utilisation", i.utilisation]
    return t


def governed_changes(changed: list[str], trusted: Trusted, git: Git,
                     more: list[str]) -> list[str]:
    """The changed files that decide what judges pull requests."""
    patterns = [*GOVERNED, *more]
    policy = {git.repo_path(p) for p in trusted.changed}
    return sorted({f for f in changed
                   if f in policy or any(fnmatch.fnmatch(f, p) for p in patterns)})


def new_teams(trusted: Trusted) -> list[str]:
    """Teams the pull request's teams file names and the base branch's does not (their first
    stacks fail team-gpu-quota until the teams change is merged: the comment says why)."""
    base, head = trusted.arg("--teams"), trusted.head_arg("--teams")
    if head is None or base == head:
        return []
    ours = _team_names(head)
    theirs = _team_names(base) if base is not None else set()
    if ours is None or theirs is None:
        return []
    return sorted(t for t in ours - theirs if _TEAM.match(t))  # only names a team may have


def _team_names(path: str) -> set[str] | None:
    from gpupool.errors import InputError
    from gpupool.yamlio import read_yaml

    try:
        doc = read_yaml(path)
    except InputError:
        return None  # broken: the checks report it
    teams = doc.get("teams") if isinstance(doc, dict) else None
    return {str(k) for k in teams} if isinstance(teams, dict) else None


def quota_setting(trusted: Trusted) -> object | None:
    """team-gpu-quota's entry of the base branch's config (mandatory when it has none); None
    when the base disables it."""
    path = trusted.arg("--config")
    if path is None:
        return "mandatory"
    from gpupool.errors import InputError
    from gpupool.yamlio import read_yaml

    try:
        doc = read_yaml(path)
    except InputError:
        return "mandatory"  # the per-stack checks report the broken config
    entry = doc.get("team-gpu-quota", "mandatory") if isinstance(doc, dict) else "mandatory"
    level = entry.get("enforcementLevel") if isinstance(entry, dict) else entry
    if level is None and isinstance(doc, dict) and isinstance(doc.get("all"), str):
        level = doc["all"]
    if level == "disabled":
        return None
    if isinstance(entry, dict):
        entry = {k: v for k, v in entry.items() if k not in ("teamsFile", "teams")}
        entry.setdefault("enforcementLevel", level or "mandatory")
        return entry
    return entry
