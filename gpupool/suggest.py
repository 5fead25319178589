"""'Did you mean …?' for a name the user typed: a stack, a template, a policy ID, a key."""

from __future__ import annotations

from collections.abc import Iterable


def closest(word: str, choices: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The choice closest to ``word`` (difflib's ratio at least ``cutoff``), if any."""
    import difflib  # only when a name was mistyped

    found = difflib.get_close_matches(word, list(choices), n=1, cutoff=cutoff)
    return found[0] if found else None


def did_you_mean(word: str, choices: Iterable[str], cutoff: float = 0.6) -> str:
    """`` (did you mean X?)`` to append to a message, or ``""`` when nothing is close."""
    near = closest(word, choices, cutoff)
    return f" (did you mean {near}?)" if near is not None else ""
