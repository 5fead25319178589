"""Find a stack file, read it, and validate it into a :class:`StackConfig`.

The same flat ``namespace:key`` mapping arrives from a stack file (values already parsed) and
from the Pulumi engine at ``pulumi up`` (object values as JSON strings), so both go through
:func:`parse_flat_config`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from gpupool.catalog import Catalog, InstanceType, load_catalog
from gpupool.config.models import GpuPoolConfig, StackConfig
from gpupool.errors import InputError

NAMESPACE = "gpupool"
_REGION_KEY = "aws:region"


@dataclass(frozen=True)
class LoadedStack:
    name: str
    path: Path
    config: StackConfig
    instance_types: dict[str, InstanceType]  # pool name → resolved smallest instance type
    flat: dict[str, Any]  # the namespaced config as Pulumi would pass it


def stack_path(stack: str, cwd: Path | None = None) -> Path:
    """STACK is a path to a stack file, or a stack name of the project in ``cwd``."""
    cwd = cwd or Path.cwd()
    candidate = Path(stack)
    if candidate.suffix in {".yaml", ".yml"} or "/" in stack:
        if not candidate.is_file():
            raise InputError(f"{stack}: no such stack file")
        return candidate
    project = _find_project(cwd)
    if project is None:
        raise InputError(f"{cwd}: no Pulumi.yaml here or above; name a stack file instead")
    config_dir = project.parent / _stack_config_dir(project)
    path = config_dir / f"Pulumi.{stack}.yaml"
    if not path.is_file():
        known = sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in config_dir.glob("Pulumi.*.yaml"))
        raise InputError(f"{path}: no stack {stack!r} (known: {', '.join(known) or 'none'})")
    return path


def _find_project(cwd: Path) -> Path | None:
    for d in (cwd, *cwd.resolve().parents):
        if (d / "Pulumi.yaml").is_file():
            return d / "Pulumi.yaml"
    return None


def _stack_config_dir(project: Path) -> str:
    try:
        doc = yaml.safe_load(project.read_text()) or {}
    except yaml.YAMLError as e:
        raise InputError(f"{project}: not valid YAML ({_yaml_where(e)})") from None
    value = doc.get("stackConfigDir", ".") if isinstance(doc, dict) else "."
    return str(value)


def _yaml_where(e: yaml.YAMLError) -> str:
    mark = getattr(e, "problem_mark", None)
    problem = getattr(e, "problem", None) or "syntax error"
    return f"line {mark.line + 1}: {problem}" if mark is not None else problem


def read_stack_file(path: Path) -> dict[str, Any]:
    """The stack file's ``config`` mapping, flat ``namespace:key`` → value."""
    try:
        doc = yaml.safe_load(path.read_text())
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror})") from None
    except yaml.YAMLError as e:
        raise InputError(f"{path}: not valid YAML ({_yaml_where(e)})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("config"), dict):
        raise InputError(f"{path}: config: expected a mapping of Pulumi config keys")
    return dict(doc["config"])


def parse_flat_config(
    flat: Mapping[str, Any], source: str, catalog: Catalog | None = None
) -> tuple[StackConfig, dict[str, InstanceType]]:
    """Validate namespaced config; raise :class:`InputError` listing every problem."""
    catalog = catalog or load_catalog()
    data: dict[str, Any] = {}
    problems: list[str] = []
    for key, value in flat.items():
        ns, _, name = str(key).partition(":")
        if key == _REGION_KEY:
            data["region"] = value
        elif ns == NAMESPACE and name:
            if isinstance(value, str) and value[:1] in "[{":
                try:  # the Pulumi engine hands structured values over as JSON text
                    value = json.loads(value)
                except json.JSONDecodeError:
                    problems.append(f"{source}: {key}: expected JSON for a structured value")
            data[name] = value
    try:
        config = StackConfig.model_validate(data)
    except ValidationError as e:
        problems.extend(f"{source}: {_key_path(err['loc'])}: {_expected(err)}" for err in e.errors())
        raise InputError(problems) from None
    if problems:
        raise InputError(problems)
    resolved: dict[str, InstanceType] = {}
    for i, pool in enumerate(config.pools):
        try:
            resolved[pool.name] = resolve_pool(pool, catalog)
        except ValueError as e:
            problems.append(f"{source}: {NAMESPACE}:pools[{i}].gpu: {e}")
    if problems:
        raise InputError(problems)
    return config, resolved


def resolve_pool(pool: GpuPoolConfig, catalog: Catalog) -> InstanceType:
    """The smallest instance type that carries the pool's GPU model (or family) on its arch."""
    if pool.gpu.casefold().startswith("g4ad"):
        raise ValueError("g4ad carries AMD GPUs: the NVIDIA tooling the pool relies on does not apply")
    chosen = catalog.smallest_for(pool.gpu, pool.arch)
    if chosen is None:  # maybe a family name such as g4dn or g5g
        family = [
            t
            for t in catalog
            if t.family == pool.gpu.casefold() and t.arch == pool.arch and not t.is_partitioned
        ]
        if family:
            chosen = catalog.smallest_for(family[0].gpu_model, pool.arch)
    if chosen is None:
        models = [m for m in catalog.gpu_models() if catalog.smallest_for(m, pool.arch)]
        raise ValueError(
            f"expected a GPU model or family available on {pool.arch}, got {pool.gpu!r} "
            f"(models: {', '.join(models)})"
        )
    if chosen.gpu_maker.upper() != "NVIDIA":
        raise ValueError(f"{chosen.instance_type} carries {chosen.gpu_maker} GPUs; expected NVIDIA")
    return chosen


def load_stack(stack: str, cwd: Path | None = None) -> LoadedStack:
    path = stack_path(stack, cwd)
    flat = read_stack_file(path)
    config, resolved = parse_flat_config(flat, str(path))
    name = path.name.removeprefix("Pulumi.").removesuffix(".yaml").removesuffix(".yml")
    return LoadedStack(name=name, path=path, config=config, instance_types=resolved, flat=flat)


def _key_path(loc: tuple[Any, ...]) -> str:
    out = NAMESPACE
    for i, part in enumerate(loc):
        if isinstance(part, int):
            out += f"[{part}]"
        elif i == 0:
            out = _REGION_KEY if part == "region" else f"{NAMESPACE}:{part}"
        else:
            out += f".{part}"
    return out


def _expected(err: Mapping[str, Any]) -> str:
    kind = err["type"]
    got = err.get("input")
    if kind == "extra_forbidden":
        return "unknown key (check its spelling)"
    if kind == "missing":
        return "required key is missing"
    msg = str(err["msg"]).removeprefix("Value error, ")
    if kind in {"string_type", "int_type", "float_type", "bool_type", "list_type", "dict_type",
                "model_type", "int_parsing", "float_parsing", "bool_parsing"}:
        return f"{msg.lower()}, got {type(got).__name__} {got!r}"
    if kind == "literal_error":
        return f"{msg.lower()}, got {got!r}"
    return msg if kind == "value_error" else f"{msg}, got {got!r}"
