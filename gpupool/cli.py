"""The ``gpupool`` command line.

Argument parsing only: each subcommand lives in ``gpupool.commands.<name>`` and is imported when
it runs, so ``gpupool --help`` never pays for Pulumi, boto3 or rich. Bad input or usage exits 2
with one line per problem on stderr and no traceback; see ``gpupool.errors``.

Each command's arguments are declared by one ``add_<command>`` function in
:mod:`gpupool.cliargs`, listed in ``COMMANDS``: a new command adds its own function and one line
there. Every subparser carries a description and an example (``epilog``), so ``gpupool
<command> --help`` teaches by example.

A run of one command builds that command's subparser only (``gpupool check`` does not pay for
the arguments of ``debt``, ``rightsize`` or ``render``: all twelve took ~10 ms of CPU): when the
first argument names a command, the top parser gets that one subparser, and everything it can
print (the command's help, its usage errors) is what the full parser prints. Anything else
(``gpupool``, ``--help``, ``--version``, an unknown or mistyped command) builds them all, so
the top help lists every command and a typo gets its did-you-mean. A plain ``gpupool check``
command line (:mod:`gpupool.cliargs.plain_check`) is read without argparse at all.
"""

from __future__ import annotations

import os
import sys

from gpupool import __version__

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:  # argparse only when argparse reads the command line
    import argparse
    from collections.abc import Callable, Sequence

    Adder = Callable[["argparse._SubParsersAction[argparse.ArgumentParser]"], None]

# One adder per command, in the order ``gpupool --help`` lists them: the command's name, the
# module of gpupool.cliargs and the function there that adds its subparser (imported when used).
COMMANDS = (  # (not typing.Final: `gpupool --help` imports no typing)
    ("validate", "stacks", "add_validate"),
    ("catalog", "sizing", "add_catalog"),
    ("plan", "stacks", "add_plan"),
    ("check", "stacks", "add_check"),
    ("estimate", "sizing", "add_estimate"),
    ("remoting", "network", "add_remoting"),
    ("netcheck", "network", "add_netcheck"),
    ("new-stack", "sizing", "add_new_stack"),
    ("render", "stacks", "add_render"),
    ("admission", "admission", "add_admission"),
    ("debt", "debt", "add_debt"),
    ("rightsize", "rightsize", "add_rightsize"),
)


