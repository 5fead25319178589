# ruff: noqa: RUF001  (the multiplication sign of ratios)
"""``gpupool check`` against ``json.load`` of the same file, side by side (issue 7, item 22).

    .venv/bin/python bench/check_bench.py                          # 10k and 100k, both sources
    .venv/bin/python bench/check_bench.py --sizes 10000 --rounds 7 --sources terraform

The floor is what any checker of a JSON plan pays: a fresh Python process that only parses
the file (``python -c "import json, sys; json.load(open(sys.argv[1], 'rb'))"``). Against it,
each in a fresh process on the same file: ``gpupool check FILE --format json`` (report to a
file under bench/out/). Plans: ``gen_tfplan.py N`` (Terraform, ``terraform show -json``) and
``gen_preview.py N`` (``pulumi preview --json``, indented as the CLI prints it), the same fleet.

Rounds are interleaved (floor, check, floor, check, …) after one warm-up, so a busy neighbour
slows both; the ratio is taken per round (check / the floor of the same round) and its median
reported, with medians of wall and CPU time (user + system of the child, which a loaded
machine disturbs less than wall) and peak RSS. Goal: check within 2x of the floor.

``--baseline REF`` adds a third command to the same rounds: ``gpupool check`` of the code at git
ref REF (exported to bench/out/), to measure a change side by side.

``--install wheel`` (the default) measures what a user runs: the kit built as a wheel and
installed, bytecode compiled, into a bare virtualenv of its own under bench/out/ (the baseline
too, in another), its dependencies found in this virtualenv's site-packages through a path-only
``.pth`` line; the floor runs in the same bare virtualenv. ``--install dev`` measures this
editable virtualenv instead, whose start-up runs setuptools' editable finder: it imports
pathlib, re, enum and contextlib into the floor's process as well as the check's, so it hides
their cost and flatters the ratio (0.3-0.6x on 2026-12-03).

Then, in one more fresh process per plan, where the time of a check goes (CPU per phase:
imports, reading and normalising the plan, evaluating, rendering the JSON report) and what the
report would cost fully indented. Results go to the terminal and to bench/results/check.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import run as benchrun  # noqa: E402  (bench/run.py: measure, Series, interleaved, tables)
from gen_preview import write_preview  # noqa: E402
from gen_tfplan import write_plan  # noqa: E402

BIN = Path(sys.executable).parent
OUT = HERE / "out"
RESULTS = HERE / "results" / "check.md"
GOAL = 2.0
FLOOR = "import json, sys; json.load(open(sys.argv[1], 'rb'))"
SOURCES = {"terraform": ("Terraform plan", write_plan),
           "pulumi": ("Pulumi preview", write_preview)}

# Run in a fresh process: CPU seconds per phase of a check, as cli.py runs it.
PHASES = r"""
import importlib.util, json, sys, time
t = time.process_time
made = [0, 0.0]  # dataclasses made (imports, and rule modules the engine imports), their CPU
class _CountDataclasses:  # counts them if dataclasses is imported, without importing it here
    def find_spec(self, name, path=None, target=None):
        if name != "dataclasses":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        run = spec.loader.exec_module
        def exec_module(module):
            run(module)
            process = module._process_class
            def counted(*args, **kwargs):
                t0 = t()
                try:
                    return process(*args, **kwargs)
                finally:
                    made[0] += 1
                    made[1] += t() - t0
            module._process_class = counted
        spec.loader.exec_module = exec_module
        return spec
sys.meta_path.insert(0, _CountDataclasses())
t0 = t()
from gpupool.commands import check as command
from policies.engine import evaluate
from policies.reports import render
from policies.reports import json as json_report
from policies.settings import load_settings
from policies.sources import load_plans
from gpupool.gcpause import paused_gc
t1 = t()
with paused_gc():
    settings = load_settings(None, None)
    plans = load_plans([sys.argv[1]])
    t2 = t()
    result = evaluate(plans, settings)
    t3 = t()
    text = render(result, "json")
    t4 = t()
    indented = json.dumps(result.to_json(), indent=2, ensure_ascii=False, default=str)
    t5 = t()
print(json.dumps({"import": t1 - t0, "dataclasses": made[0], "dataclass_cpu": made[1],
                  "modules": len(sys.modules), "read": t2 - t1, "evaluate": t3 - t2,
                  "render": t4 - t3,
                  "indent2": t5 - t4, "findings": len(result.violations),
                  "layout": "indented" if json_report.indents(result) else "line per item"}))
