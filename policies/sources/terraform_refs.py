"""Link Terraform resources through the plan's ``configuration`` expressions.

A scaling policy's ``autoscaling_group_name`` is often unknown at plan time (the group's name is
computed), so its value cannot say which group it scales. The configuration can: its expression
carries ``references: ["aws_autoscaling_group.gpu.name", "aws_autoscaling_group.gpu"]``. This
module turns those into ``ResourceChange.references``: input key path → address in the plan.

What it does, precisely:

- Key paths follow the input structure: ``autoscaling_group_name``, ``launch_template.id``,
  ``mixed_instances_policy.launch_template.launch_template_specification.launch_template_id``.
  A nested block written once has no index in the path; a block repeated *n* > 1 times is
  written ``override[i].…`` so that two overrides never share a path.
- References are resolved in the referring resource's module instance, so a reference inside
  ``module.pool["a"]`` points at ``module.pool["a"].aws_…``. ``var.x`` inside a module follows the
  module call's argument in the parent module; ``module.m.out`` follows the output's expression
  into the called module (both to a bounded depth).
- count/for_each: an explicit key in the reference (``aws_x.y[0]``) is used as written.
  Without one, a target with a single instance maps to it; a target with several instances maps
  to the instance with the referring resource's own key (the usual ``[count.index]`` /
  ``[each.key]`` pattern) when the reference is direct; otherwise to the resource address
  without a key (``aws_x.y``, which Terraform reads as "all instances"): ambiguous, not guessed.
- An expression that references more than one resource (``coalesce(a.name, b.name)``) gets no
  link: a wrong link could let a rule pass, a missing one makes it say "cannot verify".
"""

from __future__ import annotations

from gpupool.record import Frozen, Record
from policies.sources.reading import fail, want_list, want_obj, want_str
from policies.sources.tfaddr import (
    ModuleOutputRef,
    Ref,
    ResourceRef,
    Segment,
    VarRef,
    module_prefix,
    parse_ref,
)

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any, Final

_EXPRESSION_KEYS: Final = frozenset({"constant_value", "references"})
# References whose values Terraform knows when it plans (each.value may hold unknown values).
_KNOWN_AT_PLAN: Final = frozenset({"count.index", "each.key", "terraform.workspace"})
_KNOWN_PREFIXES: Final = ("path.",)
_MAX_DEPTH: Final = 16  # var → module output → … hops before giving up (cycles, absurd nesting)


class _Call(Record):
    __slots__ = ("expressions", "module")
    expressions: dict[str, Any]
    module: _Module

    def __init__(self, expressions: dict[str, Any], module: _Module) -> None:
        self.expressions = expressions
        self.module = module


class _Module(Record):
    __slots__ = ("resources", "calls", "outputs", "variables")
    resources: dict[str, dict[str, Any]]  # rel → expressions
    calls: dict[str, _Call]
    outputs: dict[str, list[str]]
    variables: frozenset[str]  # declared input variables

    def __init__(
        self,
        resources: dict[str, dict[str, Any]] | None = None,
        calls: dict[str, _Call] | None = None,
        outputs: dict[str, list[str]] | None = None,
        variables: frozenset[str] = frozenset(),
    ) -> None:
        self.resources = {} if resources is None else resources
        self.calls = {} if calls is None else calls
        self.outputs = {} if outputs is None else outputs
        self.variables = variables


class _Target(Frozen):
    """A referenced resource, placed relative to the referring resource's module instance:
    ``up`` module levels out, then into the ``down`` module calls. Resolving relative to the
    configuration makes the work once per configuration resource, not per instance."""

    __slots__ = ("up", "down", "rel", "key", "direct")

    up: int
    down: tuple[Segment, ...]  # (call name, key text or None when the reference names none)
    rel: str
    key: str | None  # explicit instance key in the reference
    direct: bool  # referenced from the referring resource's own module, not via var/output

    def __init__(
        self,
        up: int,
        down: tuple[Segment, ...],
        rel: str,
        key: str | None,
        direct: bool,
    ) -> None:
        object.__setattr__(self, "up", up)
        object.__setattr__(self, "down", down)
        object.__setattr__(self, "rel", rel)
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "direct", direct)


