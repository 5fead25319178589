"""Plan sources: read a plan file of any supported kind into the normalised :class:`Plan`.

The kind is detected from the content, never the file name: CI systems name plan files
anything. Whatever the input, :func:`load_plan` returns a Plan or raises
:class:`gpupool.errors.InputError` with one line naming the file, the key and what was expected;
no other exception escapes (a property test holds it to that). Input that cannot be judged is
refused, never turned into an empty, passing plan.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from gpupool.inputs import shown_name
from policies.model import Plan
from policies.sources import offline, pulumi_events, pulumi_preview, terraform
from policies.sources.reading import JsonLines, fail, problem, read_json

TERRAFORM: Final = "terraform"
PULUMI_PREVIEW: Final = "pulumi-preview"
PULUMI_EVENTS: Final = "pulumi-events"
GPUPOOL_PLAN: Final = "gpupool-plan"

_PARSERS: Final[dict[str, Callable[[dict[str, Any], str], Plan]]] = {
    TERRAFORM: terraform.parse,
    PULUMI_PREVIEW: pulumi_preview.parse,
    PULUMI_EVENTS: pulumi_events.parse,
    GPUPOOL_PLAN: offline.parse,
}

_EXPECTED: Final = (
    "a Terraform plan (terraform show -json PLANFILE), a Pulumi preview (pulumi preview --json) "
    "or a gpupool plan (gpupool plan STACK --format json)"
)


def detect(doc: Any, origin: str = "<input>") -> str:
    """Which kind of plan a parsed JSON document is: "terraform", "pulumi-preview",
    "pulumi-events" or "gpupool-plan". Lookalikes (state files, stack exports, UI logs) get a
    line saying what they are."""
    if isinstance(doc, JsonLines):
        return _detect_lines(doc, origin)
    if type(doc) is not dict:
        fail(origin, "", _EXPECTED, doc)
    if doc.get("kind") == offline.KIND:
        return GPUPOOL_PLAN
    if "format_version" in doc:
        if "resource_changes" in doc or "planned_values" in doc:
            return TERRAFORM
        if "values" in doc:
            raise problem(
                f"{origin}: expected a Terraform plan, got Terraform state as JSON "
                "(no resource_changes); use `terraform show -json PLANFILE`"
            )
        fail(origin, "resource_changes", "a Terraform plan's resource_changes or planned_values")
    if "lineage" in doc and "serial" in doc:
        raise problem(
            f"{origin}: expected a Terraform plan, got a Terraform state file; "
            "use `terraform plan -out=PLANFILE && terraform show -json PLANFILE`"
        )
    if "steps" in doc or "changeSummary" in doc:
        return PULUMI_PREVIEW
    events = doc.get("events")
    if type(events) is list and (not events or pulumi_events.is_event(events[0])):
        return PULUMI_EVENTS
    if "checkpoint" in doc and "version" in doc:
        raise problem(
            f"{origin}: expected a Pulumi preview, got a Pulumi checkpoint (stack state); "
            "use `pulumi preview --json`"
        )
    if "deployment" in doc and "version" in doc:
        raise problem(
            f"{origin}: expected a Pulumi preview, got a stack export (state); "
            "use `pulumi preview --json`"
        )
    keys = ", ".join(sorted(map(str, doc))[:5]) or "none"
    raise problem(f"{origin}: expected {_EXPECTED}, got an object with keys: {keys}")


def _detect_lines(lines: JsonLines, origin: str) -> str:
    first = lines[0] if lines else None
    if pulumi_events.is_event(first):
        return PULUMI_EVENTS
    if type(first) is dict and "@level" in first:
        raise problem(
            f"{origin}: expected one JSON document, got Terraform's JSON-lines UI log "
            "(`terraform plan -json`); use `terraform show -json PLANFILE`"
        )
    raise problem(f"{origin}: expected one JSON document ({_EXPECTED}), got {len(lines)} JSON "
                  "objects on separate lines")


def parse_document(doc: Any, origin: str) -> Plan:
    """A plan from an already parsed JSON document (origin names it in errors)."""
    try:
        return _PARSERS[detect(doc, origin)](doc, origin)
    except RecursionError:
        raise problem(f"{origin}: expected a JSON plan, got nesting too deep to read") from None


def load_plan(path: str | Path) -> Plan:
    """Read, detect and normalise one plan file.

    The cyclic garbage collector is paused meanwhile: parsing allocates millions of acyclic
    containers, and the collector rescanning them made a 100k-resource plan 2-3x slower.
    """
    origin = shown_name(path)  # `-` (standard input) is shown as <stdin>
    enabled = gc.isenabled()
    gc.disable()
    try:
        return parse_document(read_json(Path(path), origin), origin)
    finally:
        if enabled:
            gc.enable()


__all__ = [
    "GPUPOOL_PLAN", "PULUMI_EVENTS", "PULUMI_PREVIEW", "TERRAFORM", "detect", "load_plan",
    "parse_document",
]
