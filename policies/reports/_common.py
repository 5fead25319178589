"""What every report format says the same way: counts, verdict wording, order, money.

Kept in one place so that the text table, the PR comment, JUnit and SARIF never disagree about
how many violations block, or what a dollar figure looks like.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from gpupool.record import Frozen
from policies.result import CostLine, Result, Violation
from policies.rules.params import Enforcement

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any, Final

HOURS_PER_MONTH: Final = 730  # AWS's own convention for monthly on-demand figures


class Counts(Frozen):
    __slots__ = ("mandatory", "advisory", "waived", "unknown", "errors")
    mandatory: int  # blocking: mandatory and not waived
    advisory: int  # advisory and not waived
    waived: int
    unknown: int  # "cannot verify" among the unwaived ones
    errors: int

    def __init__(
        self,
        mandatory: int,
        advisory: int,
        waived: int,
        unknown: int,
        errors: int,
    ) -> None:
        object.__setattr__(self, "mandatory", mandatory)
        object.__setattr__(self, "advisory", advisory)
        object.__setattr__(self, "waived", waived)
        object.__setattr__(self, "unknown", unknown)
        object.__setattr__(self, "errors", errors)

    @property
    def failed(self) -> bool:
        return self.mandatory > 0 or self.errors > 0


def counts(result: Result) -> Counts:
    live = [v for v in result.violations if v.waived_by is None]
    return Counts(
        mandatory=sum(1 for v in live if v.enforcement is Enforcement.MANDATORY),
        advisory=sum(1 for v in live if v.enforcement is not Enforcement.MANDATORY),
        waived=len(result.violations) - len(live),
        unknown=sum(1 for v in live if v.unknown),
        errors=len(result.errors),
    )


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else (many or word + 's')}"


def summary(result: Result) -> str:
    """``2 mandatory violations, 1 rule error, 3 advisory, 1 waived`` (zeros left out)."""
    c = counts(result)
    parts = []
    if c.mandatory:
        parts.append(plural(c.mandatory, "mandatory violation"))
    if c.errors:
        parts.append(plural(c.errors, "rule error"))
    if c.advisory:
        parts.append(f"{c.advisory} advisory")
    if c.waived:
        parts.append(f"{c.waived} waived")
    return ", ".join(parts) if parts else "no violations"


def verdict_line(result: Result) -> str:
    """One line a person can act on: the verdict, what caused it, what was looked at."""
    word = "FAIL" if result.verdict == "fail" else "PASS"
    scope = plural(result.resources_evaluated, "resource")
    where = f" in {', '.join(some(result.sources))}" if result.sources else ""
    gpus = f"; Kubernetes: {result.gpu_objects.sentence()}" if result.gpu_objects.seen else ""
    return f"{word}: {summary(result)} ({scope} evaluated{where}{gpus})"


def some(items: Sequence[str], shown: int = 5) -> list[str]:
    """At most ``shown`` items and an "N more" tail: a run over 500 plans stays one line."""
    if len(items) <= shown:
        return list(items)
    return [*items[:shown], f"{len(items) - shown} more"]


def status(v: Violation) -> str:
    """Short marker for a violation's state, shared by the text and markdown tables."""
    if v.waived_by is not None:
        return "waived"
    if v.unknown:
        return "cannot verify"
    return "blocking" if v.blocking else "advisory"


def short_address(address: str) -> str:
    """A Pulumi URN as ``name (type)`` for tables; Terraform addresses are short already.

    ``urn:pulumi:dev::gpupool::gpupool:aws:GpuPool$aws:autoscaling/group:Group::dev-asg`` reads
    as ``dev-asg (aws.autoscaling.Group)``, as ``gpupool plan`` prints it; machine formats keep
    the full URN.
    """
    if not address.startswith("urn:pulumi:"):
        return address
    parts = address.split("::")
    if len(parts) < 4:
        return address
    type_chain, name = parts[2], "::".join(parts[3:])
    token = type_chain.rsplit("$", 1)[-1].split(":")
    if len(token) == 3:
        token = [token[0], token[1].split("/")[0], token[2]]
    return f"{name} ({'.'.join(token)})"


# (compiled on first use, by re's cache: the JSON report never asks)
_STACK_SOURCE: Final = r"^stack (?P<stack>.+?)(?: \(working tree\)| @ \S+)$"