def _adder(module: str, function: str) -> Adder:
    import importlib

    adder: Adder = getattr(importlib.import_module(f"gpupool.cliargs.{module}"), function)
    return adder


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command; with ``only`` (a command's name), of that command alone,
    which parses, explains and refuses that command's arguments exactly as the full one."""
    import argparse

    from gpupool.cliargs.parser import Parser

    p = Parser(prog="gpupool", description="GPU pools that scale out on utilisation, never up.",
                epilog="examples:\n  gpupool validate dev\n  gpupool plan dev\n"
                       "  gpupool check --stack dev --base origin/main\n"
                       "  gpupool catalog --gpu g5\n\n"
                       "Every command explains itself: gpupool COMMAND --help",
                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"gpupool {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=Parser)
    for name, module, function in COMMANDS:
        if only is None or name == only:
            _adder(module, function)(sub)
    return p


def parser_for(argv: Sequence[str]) -> argparse.ArgumentParser:
    """The parser ``argv`` needs: the named command's alone when its first word names one."""
    first = argv[0] if argv else None
    return build_parser(first if any(first == c[0] for c in COMMANDS) else None)


def main(argv: Sequence[str] | None = None) -> int:
    closed = _closed_stream()
    if closed is not None:
        return closed
    argv = sys.argv[1:] if argv is None else list(argv)
    from gpupool.cliargs.plain_check import parse

    args = parse(argv) or parser_for(argv).parse_args(argv)
    # The kit's models use no pydantic plugin; looking for one reads the metadata of every
    # installed distribution when the first model is built (10-15 ms of CPU here, measured).
    # A user who sets the variable (to name plugins to skip) keeps their choice.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    name = args.command
    if name == "catalog" and getattr(args, "catalog_command", None) == "refresh":
        name = "catalog_refresh"
    from gpupool.errors import InputError
    from gpupool.interrupt import Terminated, signals_unwind

    try:
        with signals_unwind():  # SIGTERM cleans up (worktrees, temp dirs, children) like Ctrl-C
            # (__import__, not importlib: importlib is not on a check's path)
            module = __import__(f"gpupool.commands.{name.replace('-', '_')}", fromlist=["run"])
            return int(module.run(args))
    except InputError as e:
        from gpupool.terminal import safe

        for line in e.problems:  # names from files and clouds: shown, never obeyed
            sys.stderr.write(f"gpupool {args.command}: {safe(line)}\n")
        return 2
    except ModuleNotFoundError as e:  # a module of an extra the slim install leaves out
        from gpupool.extras import missing

        line = missing(args.command, e)
        if line is None:
            raise
        sys.stderr.write(f"gpupool {args.command}: {line}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write(f"gpupool {args.command}: stopped by SIGINT\n")
        return 130
    except Terminated as e:
        sys.stderr.write(f"gpupool {args.command}: stopped by {e}\n")
        return e.exit_code
    except BrokenPipeError:  # the reader of stdout went away (`| head -1`): not a failure
        from gpupool.output import stdout_gone

        stdout_gone()
        return 0


def _closed_stream() -> int | None:
    """Exit code 2 when standard output or standard error is closed (``>&-``, ``2>&-``): the
    command could not write its result or its errors, and would die on the first line it
    writes. The reason goes to whichever of the two is still open."""
    import fcntl

    for name, stream, other in (("output", sys.stdout, sys.stderr),
                                ("error", sys.stderr, sys.stdout)):
        if stream is not None:
            try:
                fd = stream.fileno()
            except (OSError, ValueError):  # not a descriptor (a test's StringIO): it is open
                continue
            try:
                if fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE != os.O_RDONLY:
                    continue
            except OSError:
                pass
        if other is not None:
            try:
                other.write(f"gpupool: standard {name} is closed; give it a file or "
                            f"/dev/null ({'>' if name == 'output' else '2>'}/dev/null)\n")
                other.flush()
            except (OSError, ValueError):
                pass
        return 2
    return None


def script() -> None:
    """The ``gpupool`` console script: :func:`main`, then, when no other thread runs, leave
    without the interpreter's teardown. It frees every object one by one after the report is
    written: for a check of 10,000 manifests, about a million of them, 0.3-0.6 s of CPU
    (bench/k8s_kinds_bench.py). Output is flushed and atexit handlers (temporary directories'
    finalizers among them) run first, as at a normal exit.

    A check runs with the cyclic collector off from here to the exit. It is one bounded pass
    whose reading, judging and reporting pause the collector anyway (gpupool.gcpause); what is
    left outside that pause is argument parsing and imports, where collections find nothing to
    free, and the first allocation after the pause, which would scan every object the check
    made (all in the youngest generation) just before the process leaves: ~15 M instructions on
    a 1,000-resource plan, 3 % of the check. Every other command keeps the collector: they run
    Pulumi programs, servers and cloud clients, which make cycles.
    """
    if sys.argv[1:2] == ["check"]:
        import gc

        gc.disable()
    code = main()
    import _thread
    import atexit

    if _thread._count():  # another thread still runs (threading is not imported for a check)
        raise SystemExit(code)
    for stream in (sys.stdout, sys.stderr):
        if stream is None:
            continue
        try:
            stream.flush()
        except BrokenPipeError:  # the reader went away: as main says, not a failure
            from gpupool.output import stdout_gone

            stdout_gone()
        except (OSError, ValueError):
            pass
    atexit._run_exitfuncs()
    os._exit(code)


if __name__ == "__main__":
    raise SystemExit(main())