class References:
    """Resolves each planned resource's configuration references to addresses in the plan."""

    def __init__(
        self, configuration: Any, origin: str, instances: dict[str, list[str]]
    ) -> None:
        # instances: resource address (module instance prefix + rel) → instance key texts,
        # "" for a resource without count/for_each.
        self._instances = instances
        self._root = _read_config(configuration, origin)
        self._modules: dict[tuple[str, ...], _Module | None] = {(): self._root}
        self._targets: dict[tuple[tuple[str, ...], str], list[tuple[str, _Target]]] = {}
        self._refs: dict[str, Ref | None] = {}
        self._prefixes: dict[tuple[Segment, ...], str] = {(): ""}
        self._names_of: dict[tuple[Segment, ...], tuple[str, ...]] = {}

    def _names(self, segments: tuple[Segment, ...]) -> tuple[str, ...]:
        """The module call names of a module instance path, worked out once per path."""
        if not segments:
            return ()
        names = self._names_of.get(segments)
        if names is None:
            names = self._names_of[segments] = tuple(name for name, _ in segments)
        return names

    def for_resource(
        self, segments: tuple[Segment, ...], names: tuple[str, ...], rel: str, own_key: str
    ) -> dict[str, str]:
        """Key path → address for one resource instance (empty when nothing resolves);
        ``names``: the call names of ``segments``, which the reader has per module instance."""
        targets = self._targets.get((names, rel))
        if targets is None:
            targets = self._targets[(names, rel)] = self._targets_for(names, rel)
        out: dict[str, str] = {}
        for path, t in targets:  # a loop, not a comprehension: on 3.11 that is one call more
            out[path] = self._address(t, segments, own_key)
        return out

    def expressions(self, segments: tuple[Segment, ...], rel: str) -> dict[str, Any] | None:
        """The configuration's expressions of a resource: the arguments and blocks it declares.

        None when the plan's configuration does not describe the resource (no ``configuration``
        section, or a module whose source it leaves out): then nothing is known about them.
        Dynamic blocks are not in Terraform's JSON configuration (it reads the static body).
        """
        names = self._names(segments)
        module = self._module(names)
        return None if module is None else module.resources.get(rel)

    def known_at_plan(self, segments: tuple[Segment, ...], rel: str, key: str) -> bool:
        """Is the argument ``key`` of a resource written from values Terraform knows at plan
        time: constants, root variables (always known), and module variables that are given
        such values or left at their default (followed to a bounded depth)?

        A provider then plans an Optional+Computed argument as "known after apply" only when
        that known value is null or empty, i.e. the configuration does not set it. Anything
        else (a resource, a data source, a module output, a local, ``each.value``, a function
        such as ``timestamp()``) is not known to be known: False.
        """
        names = self._names(segments)
        module = self._module(names)
        found = module.resources.get(rel) if module is not None else None
        return found is not None and self._known(found.get(key), names, 0)

    def refs_known_at_plan(self, segments: tuple[Segment, ...], refs: tuple[str, ...]) -> bool:
        """Are these references (of an expression in the module instance ``segments``, read
        from its ``.tf`` source) all known at plan time? An expression with none is a
        constant."""
        names = self._names(segments)
        return not refs or self._known({"references": list(refs)}, names, 0)

    def _known(self, expression: Any, names: tuple[str, ...], depth: int) -> bool:
        if type(expression) is not dict or depth > _MAX_DEPTH:
            return False
        if "constant_value" in expression:
            return True
        refs = _refs_of(expression)
        if not refs:
            return False  # no constant and no reference: a function of apply-time values
        for ref in refs:
            if ref in _KNOWN_AT_PLAN or ref.startswith(_KNOWN_PREFIXES):
                continue
            parsed = parse_ref(ref)
            if not isinstance(parsed, VarRef) or not self._var_known(parsed.name, names, depth):
                return False
        return True

    def _var_known(self, name: str, names: tuple[str, ...], depth: int) -> bool:
        if not names:
            return True  # a root module variable: given (or defaulted) before the plan
        module = self._module(names)
        if module is None or name not in module.variables:
            return False
        parent = self._module(names[:-1])
        call = parent.calls.get(names[-1]) if parent is not None else None
        if call is None:
            return False
        if name not in call.expressions:
            return True  # the variable's default, a constant
        return self._known(call.expressions[name], names[:-1], depth + 1)

    # -- configuration side ------------------------------------------------------------------

    def _module(self, names: tuple[str, ...]) -> _Module | None:
        if names in self._modules:
            return self._modules[names]
        parent = self._module(names[:-1])
        call = parent.calls.get(names[-1]) if parent is not None else None
        found = call.module if call is not None else None
        self._modules[names] = found
        return found

    def _targets_for(self, names: tuple[str, ...], rel: str) -> list[tuple[str, _Target]]:
        module = self._module(names)
        found = module.resources.get(rel) if module is not None else None
        out: list[tuple[str, _Target]] = []
        for path, refs in _key_paths(found) if found else ():
            target = self._one_target(refs, names, 0, (), 0)
            if target is not None:
                out.append((path, target))
        return out

    def _one_target(
        self, refs: list[str], names: tuple[str, ...], up: int, down: tuple[Segment, ...],
        depth: int,
    ) -> _Target | None:
        """The single resource a list of references points at, or None (none, or several)."""
        found: dict[tuple[int, tuple[Segment, ...], str], _Target] = {}
        for ref in refs:
            for t in self._resolve(ref, names, up, down, depth):
                prior = found.get((t.up, t.down, t.rel))
                if prior is None or (prior.key is None and t.key is not None):
                    found[(t.up, t.down, t.rel)] = t
        return next(iter(found.values())) if len(found) == 1 else None

    def _resolve(
        self, ref: str, names: tuple[str, ...], up: int, down: tuple[Segment, ...], depth: int
    ) -> list[_Target]:
        if ref in self._refs:
            parsed = self._refs[ref]
        else:
            parsed = self._refs[ref] = parse_ref(ref)
        if parsed is None or depth > _MAX_DEPTH:
            return []
        if isinstance(parsed, ResourceRef):
            return [_Target(up, down, parsed.rel, parsed.key, direct=depth == 0)]
        if isinstance(parsed, VarRef):
            return self._through_var(parsed, names, up, down, depth)
        return self._through_output(parsed, names, up, down, depth)

    def _through_var(
        self, ref: VarRef, names: tuple[str, ...], up: int, down: tuple[Segment, ...],
        depth: int,
    ) -> list[_Target]:
        """``var.x`` in a module: the module call's argument, in the calling module."""
        if not names:
            return []  # a root variable is an input, not a resource
        parent = self._module(names[:-1])
        call = parent.calls.get(names[-1]) if parent is not None else None
        if call is None:
            return []
        refs = _refs_of(call.expressions.get(ref.name))
        if down:
            target = self._one_target(refs, names[:-1], up, down[:-1], depth + 1)
        else:
            target = self._one_target(refs, names[:-1], up + 1, down, depth + 1)
        return [] if target is None else [target]

    def _through_output(
        self, ref: ModuleOutputRef, names: tuple[str, ...], up: int, down: tuple[Segment, ...],
        depth: int,
    ) -> list[_Target]:
        """``module.m.out``: the output's expression, inside the called module."""
        module = self._module(names)
        call = module.calls.get(ref.call) if module is not None else None
        if call is None or ref.output is None or ref.output not in call.module.outputs:
            return []
        # A module with count/for_each referenced without a key: the prefix then has no key,
        # names no instance in the plan, and the link stays at the resource address.
        inner = (*down, (ref.call, ref.key))
        target = self._one_target(
            call.module.outputs[ref.output], (*names, ref.call), up, inner, depth + 1
        )
        return [] if target is None else [target]

    # -- plan side ---------------------------------------------------------------------------

    def _address(self, target: _Target, segments: tuple[Segment, ...], own_key: str) -> str:
        if target.up or target.down:
            kept = segments[: len(segments) - target.up] if target.up else segments
            segments = kept + target.down
        prefix = self._prefixes.get(segments)
        if prefix is None:
            prefix = self._prefixes[segments] = module_prefix(segments)
        base = prefix + target.rel
        if target.key is not None:
            return base + target.key
        keys = self._instances.get(base)
        if not keys:
            return base
        if len(keys) == 1:
            return base + keys[0]
        if target.direct and own_key and own_key in keys:
            return base + own_key
        return base