def stacks(result: Result) -> list[str]:
    """The Pulumi stacks a result is about, in order: from ``--stack`` origins, then from the
    URNs of what it found (a preview or offline plan file names its stack only there)."""
    from pathlib import Path  # (SARIF and markdown only: not on a JSON or text report's path)

    out: dict[str, None] = {}
    for source in result.sources:
        m = re.match(_STACK_SOURCE, source)
        if m is not None:
            out[Path(m.group("stack")).name.removeprefix("Pulumi.").removesuffix(".yaml")
                .removesuffix(".yml")] = None
    addresses = [r.address for v in result.violations for r in v.resources]
    addresses += [c.resource for c in result.cost]
    for address in addresses:
        if address.startswith("urn:pulumi:"):
            out[address[len("urn:pulumi:"):].split("::", 1)[0]] = None
    return list(out)


def resource_names(v: Violation, sep: str | None = None) -> str:
    """Every resource a finding names, as people read them: ``a (T)``, ``a (T) and b (U)``,
    ``a, b and c``; or joined by ``sep`` (a table cell puts one per line)."""
    names = [short_address(r.address) for r in v.resources]
    if sep is not None:
        return sep.join(names)
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + " and " + names[-1]


def by_resource(violations: Iterable[Violation]) -> list[tuple[str, list[Violation]]]:
    """Violations grouped by the resources they name (one line each in the key), in order of
    first appearance."""
    groups: dict[str, list[Violation]] = {}
    for v in violations:
        key = "\n".join(r.address for r in v.resources)
        groups.setdefault(key, []).append(v)
    return [(r, sorted(vs, key=severity_key)) for r, vs in groups.items()]


def severity_key(v: Violation) -> tuple[int, str]:
    """Blocking first, then advisory, then cannot-verify, then waived."""
    if v.waived_by is not None:
        rank = 3
    elif v.blocking:
        rank = 0
    elif v.unknown:
        rank = 2
    else:
        rank = 1
    return rank, v.policy


def waiver_justification(v: Violation) -> str:
    """Why a violation is waived, as far as the result tells (the engine may add detail)."""
    waiver: Any = v.detail.get("waiver") if v.detail else None
    parts = [f"waived by {v.waived_by}"]
    if isinstance(waiver, Mapping):
        for key in ("owner", "reason", "expires"):
            if waiver.get(key):
                parts.append(f"{key}: {waiver[key]}")
    return "; ".join(parts)


def policy_index(result: Result) -> dict[str, Mapping[str, Any]]:
    """Policies by id, including any id a violation or error names that the list lacks."""
    out: dict[str, Mapping[str, Any]] = {}
    for p in result.policies:
        pid = str(p.get("id", ""))
        if pid:
            out[pid] = p
    for pid in [v.policy for v in result.violations] + [e.policy for e in result.errors]:
        out.setdefault(pid, {"id": pid, "title": pid, "enforcement": "", "rationale": ""})
    return out


# -- money ---------------------------------------------------------------------------------


def per_hour(x: float) -> str:
    """``$0.526``: up to four decimals (prices like 0.8048 are quoted so), at least two."""
    s = f"{abs(x):,.4f}".rstrip("0")
    if len(s.partition(".")[2]) < 2:
        s = f"{abs(x):,.2f}"
    return ("-" if x < 0 else "") + "$" + s


def signed_per_hour(x: float) -> str:
    return ("+" if x >= 0 else "-") + per_hour(abs(x))


def signed_per_month(x_per_hour: float) -> str:
    m = x_per_hour * HOURS_PER_MONTH
    return ("+" if m >= 0 else "-") + f"${abs(m):,.2f}"


def total_delta(cost: Sequence[CostLine]) -> float | None:
    known = [c.delta_per_hour for c in cost if c.delta_per_hour is not None]
    return round(sum(known), 6) if known else None


def cost_sentence(cost: Sequence[CostLine]) -> str | None:
    """``+$3.826/h (+$2,792.98/month at 730 h)``, or None when the plan has no GPU cost."""
    if not cost:
        return None
    delta = total_delta(cost)
    unknown = sum(1 for c in cost if c.delta_per_hour is None)
    tail = f"; {plural(unknown, 'resource')} not priced" if unknown else ""
    if delta is None:
        return f"unknown{tail}"
    return (
        f"{signed_per_hour(delta)}/h ({signed_per_month(delta)}/month at {HOURS_PER_MONTH} h)"
        f"{tail}"
    )


def money_or_dash(x: float | None) -> str:
    return "—" if x is None else per_hour(x)
