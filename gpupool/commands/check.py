"""``gpupool check [PLAN_FILE ...] [--stack STACK [--base GIT_REF]] [--format ...] [--output FILE]
[--config FILE] [--waivers FILE] [--check ID,…] [--skip-check ID,…] [--soft-fail]
[--tf-root DIR]``.

Exit 0 when nothing blocks, 1 on a mandatory violation or a rule error, 2 on bad input or usage;
``--soft-fail`` reports violations and exits 0 (a rule error still 1, bad input still 2).
Every input problem (config, waivers, each plan file) is collected and reported at once, one
line each, before anything is evaluated: a check that cannot read all of its input never
reports a verdict, so unreadable input can never pass.
"""

from __future__ import annotations

import os
import re
import sys

from gpupool.errors import InputError
from gpupool.gcpause import paused_gc
from gpupool.output import write_output, write_stdout
from gpupool.record import replace

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:  # the policy engine, sources and rich load only when the command runs
    import argparse
    from datetime import date
    from pathlib import Path
    from typing import Any

    from policies.model import Plan
    from policies.result import Result
    from policies.settings import Settings

DEBUG_ENV = "GPUPOOL_DEBUG"  # set to see the traceback behind an internal error


def run(args: argparse.Namespace) -> int:
    plans_given: list[str] = list(args.plans or [])
    args.stack = list(dict.fromkeys(_stacks(args.stack)))  # every --stack, each once
    reports_wanted(args.format, args.output)  # a usage error before seconds of planning
    tf_root(args)
    if plans_given.count("-") > 1:
        raise InputError("-: standard input can be read only once; give it as one PLAN_FILE")
    if args.stack:  # planned by the Pulumi program in child processes: say it here
        from gpupool.extras import require

        require("infra", "--stack (the offline plan runs the Pulumi program)", "pulumi")
    if args.base and not args.stack:
        raise InputError("--base GIT_REF needs --stack STACK: it names the ref the stack is "
                         "planned at to diff against the working tree")
    if not plans_given and not args.stack and not getattr(args, "cluster_dump", None):
        raise InputError("nothing to check: give one or more PLAN_FILEs (terraform show -json, "
                         "pulumi preview --json, gpupool plan --format json), --stack STACK or "
                         "--cluster-dump FILE")

    today = _today(getattr(args, "today", None))
    with paused_gc():  # reading, judging and reporting a large plan: see gpupool.gcpause
        return _check(args, plans_given, today)


def _check(args: argparse.Namespace, plans_given: list[str], today: date | None) -> int:
    settings, plans = _load_inputs(args, plans_given)

    from policies.engine import evaluate

    try:
        result = evaluate(plans, settings, today=today,
                          changed_only=bool(getattr(args, "changed_only", False)))
    except Exception as e:  # an engine bug: the check fails, loudly, in one line
        if os.environ.get(DEBUG_ENV):
            raise
        sys.stderr.write(f"gpupool check: internal error while evaluating policies: "
                         f"{type(e).__name__}: {e} (set {DEBUG_ENV}=1 for the traceback)\n")
        return 1
    for plan in plans:  # a pass on nothing is said out loud, never silent
        if not plan.changes:
            sys.stderr.write(f"gpupool check: note: {plan.origin}: no resources to judge\n")
    result = with_waiver_detail(result, settings)
    for plan in plans:  # what the admission policies would refuse, per namespace
        if plan.meta.get("cluster_dump"):
            from policies.sources.cluster_dump import summary

            sys.stderr.write(f"gpupool check: note: {summary(plan, result.violations)}\n")
    for note in getattr(settings, "notes", ()):
        sys.stderr.write(f"gpupool check: note: {note}\n")
    if getattr(args, "soft_fail", False):
        result = replace(result, soft_fail=True)
        blocking = sum(1 for v in result.violations if v.blocking)
        if blocking and not result.errors:
            sys.stderr.write(f"gpupool check: note: --soft-fail: {blocking} mandatory "
                             f"violation{'s' if blocking != 1 else ''} reported, exit 0\n")

    _emit(result, args)
    return result.exit_code


