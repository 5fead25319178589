"""Find a stack file, read it, and validate it into a :class:`StackConfig`.

The same flat ``namespace:key`` mapping arrives from a stack file (values already parsed) and
from the Pulumi engine at ``pulumi up`` (object values as JSON strings), so both go through
:func:`parse_flat_config`. Every problem is reported at once, one line each, as
``file: key: expected …``: a user fixing a stack should not have to run the tool once per typo.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Annotated, Any, get_args

from pydantic import BaseModel, TypeAdapter, ValidationError

from gpupool import jsonio
from gpupool.catalog import Catalog, InstanceType, load_catalog
from gpupool.config import remote_gpu
from gpupool.config.models import (
    PATTERN_HINTS,
    GpuPoolConfig,
    NetworkConfig,
    StackConfig,
    duplicate_names,
    network_problems,
    size_problems,
)
from gpupool.config.remoting_keys import ProfileProblem, load_budget_profile
from gpupool.errors import InputError
from gpupool.yamlio import read_yaml

NAMESPACE = "gpupool"  # also the project name, so unqualified keys belong to it (as in Pulumi)
_REGION_KEY = "aws:region"
_AMD = ("g4ad", "radeon", "v520")  # g4ad carries AMD Radeon Pro V520 GPUs
# NVIDIA GPUs older than Turing, by architecture. Pools boot AWS's Deep Learning Base *OSS* NVIDIA
# Driver AMI: NVIDIA's open kernel modules drive Turing and newer GPUs only, and the AMI does not
# list P2, P3 or G3 among its supported instances. A pool of them would boot without a working
# driver and never publish GPU utilisation, so target tracking could never scale it.
PRE_TURING: dict[str, str] = {"v100": "Volta", "k80": "Kepler", "k520": "Kepler",
                              "m60": "Maxwell"}


@dataclass(frozen=True)
class LoadedStack:
    name: str
    path: Path
    config: StackConfig
    instance_types: dict[str, InstanceType]  # pool name → resolved smallest instance type
    flat: dict[str, Any]  # the namespaced config as Pulumi would pass it
    tiers: dict[str, remote_gpu.ResolvedTier] = field(default_factory=dict)  # remoteGpu by name

    @property
    def shown_path(self) -> str:
        """The path as a user would type it: relative to the cwd when the file lies under it."""
        return display_path(self.path)


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
    project = _find_project(cwd)
    if project is None:
        raise InputError(
            f"{stack}: expected a stack name of a Pulumi project, but there is no Pulumi.yaml "
            f"in {cwd} or above; name a stack file instead"
        )
    config_dir = project.parent / _stack_config_dir(project)
    path = config_dir / f"Pulumi.{stack}.yaml"
    if not path.is_file():
        known = sorted(p.name[7:-5] for p in config_dir.glob("Pulumi.*.yaml"))
        raise InputError(
            f"{display_path(path, cwd)}: expected a stack file for stack {stack!r}, "
            f"but there is none (known stacks: {', '.join(known) or 'none'})"
        )
    return path


def _find_project(cwd: Path) -> Path | None:
    for d in (cwd, *cwd.resolve().parents):
        if (d / "Pulumi.yaml").is_file():
            return d / "Pulumi.yaml"
    return None


def _stack_config_dir(project: Path) -> str:
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


def parse_flat_config(
    flat: Mapping[str, Any], source: str, catalog: Catalog | None = None,
    base_dir: Path | None = None,
    *, check_offerings: bool = False,
) -> tuple[StackConfig, dict[str, InstanceType]]:
    """Validate namespaced config; raise :class:`InputError` listing every problem.

    ``base_dir``: where files the config names (remote-GPU budget profiles) are looked for,
    the project folder; the working directory when not given, as under ``pulumi up``.

    ``check_offerings`` also holds each pool's instance type against the region's recorded
    offerings (``gpupool validate``, ``plan``, ``check``). The Pulumi program leaves it off: at
    ``pulumi up`` EC2 itself is asked which zones offer the types, and a recorded list must
    never refuse what AWS has since started offering.
    """
    catalog = catalog or load_catalog()
    data: dict[str, Any] = {}
    names: dict[str, str] = {}  # model key → the config key the user wrote
    problems: list[tuple[tuple[int, int], str]] = []
    order: dict[str, int] = {}
    broken: set[str] = set()  # keys already reported (bad JSON): no "missing" line for them
    for pos, (key, value) in enumerate(flat.items()):
        key = str(key)
        ns, sep, name = key.partition(":")
        if not sep:  # Pulumi puts unqualified keys in the project's namespace
            ns, name = NAMESPACE, key
        if key == _REGION_KEY:
            name = "region"
        elif ns != NAMESPACE or not name:
            close = difflib.get_close_matches(ns, [NAMESPACE], n=1, cutoff=0.7)
            if close and name:
                problems.append(
                    (
                        (pos, -1),
                        f"{source}: {key}: expected the {NAMESPACE} namespace "
                        f"(did you mean {NAMESPACE}:{name}?); other namespaces are ignored",
                    )
                )
            continue
        if isinstance(value, str) and value.lstrip()[:1] in ("[", "{"):
            try:  # the Pulumi engine hands structured values over as JSON text
                value = jsonio.loads(value)
            except json.JSONDecodeError as e:
                problems.append(
                    (
                        (pos, -1),
                        f"{source}: {key}: expected valid JSON for a structured value "
                        f"(line {e.lineno} column {e.colno}: {e.msg})",
                    )
                )
                broken.add(name)
                continue
            except jsonio.JsonProblem as e:  # NaN, a duplicate key, a 5,000-digit number, …
                problems.append(((pos, -1), f"{source}: {key}: {e}"))
                broken.add(name)
                continue
        data[name] = value
        names[name] = key
        order[name] = pos
    try:
        config: StackConfig | None = StackConfig.model_validate(data)
    except ValidationError as e:
        config = None
        for err in e.errors():
            loc = tuple(err["loc"])
            if err["type"] == "cross_field" or (loc and loc[0] in broken):
                continue  # cross-key checks are recomputed below for every pool
            problems.append((_sort_key(loc, order), _line(source, loc, names, err)))
        bad = {tuple(err["loc"]) for err in e.errors() if err["type"] != "cross_field"}
        for loc, expected in _cross_checks(data, bad):
            problems.append((_sort_key(loc, order), f"{source}: {_key(loc, names)}: {expected}"))
    pools = data.get("pools")
    resolved: dict[str, InstanceType] = {}
    for i, pool in enumerate(pools if isinstance(pools, list) else []):
        gpu, arch = _gpu_and_arch(pool, i, config)
        if gpu is None or arch is None:
            continue
        try:
            chosen = resolve_gpu(gpu, arch, catalog)
        except ValueError as e:
            loc = ("pools", i, "gpu")
            problems.append((_sort_key(loc, order), f"{source}: {_key(loc, names)}: {e}"))
            continue
        if isinstance(pool, dict) and isinstance(pool.get("name"), str):
            resolved[pool["name"].strip()] = chosen
    if config is not None:
        problems += _kubernetes_gpus(config, catalog, source, names, order)
        problems += _kubernetes_profiles(config, base_dir, source, names, order)
    for loc, expected in _tier_problems(data.get("remoteGpu"), config, catalog, base_dir):
        problems.append((_sort_key(loc, order), f"{source}: {_key(loc, names)}: {expected}"))
    if config is not None and check_offerings and not problems:
        for i, line in offering_problems(config, resolved, catalog):
            loc = ("pools", i, "gpu")
            problems.append((_sort_key(loc, order), f"{source}: {_key(loc, names)}: {line}"))
    if problems or config is None:
        problems.sort(key=lambda p: p[0])
        raise InputError([line for _, line in problems])
    return config, {p.name: resolved[p.name] for p in config.pools}


def _kubernetes_gpus(
    config: StackConfig, catalog: Catalog, source: str, names: Mapping[str, str],
    order: Mapping[str, int],
) -> list[tuple[tuple[int, int], str]]:
    """Karpenter pools launch EC2 instances: their GPU must resolve to a catalog type.

    On-premises pools name whatever GPU their nodes carry; it is shown, not looked up.
    """
    out = []
    for i, pool in enumerate(config.kubernetes):
        if pool.karpenter is None:
            continue
        try:
            resolve_gpu(pool.gpu, pool.arch, catalog)
        except ValueError as e:
            loc = ("kubernetes", i, "gpu")
            out.append((_sort_key(loc, order), f"{source}: {_key(loc, names)}: {e}"))
    return out


def _kubernetes_profiles(
    config: StackConfig, base_dir: Path | None, source: str, names: Mapping[str, str],
    order: Mapping[str, int],
) -> list[tuple[tuple[int, int], str]]:
    """A Kubernetes proxy's budget profile must be readable, as an AWS tier's must: the same
    file, the same one-line problem (the kit sizes nothing from it there, but a budget that
    names a broken profile is no budget)."""
    out = []
    for i, pool in enumerate(config.kubernetes):
        budget = pool.remote_gpu.budget if pool.remote_gpu is not None else None
        if budget is None or budget.profile is None:
            continue
        try:
            load_budget_profile(budget, base_dir)
        except ProfileProblem as e:
            loc = ("kubernetes", i, "remoteGpu", "budget", "profile")
            out.append((_sort_key(loc, order), f"{source}: {_key(loc, names)}: {e}"))
    return out


def resolve_tiers(
    config: StackConfig, catalog: Catalog | None = None, base_dir: Path | None = None
) -> dict[str, remote_gpu.ResolvedTier]:
    """Every remote-GPU tier of a valid stack, sized (see :mod:`gpupool.config.remote_gpu`);
    relative profile paths start at ``base_dir`` (the project folder; default: the cwd)."""
    catalog = catalog or load_catalog()
    return {
        t.name: remote_gpu.resolve_tier(t, resolve_gpu(t.gpu, t.arch, catalog), catalog,
                                        base_dir=base_dir)
        for t in config.remote_gpu
    }


def _tier_problems(
    raw: Any, config: StackConfig | None, catalog: Catalog, base_dir: Path | None
) -> list[tuple[tuple[Any, ...], str]]:
    """(location, expectation) for tiers whose GPU or budget cannot be met, checked on whatever
    is valid so that they show up together with every other error."""
    out: list[tuple[tuple[Any, ...], str]] = []
    for i, tier in enumerate(raw if isinstance(raw, list) else []):
        model: remote_gpu.RemoteGpuTierConfig | None = None
        if config is not None:
            model = config.remote_gpu[i]
        elif isinstance(tier, dict):
            try:  # a tier valid on its own is sized even when another key is wrong
                model = remote_gpu.RemoteGpuTierConfig.model_validate(tier)
            except ValidationError:
                model = None
        valid = _valid_fields(remote_gpu.RemoteGpuTierConfig, tier) if (
            model is None and isinstance(tier, dict)) else {}
        gpu = model.gpu if model is not None else valid.get("gpu")
        arch = model.arch if model is not None else valid.get("arch")
        if gpu is None or arch is None:
            continue
        try:
            smallest = resolve_gpu(gpu, arch, catalog)
        except ValueError as e:
            out.append((("remoteGpu", i, "gpu"), str(e)))
            continue
        if model is None:
            continue  # the budget is judged once the tier's own keys are valid
        try:
            remote_gpu.resolve_tier(model, smallest, catalog, base_dir=base_dir)
        except remote_gpu.TierProblem as e:
            out.append((("remoteGpu", i, *e.key.split(".")), e.expected))
    return out


def _gpu_and_arch(pool: Any, i: int, config: StackConfig | None) -> tuple[str | None, str | None]:
    """The pool's GPU and arch when both are valid, so a bad size never hides a bad GPU."""
    if config is not None:
        return config.pools[i].gpu, config.pools[i].arch
    if not isinstance(pool, dict):
        return None, None
    valid = _valid_fields(GpuPoolConfig, pool)
    return valid.get("gpu"), valid.get("arch")


