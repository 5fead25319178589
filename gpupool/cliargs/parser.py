"""The argparse parser of ``gpupool``: usage errors in one line, with a did-you-mean."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any


# argparse's own words that ArgumentParser.__init__ translates (group titles, -h's help): each a
# gettext lookup, the first of which imports locale (4.5 M instructions of a check's start-up).
# Only the help prints them, so a Parser translates them when it writes its help: the same
# lookup, in the same process, the same text in every locale.
_OWN_WORDS = ("positional arguments", "options", "show this help message and exit")


def _untranslated(message: str) -> str:
    return message


class Parser(argparse.ArgumentParser):
    """argparse that teaches: a missing subcommand prints the help, a mistyped option, command
    or choice gets a "did you mean", and every usage error is one line (exit 2)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        translate = getattr(argparse, "_", None)
        if translate is None:  # an argparse that does not translate through a global `_`
            super().__init__(*args, **kwargs)
            self._translated = True
            return
        argparse._ = _untranslated
        try:
            super().__init__(*args, **kwargs)
        finally:
            argparse._ = translate
        self._translated = False

    def format_help(self) -> str:
        if not self._translated:
            self._translated = True
            translate = argparse._
            groups = (self._positionals, self._optionals)
            for group in groups:
                if group.title in _OWN_WORDS:
                    group.title = translate(group.title)
            for action in self._actions:
                if isinstance(action, argparse._HelpAction) and action.help in _OWN_WORDS:
                    action.help = translate(action.help)
        return super().format_help()

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[no-untyped-def]
        parsed, extras = super().parse_known_args(args, namespace)
        if extras and self._is_root:
            # argparse reports them from the top parser; the subcommand's options know better
            chosen = _chosen_parser(self, parsed)
            chosen.error(f"unrecognized arguments: {' '.join(extras)}"
                         f"{_suggest_options(extras, chosen)}")
        if self._is_root:
            chosen = _chosen_parser(self, parsed)
            empty = _empty_value(chosen, parsed)
            if empty is not None:  # `--since ''` is a mistake (an unset variable), not "default"
                chosen.error(f"{empty}: expected a value, got an empty string")
        return parsed, extras

    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse's own asks shutil for the width (with bz2, lzma and fnmatch behind it, 3 ms
        # of a check's start-up) each time an argument is added; the same width, read here.
        return self.formatter_class(prog=self.prog, width=terminal_columns() - 2)

    @property
    def _is_root(self) -> bool:
        return " " not in self.prog

    def error(self, message: str) -> None:  # type: ignore[override]
        subs = _subcommands(self)
        if (subs is not None and message.startswith("the following arguments are required:")
                and argparse._get_action_name(subs) in message):
            self.print_help()  # `gpupool`, `gpupool netcheck`: what can be done here
            raise SystemExit(0)
        from gpupool.terminal import safe

        sys.stderr.write(f"{self.prog}: {safe(message)}{_suggest_choice(message)}\n")
        raise SystemExit(2)


def terminal_columns() -> int:
    """``shutil.get_terminal_size().columns``: ``$COLUMNS``, else standard output's terminal,
    else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 80
        columns = columns or 80
    return columns


def _empty_value(parser: argparse.ArgumentParser, ns: argparse.Namespace) -> str | None:
    """The first option or argument given as an empty (or blank) string, as it is named."""
    for action in parser._actions:
        value = getattr(ns, action.dest, None)
        values = value if isinstance(value, list) else [value]
        if any(isinstance(v, str) and not v.strip() for v in values):
            return action.option_strings[0] if action.option_strings else action.metavar \
                or action.dest
    return None


def _subcommands(parser: argparse.ArgumentParser) -> argparse.Action | None:
    return next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)


def _chosen_parser(parser: argparse.ArgumentParser, ns: argparse.Namespace
                   ) -> argparse.ArgumentParser:
    """The (sub)parser that parsed the deepest subcommand given."""
    while (subs := _subcommands(parser)) is not None:
        chosen = getattr(ns, subs.dest, None)
        if not isinstance(chosen, str) or chosen not in subs.choices:
            break
        parser = subs.choices[chosen]
    return parser


def _close(word: str, choices: Sequence[str]) -> str | None:
    import difflib

    found = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return found[0] if found else None


def _suggest_options(extras: Sequence[str], parser: argparse.ArgumentParser) -> str:
    options = [o for a in parser._actions for o in a.option_strings if o.startswith("--")]
    for arg in extras:
        if arg.startswith("-"):
            near = _close(arg.split("=", 1)[0], options)
            if near is not None:
                return f" (did you mean {near}?)"
    return f" (see {parser.prog} --help)"


def _suggest_choice(message: str) -> str:
    import re

    m = re.search(r"invalid choice: '(.*?)' \(choose from (.*)\)$", message)
    if m is None:
        return ""
    near = _close(m.group(1), re.findall(r"'([^']*)'", m.group(2)))
    return f" (did you mean {near}?)" if near else ""


def command(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    summary: str,
    description: str,
    examples: Sequence[str],
) -> argparse.ArgumentParser:
    """A subparser with a one-line summary (for ``gpupool --help``), a description and examples."""
    epilog = "examples:\n" + "\n".join(f"  {e}" for e in examples)
    return sub.add_parser(
        name,
        help=summary,
        description=description,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