def _refs_of(expression: Any) -> list[str]:
    if type(expression) is not dict:
        return []
    refs = expression.get("references")
    if type(refs) is not list:
        return []
    return [r for r in refs if type(r) is str]


def _is_expression(value: dict[str, Any]) -> bool:
    """An expression object, not a nested block (whose keys are attribute names)."""
    if not value.keys() <= _EXPRESSION_KEYS:
        return False
    return "references" not in value or type(value["references"]) is list


def _key_paths(expressions: dict[str, Any], prefix: str = "") -> list[tuple[str, list[str]]]:
    """(input key path, references) for every expression with references, blocks included."""
    out: list[tuple[str, list[str]]] = []
    for key, value in expressions.items():
        path = prefix + key
        if type(value) is dict:
            if _is_expression(value):
                refs = _refs_of(value)
                if refs:
                    out.append((path, refs))
            else:  # single/group block, or a map of labelled blocks
                out.extend(_key_paths(value, path + "."))
        elif type(value) is list:
            many = len(value) > 1
            for i, block in enumerate(value):
                if type(block) is dict:
                    out.extend(_key_paths(block, f"{path}[{i}]." if many else path + "."))
    return out


def _read_config(configuration: Any, origin: str) -> _Module:
    if configuration is None:
        return _Module()
    config = want_obj(configuration, origin, "configuration")
    root = config.get("root_module")
    if root is None:
        return _Module()
    return _read_module(root, origin, "configuration.root_module")