def _cross_checks(data: dict[str, Any], bad: set[tuple[Any, ...]]) -> list[tuple[tuple, str]]:
    """Checks between keys, run on whatever values are individually valid.

    pydantic runs a model's own cross-key validators only when all of its fields are valid; these
    run regardless, so that min > max shows up together with a typo elsewhere in the pool.
    """
    out: list[tuple[tuple, str]] = []
    network = data.get("network")
    if isinstance(network, dict):
        v = _valid_fields(NetworkConfig, network, bad, ("network",))
        if {"create_vpc", "vpc_id", "subnet_ids"} <= v.keys():
            for key, expected in network_problems(v["create_vpc"], v["vpc_id"], v["subnet_ids"]):
                out.append((("network", key), expected))
    pools = data.get("pools")
    if not isinstance(pools, list):
        return out
    if not pools and not data.get("remoteGpu") and not data.get("kubernetes"):
        out.append((("pools",), "expected at least one pool (or a remoteGpu tier or kubernetes "
                                "pool), got none"))
    for i, pool in enumerate(pools):
        if not isinstance(pool, dict):
            continue
        v = _valid_fields(GpuPoolConfig, pool, bad, ("pools", i))
        if {"min_size", "max_size", "desired_capacity", "on_demand_base"} <= v.keys():
            problems = size_problems(
                v["min_size"], v["max_size"], v["desired_capacity"], v["on_demand_base"]
            )
            out.extend((("pools", i, key), expected) for key, expected in problems)
    raw_names = [p.get("name") if isinstance(p, dict) else None for p in pools]
    # unnamed pools get a placeholder that can never collide with a real name
    names = [n.strip() if isinstance(n, str) else f"\0{i}" for i, n in enumerate(raw_names)]
    for i, name in duplicate_names(names):
        out.append((("pools", i, "name"), f"expected a unique name, {name!r} is used twice"))
    out.extend(_tier_cross_checks(data.get("remoteGpu"), names, bad, data.get("network")))
    return out


