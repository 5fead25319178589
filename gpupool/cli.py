"""The ``gpupool`` command line.

Argument parsing only: each subcommand lives in ``gpupool.commands.<name>`` and is imported when
it runs, so ``gpupool --help`` never pays for Pulumi, boto3 or rich. Bad input or usage exits 2
with one line per problem on stderr and no traceback; see ``gpupool.errors``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from gpupool import __version__

FORMATS_CHECK = ("text", "json", "sarif", "junit", "markdown")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"{self.prog}: {message}\n")
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="gpupool", description="GPU pools that scale out on utilisation, never up.")
    p.add_argument("--version", action="version", version=f"gpupool {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    v = sub.add_parser("validate", help="validate a stack's configuration (every error at once)")
    v.add_argument("stack", metavar="STACK", help="stack name (stacks/Pulumi.<name>.yaml) or file")

    c = sub.add_parser("catalog", help="show the GPU instance catalog")
    c.add_argument("--gpu", metavar="MODEL", help="only types carrying this GPU model (e.g. T4)")
    c.add_argument("--format", choices=("text", "json"), default="text")
    csub = c.add_subparsers(dest="catalog_command", parser_class=_Parser)
    r = csub.add_parser("refresh", help="rebuild the catalog from EC2 DescribeInstanceTypes")
    r.add_argument("--output", metavar="FILE", help="where to write (default: the bundled file)")
    r.add_argument("--region", default="us-east-1")
    r.add_argument("--prices", metavar="FILE", help="price list JSON (default: the bundled one)")

    pl = sub.add_parser("plan", help="offline plan of a stack (Pulumi mock runtime)")
    pl.add_argument("stack", metavar="STACK")
    pl.add_argument("--format", choices=("text", "json"), default="text")
    pl.add_argument("--output", metavar="FILE")

    ch = sub.add_parser("check", help="evaluate policies on plans or a stack")
    ch.add_argument("plans", metavar="PLAN_FILE", nargs="*")
    ch.add_argument("--stack", metavar="STACK")
    ch.add_argument("--base", metavar="GIT_REF", help="with --stack: diff against this git ref")
    ch.add_argument("--format", choices=FORMATS_CHECK, default="text")
    ch.add_argument("--output", metavar="FILE")
    ch.add_argument("--config", metavar="FILE", help="policy configuration (YAML)")
    ch.add_argument("--waivers", metavar="FILE", help="waivers (YAML)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    name = args.command
    if name == "catalog" and getattr(args, "catalog_command", None) == "refresh":
        name = "catalog_refresh"
    from gpupool.errors import InputError

    try:
        module = importlib.import_module(f"gpupool.commands.{name}")
        return int(module.run(args))
    except InputError as e:
        for line in e.problems:
            sys.stderr.write(f"gpupool {args.command}: {line}\n")
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
