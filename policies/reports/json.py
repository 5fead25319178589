"""``--format json``: :meth:`Result.to_json`, the shape DESIGN.md fixes, pretty-printed.

``default=str`` keeps a rule's free-form ``detail`` (an enum, an UNKNOWN marker) from turning a
finished evaluation into a crash at the last step.
"""

from __future__ import annotations

import json

from policies.result import Result


def render(result: Result) -> str:
    return json.dumps(result.to_json(), indent=2, ensure_ascii=False, default=str,
                      allow_nan=False) + "\n"
