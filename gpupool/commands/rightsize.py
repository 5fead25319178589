"""``gpupool rightsize [--stack S ...] [--since 14d | --utilisation FILE] [--write] [--pr-body F]``.

Reads the debt report of every region the stacks are in and of their Kubernetes pools'
Prometheus (the same reading as ``gpupool debt``), or a saved one (``--utilisation``,
:mod:`gpupool.rightsize.snapshot`: both halves, no call), proposes new sizes
(:mod:`gpupool.rightsize.propose`, :mod:`gpupool.rightsize.kubernetes`), prints each stack
file's diff or writes it (:mod:`gpupool.rightsize.edit`), each edited stack validated before
it is written.
Stdout is the diff; what was left alone and why goes to stderr.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpupool.errors import InputError

if TYPE_CHECKING:
    from gpupool.debt.window import Window


def headroom(text: str) -> float:
    raw = text.strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 2:
        raise InputError(f"--headroom {text}: expected a share from 0% to 200% (20% or 0.2)")
    return value


def _stacks(names: list[str] | None) -> list[object]:
    from gpupool.config.loader import load_stack
    from gpupool.config.stackfile import find_project, stack_config_dir

    if not names:
        project = find_project(Path.cwd())
        if project is None:
            raise InputError("--stack: expected a stack, or a Pulumi project here")
        folder = project.parent / stack_config_dir(project)
        names = [str(p) for p in sorted(folder.glob("Pulumi.*.yaml"))]
    return [load_stack(n) for n in names]


def _saved(args: argparse.Namespace) -> Any:
    """The :class:`~gpupool.rightsize.snapshot.Saved` figures of ``--utilisation FILE`` (no
    window options beside it)."""
    from gpupool.rightsize.snapshot import read_saved

    for flag, value in (("--since", args.since), ("--start", args.start), ("--end", args.end),
                        ("--period", args.period), ("--region", args.region),
                        ("--prometheus", (args.prometheus or [None])[0]),
                        ("--no-aws", "" if args.no_aws else None)):
        if value is not None:
            raise InputError(f"{flag} {value}".strip() + f": expected no {flag} with "
                             "--utilisation (the snapshot's window, regions and pools are the "
                             "ones read)")
    return read_saved(args.utilisation)


def _live(args: argparse.Namespace, entries: list[Any]) -> tuple[list[Any], Window, int, Any]:
    """The debt read of every region the stacks are in: figures, window, API calls, deadline."""
    from gpupool.catalog import load_catalog
    from gpupool.debt.aws import make_clients
    from gpupool.debt.deadline import Deadline, parse_deadline
    from gpupool.debt.report import build_report
    from gpupool.debt.window import resolve_window

    since = args.since or (None if args.start else "14d")
    window = resolve_window(since=since, start=args.start, end=args.end, period=args.period,
                            cloudwatch=not args.no_aws)
    deadline = Deadline(parse_deadline(args.deadline))
    regions = [args.region] if args.region else sorted({e.config.region for e in entries})
    figures: list[Any] = []
    calls = 0
    for region in [] if args.no_aws else regions:
        report = build_report(make_clients(region, deadline=deadline), window,
                              load_catalog(region=region), compute_optimizer=False)
        figures += report.pools
        calls += report.api_calls
    return figures, window, calls, deadline


def run(args: argparse.Namespace) -> int:
    from gpupool.catalog import load_catalog
    from gpupool.debt.window import parse_duration
    from gpupool.rightsize.propose import StackEntry, propose

    share = headroom(args.headroom)
    span = parse_duration(args.min_span, "--min-span").total_seconds() / 3600
    saved = None
    if args.utilisation:
        saved = _saved(args)
        figures, window, calls = saved.pools, saved.window, 0
    loaded = _stacks(args.stack)
    entries = [StackEntry(s.name, s.shown_path, s.config, s.flat)  # type: ignore[attr-defined]
               for s in loaded]
    if not args.utilisation:
        figures, window, calls, deadline = _live(args, entries)
    outcome = propose(figures, window, entries, pct=args.percentile, headroom=share,
                      min_span_hours=span)
    _not_found(args, saved, entries, outcome)
    if saved is not None:  # never read live beside a snapshot of another window
        _saved_kubernetes(args, saved, entries, outcome, share, span)
        queries = 0
    else:
        regions = [args.region] if args.region else sorted({e.config.region for e in entries})
        queries = _kubernetes(args, entries, window, deadline, outcome, share, span,
                              load_catalog(region=regions[0] if regions else "us-east-1"))
    _apply(outcome, loaded, write=args.write)
    for name, why in outcome.skipped:
        sys.stderr.write(f"gpupool rightsize: {name}: left alone: {why}\n")
    if args.pr_body:
        from gpupool.output import write_output
        from gpupool.rightsize.prbody import pr_body

        write_output(args.pr_body, pr_body(outcome, window, args.percentile, share),
                     option="--pr-body")
    sys.stderr.write(f"gpupool rightsize: {len(outcome.proposals)} pool(s) changed in "
                     f"{len({p.path for p in outcome.proposals})} stack file(s); {calls} API "
                     f"call(s), {queries} Prometheus quer(ies)\n")
    return 0


def _not_found(args: argparse.Namespace, saved: Any, entries: list[Any], outcome: Any) -> None:
    """Say why each stack pool or tier that no measured group was matched to is left alone."""
    from gpupool.rightsize.propose import unmatched

    for entry, _section, item in unmatched(entries, outcome.matched):
        region, env = entry.config.region, entry.config.environment
        tags = f"managed-by=gpupool, environment={env}, gpupool:pool={item.name}"
        if saved is not None:
            why = f"not in the snapshot {saved.path}: none of its groups in {region} is " \
                  f"tagged {tags}"
        elif args.no_aws:
            why = "not read (--no-aws)"
        elif args.region and args.region != region:
            why = f"not read: the stack is in {region}, --region is {args.region}"
        else:
            why = f"no group in {region} is tagged {tags}: not deployed, or its tags changed"
        outcome.skipped.append((f"{entry.stack}/{item.name}", why))


def _saved_kubernetes(args: argparse.Namespace, saved: Any, entries: list[Any],
                      outcome: Any, share: float, span: float) -> None:
    """The stacks' Kubernetes pools as the snapshot saved them: proposed as a live read's."""
    names = sorted({k.name for e in entries for k in e.config.kubernetes})
    if args.no_prometheus:
        outcome.skipped.extend((n, "not read (--no-prometheus)") for n in names)
        return
    from gpupool.rightsize.kubernetes import propose_kubernetes

    outcome.skipped.extend(saved.left_alone)
    there = {f.name for f in saved.pools if f.platform != "aws"}
    outcome.skipped.extend(
        (n, f"not in the snapshot {saved.path} (write one that reads it: gpupool debt --stack "
            "STACK --format json --output FILE)") for n in names if n not in there)
    kube = propose_kubernetes(saved.kubernetes, saved.window, entries, pct=args.percentile,
                              headroom=share, min_span_hours=span)
    outcome.proposals.extend(kube.proposals)
    outcome.skipped.extend(kube.skipped)


def _kubernetes(args: argparse.Namespace, entries: list[object], window: object,
                deadline: object, outcome: object, share: float, span: float,
                catalog: object) -> int:
    """Read the stacks' Kubernetes pools and add their proposals; the queries it took."""
    configs = [e.config for e in entries]  # type: ignore[attr-defined]
    if args.no_prometheus:
        outcome.skipped.extend((k.name, "not read (--no-prometheus)")  # type: ignore[attr-defined]
                               for c in configs for k in c.kubernetes)
        return 0
    if not any(c.kubernetes for c in configs) and not args.prometheus:
        return 0
    from gpupool.debt.prometheus.auth import make_auth
    from gpupool.rightsize.kube_read import read_kubernetes
    from gpupool.rightsize.kubernetes import propose_kubernetes

    auth = make_auth(bearer_file=args.prometheus_bearer_token_file,
                     basic_user=args.prometheus_basic_auth,
                     password_file=args.prometheus_password_file,
                     ca_file=args.prometheus_ca_file, headers=args.prometheus_header or [],
                     sigv4_region=args.prometheus_sigv4)
    read = read_kubernetes(args.prometheus or [], configs, window, catalog,  # type: ignore[arg-type]
                           auth, deadline, args.resolution)
    kube = propose_kubernetes(read.figures, window, entries,  # type: ignore[arg-type]
                              pct=args.percentile, headroom=share, min_span_hours=span)
    outcome.proposals.extend(kube.proposals)  # type: ignore[attr-defined]
    outcome.skipped.extend(read.unread + kube.skipped)  # type: ignore[attr-defined]
    return read.queries


def _apply(outcome: object, loaded: list[object], *, write: bool) -> None:
    from gpupool.config.loader import load_stack
    from gpupool.output import write_stdout
    from gpupool.rightsize.edit import apply, unified_diff

    by_path: dict[str, list[tuple[tuple[str | int, ...], float]]] = {}
    for p in outcome.proposals:  # type: ignore[attr-defined]
        by_path.setdefault(p.path, []).extend((p.key_path(c), c.new) for c in p.changes)
    files = {s.shown_path: s.path for s in loaded}  # type: ignore[attr-defined]
    for shown, changes in sorted(by_path.items()):
        path = files[shown]
        before = path.read_text(encoding="utf-8")
        after = apply(before, changes, shown)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".yaml", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
                out.write(after)
            load_stack(tmp)  # the edited stack validates, or nothing is written
            if write:
                os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        if not write:
            write_stdout(unified_diff(before, after, shown))
        else:
            sys.stderr.write(f"gpupool rightsize: {shown}: {len(changes)} value(s) written\n")
