"""Pulumi engine event streams → Plan: the preview shape newer CLIs write.

``PULUMI_ENABLE_STREAMING_JSON_PREVIEW=1 pulumi preview --json`` (and ``--event-log FILE``)
write one engine event per line (``{"sequence", "timestamp", "resourcePreEvent": {...}}``);
the Pulumi Cloud API returns the same events as ``{"events": [{"type": "resourcePreEvent",
"resourcePreEvent": {...}}, ...]}``. Both carry what the digest carries (sdk
``apitype.EngineEvent``):

- ``resourcePreEvent.metadata``: a step (``op``, ``urn``, ``old``/``new`` states with
  ``inputs``, ``provider``) — read like a digest step;
- ``resOutputsEvent`` after a ``refresh`` step that found drift replaces it (as the digest does);
- ``diagnosticEvent`` with severity ``error``: the preview failed, so it is refused;
- ``summaryEvent``: the end of a complete preview. A stream without one was cut short (a
  cancelled or crashed preview) and is refused rather than judged on the steps it has.

States in events omit ``custom`` when it is false (a component); a state that omits it but
names a provider is read as a custom resource, so a hand-trimmed stream never hides one.
"""

from __future__ import annotations

from policies.model import Plan
from policies.sources.pulumi_preview import EVENTS, Step, plan_of_steps, refuse_error_diagnostic
from policies.sources.reading import JsonLines, fail, problem, want_list, want_obj

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any, Final

# Event payload keys of apitype.EngineEvent (exactly one per event).
EVENT_KEYS: Final = frozenset({
    "cancelEvent", "stdoutEvent", "diagnosticEvent", "preludeEvent", "summaryEvent",
    "resourcePreEvent", "resOutputsEvent", "resOpFailedEvent", "policyEvent",
    "policyRemediationEvent", "policyLoadEvent", "policyAnalyzeSummaryEvent",
    "policyRemediateSummaryEvent", "policyAnalyzeStackSummaryEvent", "startDebuggingEvent",
    "progressEvent", "errorEvent",
})


def is_event(value: Any) -> bool:
    """Does a JSON value look like one engine event?"""
    return type(value) is dict and (
        value.get("type") in EVENT_KEYS or not EVENT_KEYS.isdisjoint(value.keys()))


def parse(doc: Any, origin: str, defer: bool = False) -> Plan:
    """An event stream (JSON lines, or the API's ``{"events": [...]}``) → Plan (``defer``: as
    :func:`pulumi_preview.parse`)."""
    if isinstance(doc, JsonLines):
        events = zip((f"line {n}" for n in doc.line_numbers), doc, strict=True)
    else:
        raw = want_list(doc.get("events"), origin, "events")
        events = ((f"events[{i}]", e) for i, e in enumerate(raw))
    steps: list[Step] = []
    by_urn: dict[str, int] = {}  # URN → index in steps of its pre-event
    summary: dict[str, Any] | None = None
    for where, raw_event in events:
        event = want_obj(raw_event, origin, where)
        kind, payload = _payload(event, origin, where)
        at = f"{where}: {kind}"
        if kind == "cancelEvent":
            break
        if kind == "summaryEvent":
            body = want_obj(payload, origin, at)
            changes = body.get("resourceChanges")
            summary = changes if type(changes) is dict else {}
        elif kind == "diagnosticEvent":
            diag = want_obj(payload, origin, at)
            if diag.get("ephemeral") is not True:
                refuse_error_diagnostic(diag, origin, at)
        elif kind == "resourcePreEvent":
            step = _step(payload, origin, at)
            urn = step.body.get("urn")
            if type(urn) is str:
                by_urn[urn] = len(steps)
            steps.append(step)
        elif kind == "resOutputsEvent":
            _refreshed(steps, by_urn, _step(payload, origin, at))
    # a malformed step first: it is more precise
    plan = plan_of_steps(steps, origin, summary, defer, EVENTS)
    if summary is None:
        raise problem(
            f"{origin}: expected a complete Pulumi event stream ending with a summaryEvent, "
            "got one that stops before it (a cancelled or failed preview); run the preview again"
        )
    return plan


def _payload(event: dict[str, Any], origin: str, where: str) -> tuple[str, Any]:
    named = event.get("type")
    if type(named) is str and named in event:
        return named, event[named]
    found = [k for k in event if k in EVENT_KEYS]
    if len(found) != 1:
        fail(origin, where, "one Pulumi engine event (resourcePreEvent, summaryEvent, …)",
             event if found else None)
    return found[0], event[found[0]]


def _step(payload: Any, origin: str, at: str) -> Step:
    body = want_obj(payload, origin, at)
    metadata = want_obj(body.get("metadata"), origin, f"{at}.metadata")
    return Step(metadata, f"{at}.metadata")


def _refreshed(steps: list[Step], by_urn: dict[str, int], outputs: Step) -> None:
    """A refresh that found drift turns into an update or delete in the outputs event."""
    urn = outputs.body.get("urn")
    i = by_urn.get(urn) if type(urn) is str else None
    if i is None or steps[i].body.get("op") != "refresh":
        return
    op = outputs.body.get("op")
    if (op == "update" and outputs.body.get("detailedDiff") is not None) or op == "delete":
        steps[i] = outputs
