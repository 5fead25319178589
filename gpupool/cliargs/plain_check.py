"""``gpupool check``'s plain command lines read without argparse (issue 16 item 25).

Importing argparse (and gettext behind it) and building the check's parser cost ~12 M
instructions, 3 % of a 1,000-resource check, for command lines like ``check plan.json --format
json``. :func:`parse` reads only a shape whose meaning is certain: exact long options of the
check, each value its own non-blank word not starting with ``-`` (or ``--opt=value``), and one
unbroken run of plan files. Anything else (a help, an abbreviation, ``--``, a dash value, a
blank, plan files on both sides of an option, an unknown word) returns None, and the argparse
parser reads it: every help text, usage error and exit code stays argparse's.
tests/cli/test_plain_check.py holds the table to add_check's parser and the two to the same
result.
"""

from __future__ import annotations

from types import SimpleNamespace

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from collections.abc import Sequence

# add_check's options (gpupool.cliargs.stacks): option -> (dest, how), in the order they are
# declared; "append" and "store" take one value, "flag" is store_true.
OPTIONS: dict[str, tuple[str, str]] = {
    "--cluster-dump": ("cluster_dump", "append"),
    "--stack": ("stack", "append"),
    "--base": ("base", "store"),
    "--format": ("format", "append"),
    "--output": ("output", "store"),
    "--config": ("config", "store"),
    "--waivers": ("waivers", "store"),
    "--today": ("today", "store"),
    "--utilisation": ("utilisation", "store"),
    "--teams": ("teams", "store"),
    "--changed-only": ("changed_only", "flag"),
    "--check": ("only_checks", "append"),
    "--skip-check": ("skip_checks", "append"),
    "--tf-root": ("tf_root", "store"),
    "--soft-fail": ("soft_fail", "flag"),
}


def _value(word: str) -> bool:
    """A word argparse reads as a value and Parser does not refuse as blank."""
    return bool(word.strip()) and (word == "-" or word[0] != "-")


def parse(argv: Sequence[str]) -> SimpleNamespace | None:
    """``argv``'s arguments as the check's argparse parser gives them, or None when argparse
    must read it (anything but the plain shape above)."""
    if not argv or argv[0] != "check":
        return None
    found: dict[str, object] = {"command": "check", "plans": []}
    for dest, how in OPTIONS.values():
        found[dest] = False if how == "flag" else None
    plans: list[str] = []
    run_ended = False  # plan files are one unbroken run, as argparse reads them
    i, n = 1, len(argv)
    while i < n:
        word = argv[i]
        if _value(word):  # a plan file ("-": standard input)
            if run_ended:
                return None
            plans.append(word)
            i += 1
            continue
        run_ended = bool(plans)
        option, eq, given = word.partition("=")
        spec = OPTIONS.get(option)
        if spec is None:
            return None
        dest, how = spec
        if how == "flag":
            if eq:
                return None
            found[dest] = True
            i += 1
            continue
        if eq:
            value = given
            i += 1
        elif i + 1 < n:
            value = argv[i + 1]
            i += 2
        else:
            return None
        if not _value(value):
            return None
        if how == "append":
            current = found[dest]
            found[dest] = [*current, value] if isinstance(current, list) else [value]
        else:
            found[dest] = value
    found["plans"] = plans
    return SimpleNamespace(**found)