"""


def _ratios(check: benchrun.Series, floor: benchrun.Series, attr: str) -> list[float]:
    return [getattr(c, attr) / getattr(f, attr) for c, f in zip(check.ok, floor.ok, strict=False)]


def export(ref: str) -> Path:
    """The tree of git ref ``ref``, exported once to bench/out/baseline-<commit>."""
    commit = subprocess.run(["git", "rev-parse", "--short", ref], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout.strip()
    where = OUT / f"baseline-{commit}"
    if not where.exists():
        tmp = where.with_suffix(".tmp")
        tmp.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "archive", commit], cwd=ROOT, check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive, check=True)
        tmp.rename(where)
    return where


def purelib(python: Path) -> str:
    """The site-packages directory of the interpreter ``python``."""
    return subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True, capture_output=True, text=True).stdout.strip()


def installed(tree: Path, name: str) -> Path:
    """A bare virtualenv at bench/out/NAME with the kit of ``tree`` installed from its wheel
    (rebuilt on every call: ``tree`` may have uncommitted changes); its bin directory."""
    where = OUT / name
    if where.exists():
        subprocess.run(["rm", "-rf", str(where)], check=True)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    site = Path(purelib(where / "bin" / "python"))
    subprocess.run([str(BIN / "python"), "-m", "pip", "install", "--quiet", "--no-deps",
                    "--target", str(site), str(tree)], check=True, stdout=subprocess.DEVNULL)
    # the console script pip wrote (its template, the tree's own entry point), run by this venv
    written = (site / "bin" / "gpupool").read_text().split("\n", 1)[1]
    subprocess.run(["rm", "-rf", str(site / "bin")], check=True)
    deps = purelib(BIN / "python")
    (site / "zz-bench-dependencies.pth").write_text(deps + "\n")  # a path only: no finder runs
    script = where / "bin" / "gpupool"
    script.write_text(f"#!{where / 'bin' / 'python'}\n{written}")
    script.chmod(0o755)
    return where / "bin"


def bench(sizes: list[int], sources: list[str], rounds: dict[int, int], timeout: float,
          baseline: tuple[str, Path] | None = None, install: str = "wheel",
          ) -> list[dict[str, object]]:
    bin_dir = installed(ROOT, "venv-wheel") if install == "wheel" else BIN
    py, gp = str(bin_dir / "python"), str(bin_dir / "gpupool")
    old_gp = None
    if baseline is not None and install == "wheel":
        old_gp = str(installed(baseline[1], f"venv-wheel-{baseline[1].name}") / "gpupool")
    rows: list[dict[str, object]] = []
    for n in sizes:
        for source in sources:
            label, writer = SOURCES[source]
            plan = writer(n, OUT / "plans")
            mib = plan.stat().st_size / 2**20
            print(f"{label}, {n:,} resources ({mib:.0f} MiB): {rounds[n]} rounds",
                  file=sys.stderr)
            floor = benchrun.Series("json.load")
            check = benchrun.Series("gpupool check --format json")
            report = OUT / f"check-{source}-{n}.json"
            jobs = [
                (floor, lambda p=plan: benchrun.measure([py, "-c", FLOOR, str(p)],
                                                        timeout=timeout)),
                (check, lambda p=plan, o=report: benchrun.measure(
                    [gp, "check", str(p), "--format", "json"], stdout=o, timeout=timeout,
                    ok_rc=(0, 1))),
            ]
            old = benchrun.Series(f"gpupool check at {baseline[0]}" if baseline else "")
            if old_gp is not None:  # its own installed wheel
                jobs.append((old, lambda p=plan, g=old_gp: benchrun.measure(
                    [g, "check", str(p), "--format", "json"], timeout=timeout, ok_rc=(0, 1))))
            elif baseline is not None:  # the console script puts PYTHONPATH before the worktree
                env = {**os.environ, "PYTHONPATH": str(baseline[1])}
                jobs.append((old, lambda p=plan, e=env: benchrun.measure(
                    [gp, "check", str(p), "--format", "json"], env=e, timeout=timeout,
                    ok_rc=(0, 1))))
            benchrun.interleaved(jobs, rounds[n])
            phases = json.loads(subprocess.run(
                [py, "-c", PHASES, str(plan)], capture_output=True, text=True, check=True,
                cwd=OUT if install == "wheel" else ROOT).stdout)  # -c puts the cwd first
            rows.append({"n": n, "source": label, "mib": mib, "floor": floor, "check": check,
                         "wall": statistics.median(_ratios(check, floor, "wall")),
                         "cpu": statistics.median(_ratios(check, floor, "cpu")),
                         "phases": phases, "old": old if old.runs else None,
                         "old_wall": statistics.median(_ratios(old, floor, "wall"))
                         if old.runs else None,
                         "old_cpu": statistics.median(_ratios(old, floor, "cpu"))
                         if old.runs else None})
    return rows


def tables(rows: list[dict[str, object]]) -> tuple[list[str], list[str]]:
    head = ["plan", "resources", "MiB", "runs", "json.load wall s", "check wall s",
            "check / json.load (wall)", "(CPU)", "json.load peak MiB", "check peak MiB"]
    with_old = any(r["old"] is not None for r in rows)
    if with_old:
        head += ["before: check wall s", "before / json.load (wall)", "(CPU)",
                 "before peak MiB"]
    body = []
    for r in rows:
        f, c, o = r["floor"], r["check"], r["old"]
        assert isinstance(f, benchrun.Series) and isinstance(c, benchrun.Series)
        row = [str(r["source"]), f"{r['n']:,}", f"{r['mib']:.0f}", str(len(c.ok)),
               f"{f.median('wall'):.2f}", f"{c.median('wall'):.2f}",
               f"**{r['wall']:.2f}×**", f"{r['cpu']:.2f}×",
               f"{f.median('peak_mib'):.0f}", f"{c.median('peak_mib'):.0f}"]
        if with_old:
            row += (["—"] * 4 if not isinstance(o, benchrun.Series) else
                    [f"{o.median('wall'):.2f}", f"{r['old_wall']:.2f}×", f"{r['old_cpu']:.2f}×",
                     f"{o.median('peak_mib'):.0f}"])
        body.append(row)
    phase_head = ["plan", "resources", "imports", "dataclasses made: CPU (classes)", "modules",
                  "read + normalise", "evaluate",
                  "JSON report", "(indent=2 would be)", "findings", "report layout"]
    phase_body = []
    for r in rows:
        p = r["phases"]
        assert isinstance(p, dict)
        phase_body.append([str(r["source"]), f"{r['n']:,}", f"{p['import']:.3f}",
                           f"{p['dataclass_cpu']:.3f} ({p['dataclasses']})",
                           str(p["modules"]), f"{p['read']:.3f}", f"{p['evaluate']:.3f}",
                           f"{p['render']:.3f}",
                           f"{p['indent2']:.2f}", f"{p['findings']:,}", str(p["layout"])])
    return ([benchrun.markdown_table(head, body)],
            [benchrun.markdown_table(phase_head, phase_body)])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="10000,100000", help="plan sizes (default: 10000,100000)")
    p.add_argument("--sources", default="terraform,pulumi",
                   help="terraform, pulumi or both (default: both)")
    p.add_argument("--rounds", type=int, default=7, help="rounds below 100k (default: 7)")
    p.add_argument("--big-rounds", type=int, default=3, help="rounds from 100k (default: 3)")
    p.add_argument("--timeout", type=float, default=600, help="cap per run, s (default: 600)")
    p.add_argument("--baseline", metavar="REF",
                   help="also time gpupool check of git ref REF in the same rounds")
    p.add_argument("--install", choices=("wheel", "dev"), default="wheel",
                   help="wheel: the kit installed from its wheel in a bare virtualenv, as users "
                        "have it (default); dev: this editable virtualenv")
    p.add_argument("--output", default=str(RESULTS), help="Markdown results file")
    args = p.parse_args(argv)
    # Users' installs have bytecode caches: a child that may not write them compiles every
    # module from source on every run (a check's imports then cost 2-3x), so none is told not to.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    baseline = (args.baseline, export(args.baseline)) if args.baseline else None
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    sources = [s.strip() for s in args.sources.split(",") if s.strip()]
    rounds = {n: args.rounds if n < 100_000 else args.big_rounds for n in sizes}
    started = datetime.now(UTC)
    machine = benchrun.machine()
    rows = bench(sizes, sources, rounds, args.timeout, baseline, args.install)
    ratios, phases = tables(rows)
    worst = max(max(float(r["wall"]), float(r["cpu"])) for r in rows)  # type: ignore[arg-type]
    goal = (f"- goal: `gpupool check` within {GOAL:.0f}× of `json.load` of the same file: "
            f"{worst:.2f}× at worst (wall or CPU, median of per-round ratios) — "
            f"{'met' if worst <= GOAL else 'NOT met'}")
    text = "\n".join([
        "# `gpupool check` against `json.load` of the plan",
        "",
        "Written by `bench/check_bench.py` (see bench/README.md).",
        "",
        f"- date: {started:%Y-%m-%d %H:%M} UTC",
        f"- machine: {machine}",
        f"- command: `{' '.join(['python', 'bench/check_bench.py', *(argv or sys.argv[1:])])}`",
        "",
        "Each command in a fresh process, rounds interleaved after a warm-up; the ratio is "
        "the median of per-round ratios (check / the floor of the same round). Floor: "
        f"`python -c \"{FLOOR}\" FILE`. Check: `gpupool check FILE --format json`. "
        "Bytecode caches written (`PYTHONDONTWRITEBYTECODE` unset), as an installed kit has them. "
        + ("Install: the kit's wheel in a bare virtualenv (floor and check), as `pip install "
           "gpupool` leaves it." if args.install == "wheel" else
           "Install: the editable dev virtualenv (its start-up finder flatters the ratio).")
        + (f" *Before*: the same command on the code of `{args.baseline}` "
           f"({baseline[1].name.removeprefix('baseline-')}), in the same rounds."
           if baseline else ""),
        "",
        *ratios,
        "",
        goal,
        "",
        "## Where the time of a check goes",
        "",
        "CPU seconds per phase, one fresh process per plan (the garbage collector paused as "
        "`gpupool check` pauses it). *evaluate* includes importing the rule modules the plan "
        "needs (the engine imports them). *Dataclasses made*: the classes the whole run "
        "defines with `@dataclass`, and the CPU that took (Python 3.11 compiles each generated "
        "method apart); *modules*: `sys.modules` after the imports, before evaluating. "
        "*indent=2 would be*: `json.dumps(..., indent=2)` of the "
        "same report, the layout of every report before large ones went one item per line.",
        "",
        *phases,
        "",
    ])
    print(text)
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(f"results written to {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
