"""CEL pieces the GPU container rules share: which resources are GPUs, and how much a
container asks for (Kubernetes' quantity library: ``isQuantity``, ``quantity``,
``isInteger``, ``compareTo``; GA in every version the policies support, 1.30 on)."""

from __future__ import annotations

from policies.facts.k8s.quantities import GPU_RESOURCES
from policies.rules._pod_upsize import DENOMINATORS as _DENOMINATORS

GPUS = "[" + ", ".join(f"'{r}'" for r in GPU_RESOURCES) + "]"
# The denominators the rules' exact counts try (``3/2``), as a variable a policy declares.
DENOMINATORS = ("denominators", "[" + ", ".join(str(d) for d in _DENOMINATORS) + "]")


def in_side(c: str, r: str, side: str) -> str:
    """Does container ``c`` name resource ``r`` in ``side`` (limits, requests)?"""
    return f"(has({c}.resources) && has({c}.resources.{side}) && {r} in {c}.resources.{side})"


def asks(c: str, r: str) -> str:
    return f"({in_side(c, r, 'limits')} || {in_side(c, r, 'requests')})"


def counted(c: str, r: str) -> str:
    """What the scheduler reserves: the limit (requests default to it), else the request."""
    return (f"({in_side(c, r, 'limits')} ? {c}.resources.limits[{r}] : "
            f"{c}.resources.requests[{r}])")


def side_of(c: str, r: str) -> str:
    return f"({in_side(c, r, 'limits')} ? 'limits' : 'requests')"


def is_q(v: str) -> str:
    """A value that reads as a quantity: ``1`` (a CRD's integer) or ``'1'``, ``'500m'``."""
    return f"isQuantity(string({v}))"


def q(v: str) -> str:
    return f"quantity(string({v}))"


def whole(v: str) -> str:
    """A whole, non-negative count (as the Python rule's ``Quantity.whole``)."""
    return f"({is_q(v)} && {q(v)}.isInteger() && {q(v)}.sign() >= 0)"


def asks_gpu(c: str, g: str) -> str:
    """Container ``c`` asks for GPU resource ``g``: a count above 0, or one that does not read
    as a quantity (as the rules' ``asks_gpu``: an unreadable count is never taken as none)."""
    v = counted(c, g)
    return f"({asks(c, g)} && (!{is_q(v)} || {q(v)}.sign() > 0))"


def role_asks_gpu(r: str) -> str:
    """A container of role ``r`` (a ``roles`` item) asks for a GPU."""
    return f"{r}.containers.exists(c, variables.gpus.exists(g, {asks_gpu('c', 'g')}))"


def first_gpu(c: str, test: str) -> str:
    """The first GPU resource of container ``c`` that passes ``test`` (CEL of ``g``), in the
    reader's order: those in limits first, then those in requests only (each in GPUS order)."""
    lim = in_side(c, "g", "limits")
    return (f"(variables.gpus.filter(g, {lim} && {test}) + "
            f"variables.gpus.filter(g, !{lim} && {test}))[0]")


def shown(v: str) -> str:
    """A value as the PR check shows it: text quoted ('500m'), numbers bare."""
    return f"(type({v}) == string ? \"'\" + {v} + \"'\" : string({v}))"


def count_shown(v: str) -> str:
    """A count as the PR check shows it (``Quantity.shown``): a whole one as its number
    (``1k``: 1000), any other as :func:`shown`."""
    return f"({whole(v)} ? string({q(v)}.asInteger()) : {shown(v)})"


def who(role: str) -> str:
    """``PyTorchJob ml/finetune, Worker`` as the PR check names a workload and role."""
    name = "(has(object.metadata.name) ? object.metadata.name : '?')"
    return (f"object.kind + ' ' + (request.namespace != '' ? request.namespace + '/' : '') + "
            f"{name} + ({role}.name != '' ? ', ' + {role}.name : '')")


def lines(key: str) -> str:
    """A ConfigMap value of one item per line, as a list (empty lines dropped)."""
    return (f"(has(params.data) && '{key}' in params.data ? "
            f"params.data['{key}'].split('\\n').filter(l, l != '') : [])")


def whole_double(x: str) -> str:
    return f"({x} == double(int({x})))"


def first_d(at: str, then: str, otherwise: str) -> str:
    """``then`` with ``@D`` the smallest denominator making ``at`` (of ``d``) whole, else
    ``otherwise``."""
    d0 = f"variables.denominators.filter(d, {whole_double(at)})[0]"
    return (f"(variables.denominators.exists(d, {whole_double(at)}) ? "
            f"{then.replace('@D', d0)} : {otherwise})")


def double_shown(x: str) -> str:
    """The double ``x`` as the rule's ``shown()`` writes it: ``4``, ``3/2``, ``333m``."""
    return (f"({whole_double(x)} ? string(int({x})) : " + first_d(
        f"{x} * double(d)", f"string(int({x} * double(@D))) + '/' + string(@D)",
        f"string(int({x} * 1000.0)) + 'm'") + ")")