def _tier_cross_checks(
    tiers: Any, pool_names: list[str], bad: set[tuple[Any, ...]], network: Any
) -> list[tuple[tuple, str]]:
    """Sizes and names of remote-GPU tiers (the checks pools get, across pools and tiers), and
    a tier's subnet: one of the stack's own subnets, and only with an existing VPC."""
    out: list[tuple[tuple, str]] = []
    if not isinstance(tiers, list):
        return out
    net = _valid_fields(NetworkConfig, network) if isinstance(network, dict) else {}
    for i, tier in enumerate(tiers):
        if not isinstance(tier, dict):
            continue
        v = _valid_fields(remote_gpu.RemoteGpuTierConfig, tier, bad, ("remoteGpu", i))
        subnet = v.get("subnet_id")
        if subnet is not None and net.get("create_vpc"):
            out.append((("remoteGpu", i, "subnetId"), "expected no subnetId when the stack "
                        "creates its VPC (the tier takes the first zone's subnet)"))
        elif subnet is not None and "subnet_ids" in net and subnet not in net["subnet_ids"]:
            out.append((("remoteGpu", i, "subnetId"), f"expected one of network.subnetIds "
                        f"({', '.join(net['subnet_ids'])}), got {subnet!r}"))
        if {"min_size", "max_size", "desired_capacity", "on_demand_base"} <= v.keys():
            problems = size_problems(
                v["min_size"], v["max_size"], v["desired_capacity"], v["on_demand_base"]
            )
            out.extend((("remoteGpu", i, key), expected) for key, expected in problems)
    raw = [t.get("name") if isinstance(t, dict) else None for t in tiers]
    names = [n.strip() if isinstance(n, str) else f"\1{i}" for i, n in enumerate(raw)]
    for i, name in duplicate_names(pool_names + names):
        if i >= len(pool_names):
            out.append((("remoteGpu", i - len(pool_names), "name"),
                        f"expected a name no pool or tier uses, {name!r} is"))
    return out


