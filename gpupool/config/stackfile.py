"""Where a stack's file is and what it holds.

STACK is a stack name of the Pulumi project in the working directory (``Pulumi.<name>.yaml`` in
the project's ``stackConfigDir``) or the path of a stack file; the file's ``config`` mapping is
the flat ``namespace:key`` mapping :func:`gpupool.config.loader.parse_flat_config` validates.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpupool.errors import InputError
from gpupool.yamlio import read_yaml


def display_path(path: Path, cwd: Path | None = None) -> str:
    """``path`` relative to ``cwd`` when under it, else as given: short, copy-pasteable lines."""
    try:
        return str(path.resolve().relative_to((cwd or Path.cwd()).resolve()))
    except (ValueError, OSError):
        return str(path)


def stack_path(stack: str, cwd: Path | None = None) -> Path:
    """STACK is a path to a stack file, or a stack name of the project in ``cwd``."""
    cwd = cwd or Path.cwd()
    candidate = Path(stack)
    if candidate.suffix in {".yaml", ".yml"} or "/" in stack:
        if not candidate.is_file():
            raise InputError(f"{stack}: expected a stack file, but there is no such file")
        return candidate
    project = find_project(cwd)
    if project is None:
        raise InputError(
            f"{stack}: expected a stack name of a Pulumi project, but there is no Pulumi.yaml "
            f"in {cwd} or above; name a stack file instead"
        )
    config_dir = project.parent / stack_config_dir(project)
    path = config_dir / f"Pulumi.{stack}.yaml"
    if not path.is_file():
        known = sorted(p.name[7:-5] for p in config_dir.glob("Pulumi.*.yaml"))
        raise InputError(
            f"{display_path(path, cwd)}: expected a stack file for stack {stack!r}, "
            f"but there is none (known stacks: {', '.join(known) or 'none'})"
        )
    return path


def find_project(cwd: Path) -> Path | None:
    """The ``Pulumi.yaml`` of the project ``cwd`` lies in (here or above), if any."""
    for d in (cwd, *cwd.resolve().parents):
        if (d / "Pulumi.yaml").is_file():
            return d / "Pulumi.yaml"
    return None


def stack_config_dir(project: Path) -> str:
    """The project's ``stackConfigDir`` (relative to its folder; ``.`` when not set)."""
    doc = read_yaml(project, display_path(project))
    value = doc.get("stackConfigDir", ".") if isinstance(doc, dict) else "."
    return str(value)


def read_stack_file(path: Path) -> dict[str, Any]:
    """The stack file's ``config`` mapping, flat ``namespace:key`` → value.

    Read with :func:`gpupool.yamlio.read_yaml`: duplicate keys, alias bombs, deep nesting,
    huge numbers and lone surrogates are each one line and exit 2, never a traceback.
    """
    shown = display_path(path)
    doc = read_yaml(path, shown)
    if not isinstance(doc, dict) or not isinstance(doc.get("config"), dict):
        raise InputError(f"{shown}: config: expected a mapping of Pulumi config keys")
    return dict(doc["config"])