def _read_module(value: Any, origin: str, path: str) -> _Module:
    doc = want_obj(value, origin, path)
    module = _Module()
    resources = doc.get("resources")
    if resources is not None:
        for i, r in enumerate(want_list(resources, origin, f"{path}.resources")):
            res = want_obj(r, origin, f"{path}.resources[{i}]")
            mode = res.get("mode", "managed")
            if mode not in ("managed", "data"):
                fail(origin, f"{path}.resources[{i}].mode", '"managed" or "data"', mode)
            rtype = want_str(res.get("type"), origin, f"{path}.resources[{i}].type")
            name = want_str(res.get("name"), origin, f"{path}.resources[{i}].name")
            exprs = res.get("expressions")
            if exprs is not None:
                want_obj(exprs, origin, f"{path}.resources[{i}].expressions")
            rel = f"data.{rtype}.{name}" if mode == "data" else f"{rtype}.{name}"
            module.resources[rel] = exprs or {}
    calls = doc.get("module_calls")
    if calls is not None:
        for name, c in want_obj(calls, origin, f"{path}.module_calls").items():
            where = f"{path}.module_calls.{name}"
            call = want_obj(c, origin, where)
            exprs = call.get("expressions")
            if exprs is not None:
                want_obj(exprs, origin, f"{where}.expressions")
            inner = call.get("module")
            child = _Module() if inner is None else _read_module(inner, origin, f"{where}.module")
            module.calls[name] = _Call(expressions=exprs or {}, module=child)
    variables = doc.get("variables")
    if type(variables) is dict:
        module.variables = frozenset(str(k) for k in variables)
    outputs = doc.get("outputs")
    if outputs is not None:
        for name, o in want_obj(outputs, origin, f"{path}.outputs").items():
            output = want_obj(o, origin, f"{path}.outputs.{name}")
            module.outputs[name] = _refs_of(output.get("expression"))
    return module