@cache
def _adapter(model: type[BaseModel], field: str) -> TypeAdapter[Any]:
    info = model.model_fields[field]
    if not info.metadata:
        return TypeAdapter(info.annotation)
    return TypeAdapter(Annotated[info.annotation, *info.metadata])


def _valid_fields(
    model: type[BaseModel],
    raw: dict[str, Any],
    bad: set[tuple[Any, ...]] | None = None,
    prefix: tuple[Any, ...] = (),
) -> dict[str, Any]:
    """Field name → validated value for each field of ``raw`` that is valid on its own.

    Absent fields take their defaults; fields named in ``bad`` (error locations) are left out.
    """
    out: dict[str, Any] = {}
    bad_keys = {
        loc[len(prefix)]
        for loc in (bad or set())
        if loc[: len(prefix)] == prefix and len(loc) > len(prefix)
    }
    for name, info in model.model_fields.items():
        alias = info.alias or name
        if alias in bad_keys:
            continue
        if alias not in raw and name not in raw:
            if not info.is_required():
                out[name] = info.get_default(call_default_factory=True)
            continue
        value = raw[alias] if alias in raw else raw[name]
        if isinstance(value, str):
            value = value.strip()
        try:
            out[name] = _adapter(model, name).validate_python(value)
        except ValidationError:
            continue
    return out