def _load_inputs(args: argparse.Namespace, plan_files: list[str]) -> tuple[Settings, list[Plan]]:
    """Settings and every plan, or one InputError listing every problem found."""
    from policies.settings import load_settings
    from policies.sources import load_plans

    problems: list[str] = []
    settings = None
    try:
        settings = load_settings(args.config, args.waivers)
    except InputError as e:
        problems += e.problems
    only, skip = getattr(args, "only_checks", None), getattr(args, "skip_checks", None)
    if only or skip:  # --check / --skip-check: an unknown ID is bad input, bad config or not
        from policies.selection import select

        try:
            chosen = select(settings or _default_settings(), only, skip)
            settings = chosen if settings is not None else None
        except InputError as e:
            problems += e.problems
    if settings is not None and getattr(args, "teams", None):
        try:
            settings = with_teams(settings, args.teams)
        except InputError as e:
            problems += e.problems
    if settings is not None and getattr(args, "utilisation", None):
        try:
            settings = with_utilisation(settings, args.utilisation)
        except InputError as e:
            problems += e.problems
    plans: list[Plan] = []
    to_load = []
    for name in plan_files:
        hint = stack_file_hint(name)  # a Pulumi stack file given as a plan: say what to run
        if hint is not None:
            problems.append(hint)
        else:
            to_load.append(name)
    try:  # plan files one plan each; Kubernetes manifests (files, directories) one plan together
        plans = load_plans(to_load, tf_root(args))  # .tf sources: --tf-root, else beside
    except InputError as e:
        problems += e.problems
    for dump in getattr(args, "cluster_dump", None) or []:  # kubectl get … -A -o json
        from policies.sources.cluster_dump import load_cluster_dump

        try:
            plans.append(load_cluster_dump(dump))
        except InputError as e:
            problems += e.problems
    if args.stack and not problems:  # planning a stack is slow: only once the rest is sound
        from pathlib import Path

        from policies.sources.diff import plan_stacks

        try:  # every stack planned in parallel, the base ref checked out once
            plans += plan_stacks(args.stack, base=args.base, cwd=Path.cwd())
        except InputError as e:
            problems += e.problems
    if problems:
        raise InputError(problems)
    assert settings is not None
    return settings, plans


def _default_settings() -> Settings:
    from policies.settings import Settings

    return Settings.default()


def _today(given: str | None) -> date | None:
    """``--today YYYY-MM-DD``: the day waiver expiry is judged on (tests, or a dry run)."""
    if given is None:
        return None
    from datetime import date

    try:
        return date.fromisoformat(given.strip())
    except ValueError:
        raise InputError(f"--today: expected a date YYYY-MM-DD, got {given[:40]!r}") from None


_STACK_FILE = r"^Pulumi\.(?P<stack>[^/]+)\.ya?ml$"  # compiled when a hint is wanted


def stack_file_hint(name: str) -> str | None:
    """A Pulumi stack file given where a plan file goes: say how to check the stack instead
    (``--stack dev`` when it is the project's own stack, else ``--stack PATH``)."""
    if "Pulumi." not in name:  # (what the pattern needs: no pathlib for a plan file)
        return None
    from pathlib import Path

    m = re.match(_STACK_FILE, Path(name).name)
    if m is None or not Path(name).is_file():
        return None
    stack = m.group("stack")
    try:
        from gpupool.config import stack_path

        own = stack_path(stack, Path.cwd()).resolve() == Path(name).resolve()
    except (InputError, OSError):
        own = False
    return (f"{name}: expected a plan file (terraform show -json, pulumi preview --json, "
            f"gpupool plan --format json), got a Pulumi stack file; to check the stack, run: "
            f"gpupool check --stack {stack if own else name}")


def _stacks(given: str | list[str] | None) -> list[str]:
    """``--stack`` is repeatable; a Namespace built by hand may hold one name."""
    if given is None:
        return []
    return [given] if isinstance(given, str) else list(given)


def with_teams(settings: Settings, path: str) -> Settings:
    """``--teams FILE``: the teams file team-gpu-quota judges by (it wins over the config's)."""
    from gpupool.teams import load_teams
    from policies.rules import get_rule
    from policies.rules.params import dump
    from policies.rules.team_gpu_quota import params_with_file

    load_teams(path)  # every problem of the file, one line each, before the params see it
    rule_id = get_rule("team-gpu-quota").meta.id
    current = settings.policies[rule_id]
    raw = dump(current.params, exclude_defaults=True)
    params = get_rule(rule_id).parse_params(params_with_file(raw, path))
    return replace(settings, policies={**settings.policies,
                                       rule_id: current.with_params(params)})


def with_utilisation(settings: Settings, path: str) -> Settings:
    """``--utilisation FILE``: the snapshot gpu-capacity-vs-utilisation judges by (it wins over
    the config's utilisationSnapshot)."""
    from gpupool.debt.snapshot import read_snapshot
    from policies.rules import get_rule
    from policies.rules.params import dump

    read_snapshot(path)  # every problem of the file, one line each, before the params see it
    from pathlib import Path

    rule = get_rule("gpu-capacity-vs-utilisation")
    current = settings.policies[rule.meta.id]
    raw = dump(current.params, exclude_defaults=True)
    params = rule.parse_params({**raw, "utilisationSnapshot": str(Path(path).resolve())})
    return replace(settings, policies={**settings.policies,
                                       rule.meta.id: current.with_params(params)})


