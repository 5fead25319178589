"""What every stack-config model shares: camelCase keys, unknown keys refused, frozen values.

Its own module so that each capability's models (``kubernetes``, …) build on it without
importing :mod:`gpupool.config.models`, which imports them for :class:`StackConfig`.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class ConfigModel(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        alias_generator=to_camel,
        populate_by_name=True,
        str_strip_whitespace=True,
    )


def duplicate_names(names: Sequence[object]) -> list[tuple[int, str]]:
    """(index, name) of every item that reuses an earlier item's name."""
    seen: set[object] = set()
    out: list[tuple[int, str]] = []
    for i, name in enumerate(names):
        if name in seen:
            out.append((i, str(name)))
        seen.add(name)
    return out