def _sort_key(loc: tuple[Any, ...], order: Mapping[str, int]) -> tuple[int, int]:
    """Problems in file order: by top-level key, then by pool."""
    top = order.get(str(loc[0]), len(order)) if loc else -1
    item = loc[1] if len(loc) > 1 and isinstance(loc[1], int) else -1
    return (top, item)


def _key(loc: tuple[Any, ...], names: Mapping[str, str]) -> str:
    """``('pools', 0, 'minSize')`` → ``gpupool:pools[0].minSize`` (as the user wrote the key)."""
    if not loc:
        return f"{NAMESPACE}:"
    head = str(loc[0])
    out = names.get(head) or (_REGION_KEY if head == "region" else f"{NAMESPACE}:{head}")
    for part in loc[1:]:
        if isinstance(part, int):
            out += f"[{part}]"
        else:  # user-written keys (tag names) may hold anything: keep the error on one line
            text = str(part)
            out += f".{text}" if text.isprintable() and text else f".{text!r}"
    return out


def _line(source: str, loc: tuple[Any, ...], names: Mapping[str, str], err: Any) -> str:
    return f"{source}: {_key(loc, names)}: {_expected(err, loc)}"


def _describe(value: Any) -> str:
    """A value as a YAML user would recognise it."""
    if value is None:
        return "null (no value)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _num(value: Any) -> str:
    """A bound as a person writes it: 1000000, not 1e+06; 0.05, not 0.050000000000000003."""
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else f"{value:g}"
    return str(value)


_KIND = {
    "string_type": "text",
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "list_type": "a list",
    "dict_type": "a mapping of keys to values",
    "model_type": "a mapping of keys to values",
    "model_attributes_type": "a mapping of keys to values",
}


