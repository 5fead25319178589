"""Self-service benchmarks: ``gpupool estimate`` and ``gpupool new-stack`` against ``--help``.

    .venv/bin/python bench/selfservice_bench.py               # 15 interleaved rounds
    .venv/bin/python bench/selfservice_bench.py --rounds 30

Goal (issue 11): each under 3x ``gpupool --help``. Measured side by side in one run, every
command in a fresh process, rounds interleaved after a warm-up round (bench/run.py's method), CPU
beside wall (a shared machine). ``new-stack`` writes to stdout (``--output -``) so the run leaves
no file, and counts the team's usage in every stack file of the repository, as a user's run does.

Results go to the terminal and to bench/results/selfservice.md.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import run as benchrun  # noqa: E402  (bench/run.py: measure, Series, interleaved, machine)

BIN = Path(sys.executable).parent
RESULTS = HERE / "results" / "selfservice.md"
LLAMA = "tests/fixtures/hf/llama-2-7b-chat-hf.config.json"
GOAL = 3.0


def commands() -> list[tuple[str, list[str]]]:
    gp = str(BIN / "gpupool")
    return [
        ("python -c pass", [str(BIN / "python"), "-c", "pass"]),
        ("gpupool --help", [gp, "--help"]),
        ("gpupool estimate --model-config llama-2-7b (json)",
         [gp, "estimate", "--model-config", LLAMA, "--format", "json"]),
        ("gpupool estimate --params 7B --mode training",
         [gp, "estimate", "--params", "7B", "--mode", "training", "--dtype", "bf16"]),
        ("gpupool new-stack research dev --template inference-service --model-config llama-2-7b",
         [gp, "new-stack", "research", "dev", "--template", "inference-service",
          "--model-config", LLAMA, "--output", "-"]),
        ("gpupool new-stack research staging --template remote-gpu-client",
         [gp, "new-stack", "research", "staging", "--template", "remote-gpu-client",
          "--profile", "stacks/profiles/embeddings.yaml", "--output", "-"]),
        ("gpupool new-stack research dev --template notebook",
         [gp, "new-stack", "research", "dev", "--template", "notebook", "--output", "-"]),
        # reference: new-stack validates the stack it writes and reads every stack file
        ("gpupool validate dev (reference)", [gp, "validate", "dev"]),
    ]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=15)
    args = p.parse_args(argv)
    started = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    where = benchrun.machine()
    series = [(benchrun.Series(label), cmd) for label, cmd in commands()]
    jobs: list[tuple[benchrun.Series, Callable[[], benchrun.Run]]] = [
        (s, (lambda c=cmd: benchrun.measure(c, timeout=120))) for s, cmd in series]
    print(f"self-service: {args.rounds} interleaved rounds (+1 warm-up)", file=sys.stderr)
    benchrun.interleaved(jobs, args.rounds)
    help_wall = series[1][0].median("wall") or float("nan")
    help_cpu = series[1][0].median("cpu") or float("nan")
    head = ["command", "runs", "median wall s", "median CPU s", "peak MiB", "x --help (wall)",
            "x --help (CPU)"]
    rows, goals = [], []
    for s, _ in series:
        wall, cpu = s.median("wall") or 0.0, s.median("cpu") or 0.0
        rows.append([s.label, str(len(s.ok)), f"{wall:.3f}", f"{cpu:.3f}",
                     f"{max(r.peak_mib for r in s.ok):.0f}", f"{wall / help_wall:.2f}",
                     f"{cpu / help_cpu:.2f}"])
        if s.label.startswith(("gpupool estimate", "gpupool new-stack")):
            met = wall / help_wall < GOAL
            goals.append(f"{'met' if met else 'NOT met'}: `{s.label}` at {wall / help_wall:.2f}x "
                         f"`gpupool --help` (goal < {GOAL:g}x)")
    validate = series[-1][0].median("wall") or float("nan")
    notebook = series[-2][0].median("wall") or float("nan")
    goals.append(f"new-stack validates the stack it writes and reads every stack file of the "
                 f"project: its floor is `gpupool validate` (importing and building the stack "
                 f"models); new-stack notebook is {notebook / validate:.2f}x `gpupool validate "
                 "dev` in this run")
    benchrun.print_table("Self-service", head, rows, goals)
    text = "\n".join([
        "# Self-service benchmark results",
        "",
        "Written by `bench/selfservice_bench.py` (see bench/README.md): `gpupool estimate` and "
        "`gpupool new-stack` beside `gpupool --help`, in one run.",
        "",
        f"- date: {started}",
        f"- machine: {where}",
        f"- command: `{' '.join([sys.executable, *sys.argv])}`",
        "",
        benchrun.markdown_table(head, rows),
        "",
        *[f"- {g}" for g in goals],
        "",
    ])
    RESULTS.write_text(text)
    print(f"wrote {RESULTS}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