def with_waiver_detail(result: Result, settings: Settings) -> Result:
    """Copy each waiver's owner, reason and expiry onto the findings it waives.

    The engine marks a waived finding with the waiver id only; reports (SARIF suppressions,
    the PR comment) should say who accepted the risk, why, and until when.
    """
    waivers = {w.id: w for w in getattr(settings, "waivers", ())}
    if not any(v.waived_by in waivers for v in result.violations):
        return result
    out = []
    for v in result.violations:
        w = waivers.get(v.waived_by) if v.waived_by is not None else None
        if w is None:
            out.append(v)
            continue
        expires = getattr(w, "expires", None)
        info: dict[str, Any] = {
            "id": w.id,
            "owner": getattr(w, "owner", None),
            "reason": getattr(w, "reason", None),
            "expires": expires.isoformat() if expires is not None else None,
        }
        out.append(replace(v, detail={**v.detail, "waiver": info}))
    return replace(result, violations=out)


def reports_wanted(given: list[str] | str | None, output: str | None
                   ) -> list[tuple[str, str | None]]:
    """``--format`` values as (format, file or None for stdout): ``--format sarif=a.sarif
    --format markdown=c.md --format text`` asks for three reports from one evaluation. The one
    format without ``=FILE`` goes to ``--output`` (or stdout); only one may."""
    from policies.reports import FORMATS

    specs = [given] if isinstance(given, str) else list(given or ["text"])
    out: list[tuple[str, str | None]] = []
    for spec in specs:
        fmt, eq, file = spec.partition("=")
        fmt = fmt.strip()
        if fmt not in FORMATS or (eq and not file):
            hint = f" (did you mean {close[0]}?)" if (close := _close(fmt, FORMATS)) else ""
            raise InputError(f"--format: expected one of {', '.join(FORMATS)}, optionally "
                             f"followed by =FILE, got {spec[:60]!r}{hint}")
        out.append((fmt, file or None))
    plain = [fmt for fmt, file in out if file in (None, "-")]
    if len(plain) > 1:
        raise InputError(f"--format: {' and '.join(plain)} would both go to "
                         f"{output or 'stdout'}; give all but one a file: --format FORMAT=FILE")
    return [(fmt, file if file is not None else output) for fmt, file in out]


def _close(word: str, choices: tuple[str, ...]) -> list[str]:
    import difflib

    return difflib.get_close_matches(word, choices, n=1, cutoff=0.6)


def _emit(result: Result, args: argparse.Namespace) -> None:
    from policies.reports import render_utf8

    written: list[str] = []
    for fmt, file in reports_wanted(args.format, args.output):
        color, width = False, None
        if fmt == "text" and file is None:
            color, width = _terminal()
        root = None
        if fmt == "sarif":  # SARIF's paths are relative to the checkout (render: its only reader)
            from pathlib import Path

            root = repo_root(Path.cwd())
        text = render_utf8(result, fmt, color=color, width=width, root=root,
                           tf_root=tf_root(args))
        if file is None:
            write_stdout(text)
        elif write_output(file, text):
            pass  # it went to stdout after all (-, /dev/stdout): no status line for it
        else:
            written.append(f"{fmt} report written to {file}")
    if written:  # (the text formats' common code: not imported for a report to stdout)
        from policies.reports._common import verdict_line

        sys.stderr.write(f"gpupool check: {verdict_line(result)}; {', '.join(written)}\n")


def tf_root(args: argparse.Namespace) -> Path | None:
    """``--tf-root DIR``: where the Terraform sources are (a directory), or None."""
    given = getattr(args, "tf_root", None)
    if given is None:
        return None
    from pathlib import Path

    path = Path(given)
    if not given.strip() or not path.is_dir():
        raise InputError(f"--tf-root: expected the directory of the Terraform root module's "
                         f"sources (*.tf), got {given[:80]!r}"
                         f"{' (not a directory)' if path.exists() else ' (no such directory)'}")
    return path


def _terminal() -> tuple[bool, int | None]:
    """Colour and width only when rich says stdout is a terminal that wants colour
    (honouring NO_COLOR, FORCE_COLOR and TERM=dumb)."""
    from rich.console import Console

    console = Console(file=sys.stdout)
    if console.is_terminal and console.color_system is not None and not console.no_color:
        return True, console.width
    return False, None


def repo_root(start: Path) -> Path:
    """The enclosing git checkout (SARIF paths are relative to it), else ``start``."""
    for d in (start, *start.parents):
        if (d / ".git").exists():
            return d
    return start