def _expected(err: Mapping[str, Any], loc: tuple[Any, ...]) -> str:
    kind = err["type"]
    ctx = err.get("ctx") or {}
    got = _describe(err.get("input"))
    if kind == "extra_forbidden":
        known = _known_keys(loc[:-1])
        close = difflib.get_close_matches(str(loc[-1]), known, n=1, cutoff=0.6)
        if close:
            return f"expected a known key, not this one (did you mean {close[0]}?)"
        return f"expected a known key, not this one (known: {', '.join(known)})"
    if kind == "missing":
        return "expected a value: this key is required"
    if kind in _KIND:
        return f"expected {_KIND[kind]}, got {got}"
    if kind == "literal_error":
        return f"expected {ctx.get('expected')}, got {got}"
    if kind == "greater_than_equal":
        return f"expected at least {_num(ctx.get('ge'))}, got {got}"
    if kind == "less_than_equal":
        return f"expected at most {_num(ctx.get('le'))}, got {got}"
    if kind == "too_short":
        return f"expected at least {ctx.get('min_length')} item(s), got {ctx.get('actual_length')}"
    if kind == "too_long":
        return f"expected at most {ctx.get('max_length')} items, got {ctx.get('actual_length')}"
    if kind == "string_too_short":
        return f"expected at least {ctx.get('min_length')} character(s), got {got}"
    if kind == "string_too_long":
        return f"expected at most {ctx.get('max_length')} characters, got {got}"
    if kind == "string_pattern_mismatch":
        pattern = str(ctx.get("pattern"))
        return f"expected {PATTERN_HINTS.get(pattern, f'text matching {pattern}')}, got {got}"
    msg = str(err["msg"]).removeprefix("Value error, ")
    if kind == "value_error" and msg.startswith("expected"):
        return msg
    return f"expected a valid value ({msg[:1].lower()}{msg[1:]}), got {got}"


def _known_keys(loc: tuple[Any, ...]) -> list[str]:
    """The keys a user may write at ``loc`` (the aliases of the model found there)."""
    model: type[BaseModel] = StackConfig
    for part in loc:
        if isinstance(part, int):
            continue
        info = model.model_fields.get(str(part)) or next(
            (f for f in model.model_fields.values() if f.alias == part), None)
        found = _model_in(info.annotation) if info is not None else None
        if found is None:
            break
        model = found
    return [info.alias or name for name, info in model.model_fields.items()]


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The config model inside ``X``, ``X | None`` or ``list[X]``, if there is one."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def resolve_pool(pool: GpuPoolConfig, catalog: Catalog) -> InstanceType:
    """The smallest instance type that carries the pool's GPU model (or family) on its arch."""
    return resolve_gpu(pool.gpu, pool.arch, catalog)


def resolve_gpu(gpu: str, arch: str, catalog: Catalog) -> InstanceType:
    """The smallest whole-GPU type for a GPU model (T4, a10g) or family (g4dn) on ``arch``.

    Raises ``ValueError`` whose text says what was expected, for the caller to put after the key.
    """
    wanted = gpu.strip().casefold()
    if wanted.startswith(_AMD) or "radeon" in wanted:
        raise ValueError(
            f"expected an NVIDIA GPU, got {gpu!r}: g4ad carries AMD Radeon Pro V520 GPUs, and the "
            "NVIDIA driver, nvidia_gpu metrics and CUDA tooling the pool relies on do not apply"
        )
    gpu = gpu.strip()
    chosen = catalog.smallest_for(gpu, arch)
    if chosen is None:  # maybe a family name such as g4dn or g5g
        family = [t for t in catalog if t.family == wanted and not t.is_partitioned]
        on_arch = [t for t in family if t.arch == arch]
        if on_arch:
            chosen = catalog.smallest_for(on_arch[0].gpu_model, arch)
        elif family:
            raise ValueError(
                f"expected a GPU family available on {arch}, got {gpu!r}, which is "
                f"{family[0].arch} only (set arch: {family[0].arch})"
            )
    if chosen is None:
        elsewhere = [a for a in ("x86_64", "arm64") if a != arch and catalog.smallest_for(gpu, a)]
        if elsewhere:
            raise ValueError(
                f"expected a GPU model available on {arch}, got {gpu!r}, which is "
                f"{elsewhere[0]} only (set arch: {elsewhere[0]})"
            )
        models = [m for m in catalog.gpu_models() if catalog.smallest_for(m, arch)]
        close = difflib.get_close_matches(gpu, models, n=1, cutoff=0.5)
        hint = f"did you mean {close[0]}? " if close else ""
        raise ValueError(
            f"expected a GPU model or family available on {arch}, got {gpu!r} "
            f"({hint}models: {', '.join(models)}; or a family such as g4dn)"
        )
    if chosen.gpu_maker.upper() != "NVIDIA":
        raise ValueError(
            f"expected an NVIDIA GPU, got {chosen.gpu_maker} on {chosen.instance_type}"
        )
    generation = PRE_TURING.get(chosen.gpu_model.casefold())
    if generation is not None:
        raise ValueError(
            f"expected a Turing or newer NVIDIA GPU, got {gpu!r}: {chosen.instance_type} carries "
            f"{chosen.gpu_model} ({generation}), which the pools' image cannot drive (the Deep "
            "Learning Base OSS NVIDIA Driver AMI uses NVIDIA's open kernel modules, Turing and "
            "newer only), so the pool would never publish GPU utilisation; use T4 (g4dn), A10G "
            "(g5), L4 (g6) or newer"
        )
    return chosen


