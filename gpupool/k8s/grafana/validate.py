"""Validate a Grafana dashboard against Grafana's own dashboard model, before it is written.

The schema is ``dashboard.jsonschema.json`` beside this module: the JSON schema (draft-07) of
Grafana's ``kinds/dashboard/dashboard_kind.cue`` as the Grafana Foundation SDK generates it
(source, release and commit in ``SOURCES.md``). Its objects refuse unknown keys, so a
misspelt option is a problem, not a silently ignored field. A ConfigMap that carries the
``grafana_dashboard`` label (what the Grafana chart's sidecar loads) has each of its
``*.json`` entries parsed and validated; every problem is one ``<path>: <what is wrong>``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from functools import cache
from importlib import resources
from typing import Any

import jsonschema

from gpupool.k8s.grafana.dashboard import LABEL

SCHEMA_FILE = "dashboard.jsonschema.json"


@cache
def _validator() -> jsonschema.Draft7Validator:
    text = resources.files("gpupool.k8s.grafana").joinpath(SCHEMA_FILE).read_text("utf-8")
    schema = json.loads(text)
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


def _path(error: jsonschema.ValidationError) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path) or "."


def problems(dashboard: Any) -> Iterator[str]:
    """Every way ``dashboard`` departs from Grafana's dashboard schema."""
    for error in sorted(_validator().iter_errors(dashboard), key=lambda e: list(
            map(str, e.absolute_path))):
        while error.context:  # anyOf (a panel or a row): the deepest problem of any of them
            error = max(error.context, key=lambda e: len(e.absolute_path))
        message = error.message if len(error.message) <= 200 else error.message[:197] + "..."
        yield f"{_path(error)}: {message}"


def configmap_problems(obj: Mapping[str, Any]) -> Iterator[str]:
    """A dashboard ConfigMap's entries, each parsed and validated (other objects: none)."""
    if obj.get("kind") != "ConfigMap":
        return
    labels = (obj.get("metadata") or {}).get("labels") or {}
    if labels.get(LABEL) != "1":
        return
    for key, text in sorted((obj.get("data") or {}).items()):
        if not key.endswith(".json"):
            yield f"data.{key}: expected a dashboard file name ending in .json"
            continue
        try:
            dashboard = json.loads(text)
        except (TypeError, ValueError) as e:
            yield f"data.{key}: not JSON ({e})"
            continue
        for problem in problems(dashboard):
            yield f"data.{key}: Grafana dashboard {problem}"
