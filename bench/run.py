"""gpupool benchmarks: CLI start-up and plan time, and policy checks against Checkov.

Everything is measured side by side in one run, each command in a fresh subprocess, rounds
interleaved (A B C, A B C, …) so that the noise of a shared machine hits every command alike;
read the ratios more than the absolute seconds. Peak memory is the child's maximum resident set
size from ``wait4`` (the largest process of its tree, not a sum).

    .venv/bin/python bench/run.py                       # everything (make bench)
    .venv/bin/python bench/run.py --only startup        # gpupool --help, plan dev, plan of 50 pools
    .venv/bin/python bench/run.py --only check --sizes 1000,10000
    .venv/bin/python bench/run.py --only check --no-checkov

Results go to the terminal and to ``bench/results/latest.md`` (see bench/README.md).
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BIN = Path(sys.executable).parent  # the kit's virtualenv (run this with .venv/bin/python)
OUT = HERE / "out"
CHECKOV = HERE / ".venv-checkov" / "bin" / "checkov"
# "IMDSv1 disabled" on aws_instance and launch templates: the same question as imdsv2-required
CHECKOV_ONE = "CKV_AWS_79"


# --------------------------------------------------------------------------- measuring


@dataclass
class Run:
    wall: float
    cpu: float
    peak_mib: float
    rc: int
    timed_out: bool = False


@dataclass
class Series:
    label: str
    runs: list[Run] = field(default_factory=list)
    note: str = ""
    max_runs: int | None = None  # slow tools on big inputs run fewer rounds
    warmup: bool = True  # one unrecorded run first (pointless for a run of minutes)

    @property
    def ok(self) -> list[Run]:
        return [r for r in self.runs if not r.timed_out]

    @property
    def timed_out(self) -> bool:
        return any(r.timed_out for r in self.runs)

    def median(self, attr: str) -> float | None:
        ok = self.ok
        return statistics.median(getattr(r, attr) for r in ok) if ok else None


def measure(
    cmd: Sequence[str],
    *,
    cwd: Path = ROOT,
    env: dict[str, str] | None = None,
    stdout: Path | None = None,
    timeout: float = 600.0,
    ok_rc: tuple[int, ...] = (0,),
) -> Run:
    """Run ``cmd`` once in a fresh process; wall time, CPU time and peak RSS of its tree."""
    out = stdout.open("wb") if stdout else subprocess.DEVNULL
    try:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            list(cmd), cwd=cwd, env=env, stdout=out, stderr=subprocess.PIPE,
            start_new_session=True,
        )
        killed = threading.Event()

        def kill() -> None:
            killed.set()
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)

        timer = threading.Timer(timeout, kill)
        timer.start()
        err_chunks: list[bytes] = []
        reader = threading.Thread(
            target=lambda: err_chunks.append(proc.stderr.read() if proc.stderr else b"")
        )
        reader.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        timer.cancel()
        reader.join()
        proc.returncode = os.waitstatus_to_exitcode(status)
    finally:
        if stdout:
            out.close()  # type: ignore[union-attr]
    err = b"".join(err_chunks).decode(errors="replace")
    if proc.returncode not in ok_rc and not killed.is_set():
        tail = err.strip().splitlines()[-3:]
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}: {' | '.join(tail)}")
    return Run(
        wall=wall,
        cpu=usage.ru_utime + usage.ru_stime,
        peak_mib=usage.ru_maxrss / 1024,  # KiB on Linux
        rc=proc.returncode,
        timed_out=killed.is_set(),
    )


def interleaved(
    jobs: list[tuple[Series, Callable[[], Run]]], rounds: int, warmup: bool = True
) -> None:
    """Run every job once per round, in the same order, after one unrecorded warm-up round."""
    if warmup:
        for series, job in jobs:
            if series.warmup:
                job()
    for i in range(rounds):
        for series, job in jobs:
            if series.timed_out or (series.max_runs is not None
                                    and len(series.runs) >= series.max_runs):
                continue  # a capped run is not repeated; slow ones stop at max_runs
            series.runs.append(job())
        print(f"  round {i + 1}/{rounds} done", file=sys.stderr)


# --------------------------------------------------------------------------- start-up


def fifty_pool_stack(directory: Path, pools: int = 50) -> Path:
    """A stack of ``pools`` GPU pools (T4, A10G, L4, L40S, T4g on arm64), as a platform might."""
    gpus = [("T4", "x86_64"), ("A10G", "x86_64"), ("L4", "x86_64"), ("L40S", "x86_64"),
            ("T4g", "arm64")]
    lines = [
        "config:",
        "  aws:region: us-east-1",
        "  gpupool:environment: prod",
        "  gpupool:team: ml-platform",
        "  gpupool:costCenter: cc-ml-1042",
        "  gpupool:network:",
        "    createVpc: true",
        "    cidr: 10.70.0.0/16",
        "    azCount: 3",
        "  gpupool:pools:",
    ]
    for i in range(pools):
        gpu, arch = gpus[i % len(gpus)]
        lines += [
            f"    - name: pool-{i:02d}",
            f"      gpu: {gpu}",
            f"      arch: {arch}",
            f"      minSize: {i % 3}",
            f"      maxSize: {4 + i % 8}",
            f"      onDemandBase: {i % 3}",
            "      spotShare: 0.5",
            f"      targetGpuUtilisation: {55 + i % 30}",
            f"      team: team-{i % 7}",
        ]
    path = directory / "Pulumi.bench50.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def startup(rounds: int, plan_rounds: int, timeout: float) -> dict[str, Any]:
    py, gp = str(BIN / "python"), str(BIN / "gpupool")
    have_plan = (ROOT / "gpupool" / "commands" / "plan.py").exists()
    tmp = Path(tempfile.mkdtemp(prefix="gpupool-bench-"))
    stack50 = fifty_pool_stack(tmp)
    base = Series("python -c pass")
    help_ = Series("gpupool --help")
    jobs: list[tuple[Series, Callable[[], Run]]] = [
        (base, lambda: measure([py, "-c", "pass"], timeout=timeout)),
        (help_, lambda: measure([gp, "--help"], timeout=timeout)),
    ]
    plan_jobs: list[tuple[Series, Callable[[], Run]]] = []
    plan_dev, plan_50 = Series("gpupool plan dev"), Series("gpupool plan <50 pools>")
    if have_plan:
        plan_jobs = [
            (plan_dev, lambda: measure([gp, "plan", "dev"], timeout=timeout)),
            (plan_50, lambda: measure([gp, "plan", str(stack50)], timeout=timeout)),
        ]
    else:
        plan_dev.note = plan_50.note = "gpupool/commands/plan.py not present yet"
    print(f"start-up: {rounds} interleaved rounds (+1 warm-up)", file=sys.stderr)
    interleaved(jobs, rounds)
    if plan_jobs:
        print(f"plan: {plan_rounds} interleaved rounds (+1 warm-up), with the baseline",
              file=sys.stderr)
        # bare Python again in the same rounds, so that plan ratios share their noise
        base_p = Series("python -c pass (plan rounds)")
        interleaved([(base_p, jobs[0][1]), *plan_jobs], plan_rounds)
    else:
        base_p = base
    return {"base": base, "help": help_, "plan_dev": plan_dev, "plan_50": plan_50,
            "base_p": base_p}


def startup_table(res: dict[str, Any]) -> tuple[list[str], list[list[str]], list[str]]:
    head = ["command", "runs", "median wall s", "min wall s", "peak MiB", "x python -c pass"]
    rows: list[list[str]] = []
    for key, baseline in (("base", "base"), ("help", "base"), ("plan_dev", "base_p"),
                          ("plan_50", "base_p")):
        s: Series = res[key]
        b = res[baseline].median("wall")
        m = s.median("wall")
        if m is None:
            rows.append([s.label, "0", "—", "—", "—", s.note or "—"])
            continue
        rows.append([
            s.label, str(len(s.ok)), f"{m:.3f}", f"{min(r.wall for r in s.ok):.3f}",
            f"{s.median('peak_mib'):.0f}", f"{m / b:.2f}" if b else "—",
        ])
    goals: list[str] = []
    h, b = res["help"].median("wall"), res["base"].median("wall")
    if h and b:
        goals.append(f"`gpupool --help` within 3x of bare Python: {h / b:.2f}x — "
                     f"{'met' if h / b <= 3 else 'NOT met'}")
    p = res["plan_dev"].median("wall")
    if p is not None:
        goals.append(f"`gpupool plan dev` under 3 s: {p:.2f} s — {'met' if p < 3 else 'NOT met'}")
    return head, rows, goals


# --------------------------------------------------------------------------- check vs Checkov


def ensure_checkov() -> bool:
    if CHECKOV.exists():
        return True
    print("installing Checkov into bench/.venv-checkov (bench/setup-checkov.sh) …", file=sys.stderr)
    proc = subprocess.run([str(HERE / "setup-checkov.sh")], capture_output=True, text=True)
    if proc.returncode != 0 or not CHECKOV.exists():
        print(f"Checkov setup failed: {proc.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return False
    return True


def checkov_version() -> str:
    proc = subprocess.run([str(CHECKOV), "--version"], capture_output=True, text=True,
                          env=checkov_env(), timeout=120)
    return proc.stdout.strip() or "?"


def checkov_env() -> dict[str, str]:
    # no update check, no Prisma Cloud download: the machine has no network, and it is not ours
    return {**os.environ, "CKV_SKIP_PACKAGE_UPDATE_CHECK": "true", "LOG_LEVEL": "WARNING"}


def findings_gpupool(path: Path) -> str:
    try:
        doc = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return "unreadable output"
    violations = doc.get("violations", [])
    by_policy: dict[str, int] = {}
    for v in violations:
        by_policy[v.get("policy", "?")] = by_policy.get(v.get("policy", "?"), 0) + 1
    parts = ", ".join(f"{k} {n}" for k, n in sorted(by_policy.items()))
    return f"{doc.get('verdict')}: {len(violations)} violations ({parts}); " \
           f"{len(doc.get('errors', []))} errors"


def findings_checkov(path: Path) -> str:
    try:
        doc = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return "unreadable output"
    docs = doc if isinstance(doc, list) else [doc]
    s = docs[0].get("summary", {}) if docs else {}
    return (f"{s.get('failed', '?')} failed, {s.get('passed', '?')} passed, "
            f"{s.get('resource_count', '?')} resources")


def check(sizes: list[int], rounds: int, timeout: float, with_checkov: bool) -> dict[str, Any]:
    sys.path.insert(0, str(HERE))
    from gen_tfplan import write_plan  # a sibling script, not a package

    gp = str(BIN / "gpupool")
    have = (ROOT / "gpupool" / "commands" / "check.py").exists() and (
        ROOT / "policies" / "engine.py"
    ).exists()
    checkov_ok = with_checkov and ensure_checkov()
    results: dict[int, list[Series]] = {}
    plans = OUT / "plans"
    for n in sizes:
        plan = write_plan(n, plans)
        print(f"check: {n} resources ({plan.stat().st_size / 2**20:.0f} MiB plan), "
              f"{rounds} round(s)", file=sys.stderr)
        series: list[tuple[Series, Callable[[], Run]]] = []
        gp_s = Series("gpupool check", warmup=n <= 10_000)
        gp_out = OUT / f"gpupool-{n}.json"
        if have:
            series.append((gp_s, lambda p=plan, o=gp_out: measure(
                [gp, "check", str(p), "--format", "json"], stdout=o, timeout=timeout,
                ok_rc=(0, 1))))
        else:
            gp_s.note = "gpupool check not present yet"
        # Checkov takes minutes from 10k resources on: one run each, no warm-up
        slow = 1 if n >= 10_000 else None
        ck1 = Series(f"checkov --check {CHECKOV_ONE}", max_runs=slow, warmup=slow is None)
        cka = Series("checkov (all checks)", max_runs=slow, warmup=slow is None)
        if checkov_ok:
            base = [str(CHECKOV), "-f", "", "--framework", "terraform_plan", "--skip-download",
                    "--quiet", "-o", "json"]
            base[2] = str(plan)
            env = checkov_env()
            series.append((ck1, lambda b=base, o=OUT / f"checkov1-{n}.json", e=env: measure(
                [*b, "--check", CHECKOV_ONE], env=e, stdout=o, timeout=timeout, ok_rc=(0, 1))))
            series.append((cka, lambda b=base, o=OUT / f"checkov-all-{n}.json", e=env: measure(
                b, env=e, stdout=o, timeout=timeout, ok_rc=(0, 1))))
        else:
            ck1.note = cka.note = "Checkov not run"
        # a warm-up only where it is cheap: the OS file cache then holds the plan for everyone
        interleaved(series, rounds)
        gp_s.note = gp_s.note or findings_gpupool(gp_out)
        if checkov_ok:
            ck1.note = ("timed out" if ck1.timed_out else findings_checkov(
                OUT / f"checkov1-{n}.json"))
            cka.note = ("timed out" if cka.timed_out else findings_checkov(
                OUT / f"checkov-all-{n}.json"))
        results[n] = [gp_s, ck1, cka]
    return {"results": results, "checkov": checkov_version() if checkov_ok else None,
            "timeout": timeout}


def check_table(res: dict[str, Any]) -> tuple[list[str], list[list[str]], list[str]]:
    head = ["resources", "tool", "runs", "median wall s", "CPU s", "peak MiB",
            "x gpupool (wall)", "findings"]
    rows: list[list[str]] = []
    per_resource: dict[int, float] = {}
    ratios_one: dict[int, float] = {}
    for n, series in res["results"].items():
        gp_wall = series[0].median("wall")
        if gp_wall is not None:
            per_resource[n] = gp_wall / n
        for s in series:
            m = s.median("wall")
            if m is None:
                cap = f"> {res['timeout']:.0f} (capped)" if s.timed_out else "—"
                rows.append([f"{n:,}", s.label, "0", cap, "—", "—",
                             f"> {res['timeout'] / gp_wall:.0f}" if s.timed_out and gp_wall
                             else "—", s.note])
                continue
            ratio = m / gp_wall if gp_wall else None
            if s.label.startswith("checkov --check") and ratio:
                ratios_one[n] = ratio
            rows.append([f"{n:,}", s.label, str(len(s.ok)), f"{m:.2f}",
                         f"{s.median('cpu'):.2f}", f"{s.median('peak_mib'):.0f}",
                         f"{ratio:.1f}" if ratio else "—", s.note])
    goals: list[str] = []
    if ratios_one:
        worst = min(ratios_one.values())
        goals.append(f"≥10x faster than Checkov with one check: {worst:.1f}x at worst — "
                     f"{'met' if worst >= 10 else 'NOT met'}")
    if 10_000 in res["results"] and res["results"][10_000][0].median("wall") is not None:
        s10k = res["results"][10_000][0]
        w, c = s10k.median("wall"), s10k.median("cpu")
        goals.append(f"10k resources under 1 s: {w:.2f} s wall ({c:.2f} s CPU) — "
                     f"{'met' if w < 1 else 'NOT met'}")
    if len(per_resource) >= 2:
        sizes = sorted(per_resource)
        wall = {n: per_resource[n] * n for n in sizes}
        # marginal cost per resource between sizes: start-up cancels out; linear = constant
        marginal = [(a, b, (wall[b] - wall[a]) / (b - a)) for a, b in itertools.pairwise(sizes)]
        parts = "; ".join(f"{a:,}→{b:,}: {m * 1e6:.0f} µs/resource" for a, b, m in marginal)
        verdict = ""
        if len(marginal) >= 2 and marginal[0][2] > 0:
            r = marginal[-1][2] / marginal[0][2]
            verdict = f" (last/first = {r:.2f}; {'linear' if r < 1.5 else 'NOT linear'})"
        goals.append(f"growth of gpupool check, marginal cost {parts}{verdict}")
    return head, rows, goals


# --------------------------------------------------------------------------- report


def machine() -> str:
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "?"
    try:
        kib = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f"{kib / 2**20:.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return (f"{platform.system()} {platform.release()}, {cpu}, {os.cpu_count()} CPUs, {mem} RAM, "
            f"Python {platform.python_version()}, load average "
            f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} at start")


STARTUP_HEADING = "## Start-up and offline plan"
CHECK_HEADING = "## `gpupool check` vs Checkov on a generated Terraform plan"
RESULTS_HEAD = [
    "# gpupool benchmark results",
    "",
    "Written by `bench/run.py` (see bench/README.md). Each section comes from one run, named "
    "with its date, machine and command; a run of one part (`--only`) keeps the other's section.",
    "Method: every command in a fresh subprocess, rounds interleaved after one warm-up round; "
    "medians; peak = max RSS of the child's process tree (wait4).",
    "",
]


def merge_results(path: Path, sections: dict[str, list[str]]) -> str:
    """The results file with the sections of this run replaced and the others kept."""
    kept: dict[str, list[str]] = {}
    if path.exists():
        current: str | None = None
        for line in path.read_text().splitlines():
            if line.startswith("## "):
                current = line
                kept[current] = []
            elif current is not None:
                kept[current].append(line)
    lines = list(RESULTS_HEAD)
    for heading in (STARTUP_HEADING, CHECK_HEADING):
        body = sections.get(heading, kept.get(heading))
        if body is not None:
            text = "\n".join(body).strip("\n")
            lines += [heading, "", *text.splitlines(), ""]
    return "\n".join(lines).rstrip() + "\n"


def markdown_table(head: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    return "\n".join(lines)


def print_table(title: str, head: list[str], rows: list[list[str]], goals: list[str]) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title=title, title_justify="left")
    for i, h in enumerate(head):
        t.add_column(h, justify="left" if i in (0, 1) or h == "findings" else "right")
    for r in rows:
        t.add_row(*r)
    console = Console()
    if not console.is_terminal:
        console.width = max(console.width, 160)
    console.print(t)
    for g in goals:
        console.print(f"  {g}", highlight=False)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", choices=("startup", "check"), action="append",
                   help="run only this part (repeatable); default: both")
    p.add_argument("--sizes", default="1000,10000,100000",
                   help="Terraform plan sizes for the check part (default: 1000,10000,100000)")
    p.add_argument("--rounds", type=int, default=15, help="start-up rounds (default: 15)")
    p.add_argument("--plan-rounds", type=int, default=5, help="plan rounds (default: 5)")
    p.add_argument("--check-rounds", type=int, default=3, help="check rounds (default: 3)")
    p.add_argument("--timeout", type=float, default=900,
                   help="cap per run in seconds (default: 900); capped runs are not repeated")
    p.add_argument("--no-checkov", action="store_true", help="do not run Checkov")
    p.add_argument("--output", default=str(HERE / "results" / "latest.md"),
                   help="Markdown results file (default: bench/results/latest.md)")
    args = p.parse_args(argv)
    parts = set(args.only or ("startup", "check"))
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    started = datetime.now(UTC)
    run_info = [
        f"- date: {started:%Y-%m-%d %H:%M} UTC",
        f"- machine: {machine()}",
        f"- command: `{' '.join([Path(sys.executable).name, 'bench/run.py', *sys.argv[1:]])}`",
        "",
    ]
    sections: dict[str, list[str]] = {}
    OUT.mkdir(parents=True, exist_ok=True)
    if "startup" in parts:
        res = startup(args.rounds, args.plan_rounds, args.timeout)
        head, rows, goals = startup_table(res)
        print_table("start-up and offline plan", head, rows, goals)
        sections[STARTUP_HEADING] = [*run_info, markdown_table(head, rows), "",
                                     *(f"- {g}" for g in goals), ""]
    if "check" in parts:
        res = check(sizes, args.check_rounds, args.timeout, not args.no_checkov)
        head, rows, goals = check_table(res)
        print_table("gpupool check vs Checkov on a Terraform plan", head, rows, goals)
        sections[CHECK_HEADING] = [
            *run_info,
            "Plan: `bench/gen_tfplan.py N` (format_version 1.2; per GPU pool a launch template, "
            "autoscaling group, target-tracking policy and GPU instance, plus six non-GPU "
            "resources; one pool in ten upsizes its GPU type). Commands: "
            "`gpupool check plan.json --format json`; "
            f"`checkov -f plan.json --framework terraform_plan --skip-download --quiet -o json "
            f"[--check {CHECKOV_ONE}]` ({res['checkov'] or 'not run'}).",
            "",
            markdown_table(head, rows),
            "",
            *(f"- {g}" for g in goals),
            "",
        ]
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(merge_results(out, sections))
    print(f"results written to {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
