"""Tell an unrendered Helm template from broken YAML, so the user is told to render it.

A chart's ``templates/*.yaml`` is Go template text (``{{ .Values.image }}``, ``{{- if … }}``,
``{{ include "chart.labels" . }}``): rarely YAML, never the manifests it renders. When a
manifest file fails to read, :func:`helm_action` finds the first template action Helm (not
Argo Workflows, whose ``{{inputs.parameters.x}}`` are part of rendered manifests) would
expand, and the error says to run ``helm template`` instead of quoting a YAML parser.
"""

from __future__ import annotations

import re
from pathlib import Path

from gpupool.errors import InputError
from policies.sources.reading import problem

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Final

# An action Helm expands: a field or variable ({{ .Values.x }}, {{ $x }}), a trim marker, a
# comment, or a Go template / Sprig keyword at its start.
_ACTION: Final = re.compile(
    r"\{\{-?\s*(?:\.[A-Za-z$]|\$|/\*|(?:include|template|if|else|end|range|with|define|block|"
    r"toYaml|tpl|required|default|printf|quote|nindent|indent|fromYaml|lookup)\b)[^\n]*?\}\}")
_MAX_SHOWN: Final = 60


def helm_action(text: str) -> tuple[int, str] | None:
    """The line and text of the first Helm template action in ``text``, if any."""
    m = _ACTION.search(text)
    if m is None:
        return None
    line = text.count("\n", 0, m.start()) + 1
    shown = m.group(0)
    return line, shown if len(shown) <= _MAX_SHOWN else shown[:_MAX_SHOWN - 1] + "…"


def unrendered(text: str, shown: str) -> InputError | None:
    """The one-line error for a Helm template, or None when ``text`` is not one."""
    found = helm_action(text)
    if found is None:
        return None
    line, action = found
    return problem(f"{shown}: expected Kubernetes manifests, got an unrendered Helm template "
                   f"(line {line}: {action}): run `helm template` and check its output")


def file_text(path: Path, limit: int) -> str | None:
    """A regular file's text for the check above (None when it cannot be read again)."""
    try:
        if not path.is_file() or path.stat().st_size > limit:
            return None
        return path.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return None