def offering_problems(
    config: StackConfig, resolved: Mapping[str, InstanceType], catalog: Catalog
) -> list[tuple[int, str]]:
    """(pool index, expectation) for pools whose instance type the region does not offer."""
    region = config.region
    offered = catalog.offered_in(region)
    if offered is None:
        return []  # not recorded: not checked (``gpupool validate`` says so)
    out = []
    for i, pool in enumerate(config.pools):
        itype = resolved[pool.name].instance_type
        if itype in offered:
            continue
        usable = sorted(
            (t for m in catalog.gpu_models()
             if (t := catalog.smallest_for(m, pool.arch)) is not None
             and t.instance_type in offered and t.gpu_maker.upper() == "NVIDIA"
             and m.casefold() not in PRE_TURING),
            key=lambda t: (t.price_per_gpu_hour or float("inf"), t.gpu_model))
        there = [f"{t.gpu_model} ({t.instance_type})" for t in usable[:4]]
        elsewhere = catalog.regions_offering(itype)
        instead = (f"use a GPU {region} offers ({', '.join(there)})" if there else
                   f"{region} offers no GPU of the catalog on {pool.arch}")
        out.append((i, (
            f"expected a GPU offered in {region}: {pool.gpu} resolves to {itype}, which "
            f"{region} does not offer (EC2 DescribeInstanceTypeOfferings); {instead}, or deploy "
            f"to a region that offers {itype} ({', '.join(elsewhere) or 'none recorded'})"
        )))
    return out


def offerings_note(config: StackConfig, catalog: Catalog | None = None) -> str:
    """One line for ``gpupool validate``: whether the region's offerings were checked."""
    catalog = catalog or load_catalog()
    offered = catalog.offered_in(config.region)
    source = (catalog.meta.get("offerings") or {})
    if offered is None:
        return (f"{config.region}: no recorded instance type offerings, so whether it offers "
                "the pools' types was not checked (python -m gpupool.catalog.offerings records "
                "them)")
    return (f"{config.region} offers every pool's instance type ({source.get('source', '?')}, "
            f"recorded {source.get('recorded_at', '?')})")


def load_stack(stack: str, cwd: Path | None = None) -> LoadedStack:
    """Find, read and validate a stack (a name or a file), resolving each pool's instance type
    and checking that the region offers it."""
    path = stack_path(stack, cwd)
    flat = read_stack_file(path)
    project = _find_project(path.resolve().parent)
    base_dir = project.parent if project is not None else path.parent
    config, resolved = parse_flat_config(flat, display_path(path, cwd), base_dir=base_dir,
                                         check_offerings=True)
    name = path.name.removeprefix("Pulumi.").removesuffix(".yaml").removesuffix(".yml")
    return LoadedStack(name=name, path=path, config=config, instance_types=resolved, flat=flat,
                       tiers=resolve_tiers(config, base_dir=base_dir))
