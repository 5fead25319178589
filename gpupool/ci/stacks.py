"""Which stacks a run checks, and the stack file names it refuses.

``changed`` (the default) checks the stacks whose files the pull request changes, and every
stack when the program, the kit or the teams file changes; ``all`` every stack; anything else
names them. A stack file whose name holds a control character is refused before anything runs:
its name would reach the step outputs, the comment and the logs, and no Pulumi stack is
named so.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from pathlib import Path

from gpupool.ci.git import Git
from gpupool.errors import InputError

# Paths whose change alters every stack's plan or quota: then every stack is checked.
PROGRAM = ("infra/**", "gpupool/**", "Pulumi.yaml", "pyproject.toml")
PREFIX, SUFFIX = "Pulumi.", ".yaml"


def stack_dir(cwd: Path) -> Path:
    """The project's stack config directory (``stacks/`` when there is no Pulumi.yaml)."""
    from gpupool.config.stackfile import find_project, stack_config_dir

    project = find_project(cwd)
    if project is None:
        return cwd / "stacks"
    return project.parent / stack_config_dir(project)


def is_stack_file(name: str) -> bool:
    return name.startswith(PREFIX) and name.endswith(SUFFIX) and len(name) > len(PREFIX + SUFFIX)


def stack_name(file_name: str) -> str:
    return file_name[len(PREFIX):-len(SUFFIX)]


def refuse_unprintable(paths: Iterable[str]) -> None:
    """InputError (one line) for the first stack file whose name is not printable text."""
    for path in paths:
        if not is_stack_file(Path(path).name):
            continue
        bad = next((c for c in path if not c.isprintable()), None)
        if bad is not None:
            shown = repr(path)[1:-1]
            raise InputError(f"{shown}: expected a stack file name without control characters, "
                             f"got U+{ord(bad):04X}; rename the file (Pulumi stack names are "
                             "letters, digits, '-', '_' and '.')")


class StackPicker:
    def __init__(self, git: Git, cwd: Path, wanted: str, teams: str) -> None:
        self.git = git
        self.cwd = cwd
        self.wanted = wanted
        self.teams = teams
        self.folder = stack_dir(cwd)

    def every(self) -> list[str]:
        files = sorted(p.name for p in self.folder.glob(f"{PREFIX}*{SUFFIX}"))
        where = (self.folder.relative_to(self.cwd) if self.folder.is_relative_to(self.cwd)
                 else self.folder)
        refuse_unprintable(str(where / f) for f in files)
        return [stack_name(f) for f in files]

    def pick(self, changed: list[str] | None) -> list[str]:
        if changed is not None:
            refuse_unprintable(changed)
        every = self.every()
        if self.wanted == "all" or (self.wanted == "changed" and changed is None):
            return every
        if self.wanted != "changed":
            return self.wanted.replace(",", " ").split()
        assert changed is not None
        rel = (self.git.repo_path(str(self.folder.relative_to(self.cwd)))
               if self.folder.is_relative_to(self.cwd) else str(self.folder))
        teams = self.git.repo_path(self.teams) if self.teams else None
        if any(any(fnmatch.fnmatch(f, p) for p in PROGRAM) for f in changed) or (
                teams in changed):
            return every
        out = []
        for f in changed:
            path = Path(f)
            if str(path.parent) == rel and is_stack_file(path.name):
                name = stack_name(path.name)
                if name in every:  # a stack the PR deletes has nothing left to check
                    out.append(name)
        return sorted(out)
