"""Errors the CLI turns into one clear line on stderr and exit 2 (bad input or usage)."""

from __future__ import annotations


class InputError(Exception):
    """Input the kit cannot use: a file, a key in it, and what was expected.

    ``problems`` holds one line per problem, each already naming the file and the key, so that a
    user sees every error at once.
    """

    def __init__(self, problems: list[str] | str) -> None:
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("\n".join(self.problems))
