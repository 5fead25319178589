"""Read and validate a teams file; every problem at once, one line each, naming file and key."""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gpupool.catalog import Catalog, load_catalog
from gpupool.errors import InputError
from gpupool.teams.models import PATTERN_HINTS, Team, TeamsFile
from gpupool.yamlio import read_yaml

DEFAULT_NAME = "teams.yaml"  # in the project's stack config directory (stacks/)


@dataclass(frozen=True)
class Teams:
    path: str
    teams: Mapping[str, Team]

    def get(self, name: str) -> Team | None:
        return self.teams.get(name)

    def require(self, name: str) -> Team:
        team = self.teams.get(name)
        if team is None:
            close = difflib.get_close_matches(name, list(self.teams), n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise InputError(f"{self.path}: teams.{name}: no such team{hint}; known teams: "
                             f"{', '.join(sorted(self.teams))}")
        return team


def load_teams(path: str | Path, shown: str | None = None,
               catalog: Catalog | None = None) -> Teams:
    """The validated teams file (cached per path, size and modification time)."""
    p = Path(path)
    try:
        st = p.stat()
        key: tuple[Any, ...] = (str(p.resolve()), st.st_size, st.st_mtime_ns)
    except OSError:
        key = (str(p), -1, -1)
    return _load(key, str(path), shown or str(path), catalog)


@lru_cache(maxsize=16)
def _load(key: tuple[Any, ...], path: str, shown: str, catalog: Catalog | None) -> Teams:
    return parse_teams(read_yaml(path, shown), shown, catalog)


def parse_teams(doc: Any, shown: str, catalog: Catalog | None = None) -> Teams:
    if not isinstance(doc, Mapping) or "teams" not in doc:
        raise InputError(f"{shown}: expected a mapping with a 'teams' key (team name → owners, "
                         "costCenter, allowedGpus, gpuQuota, monthlyBudgetUsd)")
    problems = key_problems(doc, shown)
    try:
        parsed = TeamsFile.model_validate(doc)
    except ValidationError as e:
        raise InputError(problems + [f"{shown}: {_key(err['loc'])}: {_expected(err)}"
                                     for err in e.errors(include_url=False)]) from None
    if problems:
        raise InputError(problems)
    catalog = catalog or load_catalog()
    models = {m.casefold(): m for m in catalog.gpu_models()}
    for name, team in parsed.teams.items():
        for i, gpu in enumerate(team.allowed_gpus):
            if gpu.casefold() not in models:
                close = difflib.get_close_matches(gpu, list(models.values()), n=1, cutoff=0.5)
                hint = f"did you mean {close[0]}? " if close else ""
                problems.append(f"{shown}: teams.{name}.allowedGpus[{i}]: expected a GPU model "
                                f"of the catalog, got {gpu!r} ({hint}models: "
                                f"{', '.join(models.values())})")
    if problems:
        raise InputError(problems)
    return Teams(shown, dict(parsed.teams))


def key_problems(doc: Any, shown: str, where: str = "") -> list[str]:
    """Keys that are one key to the model but two to the file, one line each.

    The model strips whitespace from text, so ``"research "`` became ``research`` and silently
    replaced the team above it (its quota, GPUs and budget). A key with surrounding whitespace
    is refused, and keys that differ only in whitespace or case from an earlier one are
    duplicates, at every level of the file.
    """
    out: list[str] = []
    if isinstance(doc, Mapping):
        seen: dict[str, str] = {}
        what = "team name" if where == "teams" else "key"
        for key, value in doc.items():
            path = f"{where}.{_shown_key(key)}" if where else _shown_key(key)
            if isinstance(key, str):
                if key != key.strip():
                    out.append(f"{shown}: {path}: expected a {what} without surrounding "
                               f"whitespace, got {key!r}")
                folded = "".join(key.split()).casefold()
                if folded in seen:
                    first = f"{where}.{_shown_key(seen[folded])}" if where else seen[folded]
                    same = "name one team" if where == "teams" else "are one key"
                    out.append(f"{shown}: {path}: expected a {what} used once, but it differs "
                               f"from {first} only in case or whitespace, so the two {same}; "
                               "keep one")
                else:
                    seen[folded] = key
            out += key_problems(value, shown, path)
    elif isinstance(doc, list):
        for i, item in enumerate(doc):
            out += key_problems(item, shown, f"{where}[{i}]")
    return out


def _shown_key(key: object) -> str:
    """A key as it reads in a message: quoted when it has spaces or is not printable."""
    text = str(key)
    return text if text.isprintable() and text == "".join(text.split()) and text else repr(text)


def default_teams_path(stack_dir: Path) -> Path:
    return stack_dir / DEFAULT_NAME


def _key(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            text = str(part)
            if text == "[key]":
                continue
            out += ("." if out else "") + (text if text.isprintable() else repr(text))
    return out or "(top level)"


_KIND = {
    "int_type": "a whole number", "int_parsing": "a whole number",
    "int_from_float": "a whole number", "float_type": "a number", "float_parsing": "a number",
    "string_type": "text", "list_type": "a list", "dict_type": "a mapping",
    "model_type": "a mapping", "finite_number": "a finite number",
}


def _expected(err: Mapping[str, Any]) -> str:
    kind, ctx = err["type"], err.get("ctx") or {}
    got = err.get("input")
    shown = repr(got) if len(repr(got)) <= 60 else repr(got)[:57] + "..."
    if isinstance(got, Mapping):
        shown = "a mapping"
    elif isinstance(got, list):
        shown = "a list"
    if kind == "extra_forbidden":
        return ("expected a known key (owners, costCenter, allowedGpus, gpuQuota, "
                "monthlyBudgetUsd), not this one")
    if kind == "missing":
        return "expected a value: this key is required"
    if kind in _KIND:
        return f"expected {_KIND[kind]}, got {shown}"
    if kind == "literal_error":
        return f"expected an environment ({ctx.get('expected')}), got {shown}"
    if kind in ("greater_than_equal", "greater_than", "less_than_equal"):
        bound = {"greater_than_equal": f"at least {ctx.get('ge')}",
                 "greater_than": f"more than {ctx.get('gt')}",
                 "less_than_equal": f"at most {ctx.get('le')}"}[kind]
        return f"expected {bound}, got {shown}"
    if kind in ("too_short", "string_too_short"):
        return f"expected at least {ctx.get('min_length')} item(s), got {shown}"
    if kind in ("too_long", "string_too_long"):
        return f"expected at most {ctx.get('max_length')}, got {shown}"
    if kind == "string_pattern_mismatch":
        pattern = str(ctx.get("pattern"))
        return f"expected {PATTERN_HINTS.get(pattern, f'text matching {pattern}')}, got {shown}"
    msg = str(err["msg"]).removeprefix("Value error, ")
    return msg if msg.startswith("expected") else f"expected a valid value ({msg}), got {shown}"


def env_path(value: str | None) -> str | None:
    """A path from configuration: ``~`` and ``$VARS`` expanded (as the pack does for baselines)."""
    return None if value is None else os.path.expandvars(os.path.expanduser(value))
