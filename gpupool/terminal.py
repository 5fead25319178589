"""Text from files and clouds, made safe to show on a terminal: the one helper for it.

Names and values the kit prints come from places it does not control: a stack file, a plan, a
trace, an AWS autoscaling group's name or tags. A terminal obeys the control characters in
them: ``ESC [ 2 J`` clears the screen, ``ESC ] 0 ; … BEL`` sets the window title (OSC 52 even
writes the clipboard), a C1 ``CSI`` (``\\x9b``) does what ``ESC [`` does on many terminals, a
carriage return overwrites what was printed before it, and the Unicode BIDI controls
(``U+202E`` and friends) show text in another order than it is read (the "Trojan Source" trick).
rich passes all of these through (it strips only BEL, BS, VT, FF and CR).

:func:`safe` writes every such character as a visible escape (``\\x1b``, ``\\u202e``), so what
a reader sees is what the file holds, and nothing acts on the terminal. It is applied where text
reaches a terminal: the CLI's error lines (``gpupool.cli``), the text reports and tables. JSON,
SARIF and the other machine formats keep the value as it is (their encoders escape controls).

:func:`rich_text` is the same for rich: a ``Text`` (never parsed as markup, so ``[/]`` or
``[link=…]`` in a name is shown, not obeyed) holding the safe text.
"""

from __future__ import annotations

import unicodedata

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Final

    from rich.text import Text

# Control (C0, DEL, C1), format (BIDI embeddings, overrides and isolates, zero-width
# characters, the Arabic letter mark), line and paragraph separators, lone surrogates.
_ESCAPED_CATEGORIES: Final = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
_KEPT: Final = frozenset("\n")  # only where the caller asks: multi-line text


def _escape(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 \
        else f"\\U{code:08x}"


def safe(text: object, *, multiline: bool = False) -> str:
    """``text`` with every control, format and separator character written as an escape.

    ``multiline`` keeps newlines (a message of several lines); tabs and everything else that
    moves the cursor or changes how text is read are always escaped. Printable text (the
    common case) is returned as it is, at the cost of one ``str.isprintable``.
    """
    s = text if isinstance(text, str) else str(text)
    if s.isprintable():
        return s
    kept = _KEPT if multiline else frozenset()
    return "".join(
        _escape(ch) if ch not in kept and unicodedata.category(ch) in _ESCAPED_CATEGORIES
        else ch for ch in s)


def rich_text(text: object, style: str = "") -> Text:
    """A rich ``Text`` of :func:`safe` text: shown as it is, never read as markup."""
    from rich.text import Text

    return Text(safe(text), style=style)


__all__ = ["rich_text", "safe"]
