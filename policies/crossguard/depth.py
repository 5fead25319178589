"""Resource properties nested too deep for the SDK to read: cut, read as unknown, and said.

pulumi-policy turns a request's protobuf ``Struct`` into Python recursively (``MessageToDict``,
then its own deserializer, then the pack's conversion), several interpreter frames per level.
A property nested ~200 levels deep (a generated JSON document, a hostile program) exhausts
Python's recursion limit, and the whole Analyze or AnalyzeStack call failed with gRPC UNKNOWN:
no verdict for any resource of the call, and an error that names none of them.

Before the SDK reads a request, :func:`cut_deep` walks each resource's properties without
recursion and replaces every value below :data:`MAX_DEPTH` levels with Pulumi's unknown
sentinel. Rules then judge the resource as usual, reading the cut values as unknown ("cannot
verify" where they matter, never a pass), and :func:`diagnostic` names the resource and the
path in a mandatory finding of its own (policy ``gpupool-input``): input the pack could not read
whole is never passed silently.
"""

from __future__ import annotations

from typing import Any, Final

from google.protobuf import struct_pb2

from policies.crossguard.props import UNKNOWN_SENTINELS

MAX_DEPTH: Final = 64  # objects and arrays inside one property value; AWS schemas need ~10
INPUT_POLICY: Final = "gpupool-input"
_SENTINEL: Final = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"  # the engine's unknown string
assert _SENTINEL in UNKNOWN_SENTINELS


def cut_deep(properties: struct_pb2.Struct, limit: int = MAX_DEPTH) -> list[str]:
    """Replace every value nested deeper than ``limit`` by the unknown sentinel, in place;
    return the paths of the cuts (``userData.a.a[0]…``), first ones first."""
    cuts: list[str] = []
    stack: list[tuple[Any, int, str]] = [(properties, 0, "")]
    while stack:
        node, depth, path = stack.pop()
        if isinstance(node, struct_pb2.Struct):
            children = [(node.fields[k], f"{path}.{k}" if path else k) for k in node.fields]
        else:  # a ListValue
            children = [(v, f"{path}[{i}]") for i, v in enumerate(node.values)]
        for value, where in children:
            kind = value.WhichOneof("kind")
            if kind not in ("struct_value", "list_value"):
                continue
            if depth + 1 > limit:
                value.string_value = _SENTINEL  # clears the nested value (a oneof)
                cuts.append(where)
            else:
                stack.append((getattr(value, kind), depth + 1, where))
    return sorted(cuts)


def message(cuts: list[str], limit: int = MAX_DEPTH) -> str:
    first = cuts[0] if len(cuts[0]) <= 80 else cuts[0][:77] + "..."
    more = f" (and {len(cuts) - 1} more)" if len(cuts) > 1 else ""
    return (f"cannot read this resource whole: its properties nest deeper than {limit} levels "
            f"at {first}{more}; the policies judged it with those values unknown. Flatten the "
            "value, or pass it as a JSON string")


def diagnostic(proto: Any, urn: str, cuts: list[str], pack: str, version: str) -> Any:
    """The mandatory AnalyzeDiagnostic that says so, on the resource."""
    return proto.AnalyzeDiagnostic(
        policyName=INPUT_POLICY,
        policyPackName=pack,
        policyPackVersion=version,
        description="Resource properties the pack can read",
        message=message(cuts),
        urn=urn,
        enforcementLevel=proto.MANDATORY,
    )
