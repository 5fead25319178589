"""Self-service benchmarks: ``gpupool estimate`` and ``gpupool new-stack`` against ``--help``.

    .venv/bin/python bench/selfservice_bench.py               # 15 interleaved rounds
    .venv/bin/python bench/selfservice_bench.py --rounds 30
    .venv/bin/python bench/selfservice_bench.py --before ../base/.venv/bin  # side by side

``--before BIN`` runs every gpupool command a second time with another install of the kit (the
virtualenv of a worktree at an older commit), in the same interleaved rounds and from the same
directory (the same stack files), so a change is measured against what it replaced in one run.
The kit's modules are compiled to bytecode first (``compileall``, what pip does for an installed
wheel): with ``PYTHONDONTWRITEBYTECODE`` set, as on the shared VM, an editable install would
otherwise compile them from source in every run, a cost no user pays.

Goal (issue 11): each under 3x ``gpupool --help``. Measured side by side in one run, every
command in a fresh process, rounds interleaved after a warm-up round (bench/run.py's method), CPU
beside wall (a shared machine). ``new-stack`` writes to stdout (``--output -``) so the run leaves
no file, and counts the team's usage in every stack file of the repository, as a user's run does.

Results go to the terminal and to bench/results/selfservice.md.
"""

from __future__ import annotations

import argparse
import subprocess
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


# The floor of any command that validates with pydantic: the import and one model built (no
# plugin scan, as the CLI runs it).
PYDANTIC_FLOOR = ("import os; os.environ['PYDANTIC_DISABLE_PLUGINS'] = '1'\n"
                  "from pydantic import BaseModel\n"
                  "class M(BaseModel):\n    x: int\n"
                  "M(x=1)")


def gpupool_commands(bin_dir: Path, tag: str = "") -> list[tuple[str, list[str]]]:
    gp = str(bin_dir / "gpupool")
    return [(label + tag, [gp, *args]) for label, args in [
        ("gpupool --help", ["--help"]),
        ("gpupool estimate --model-config llama-2-7b (json)",
         ["estimate", "--model-config", LLAMA, "--format", "json"]),
        ("gpupool estimate --params 7B --mode training",
         ["estimate", "--params", "7B", "--mode", "training", "--dtype", "bf16"]),
        ("gpupool new-stack research dev --template inference-service --model-config llama-2-7b",
         ["new-stack", "research", "dev", "--template", "inference-service",
          "--model-config", LLAMA, "--output", "-"]),
        ("gpupool new-stack research staging --template remote-gpu-client",
         ["new-stack", "research", "staging", "--template", "remote-gpu-client",
          "--profile", "stacks/profiles/embeddings.yaml", "--output", "-"]),
        ("gpupool new-stack research dev --template notebook",
         ["new-stack", "research", "dev", "--template", "notebook", "--output", "-"]),
        # reference: new-stack validates the stack it writes and reads every stack file
        ("gpupool validate dev (reference)", ["validate", "dev"]),
    ]]


def commands(before: Path | None = None) -> list[tuple[str, list[str]]]:
    py = str(BIN / "python")
    out = [("python -c pass", [py, "-c", "pass"]),
           ("pydantic floor: import, one model (reference)", [py, "-c", PYDANTIC_FLOOR]),
           *gpupool_commands(BIN)]
    if before is not None:
        out += gpupool_commands(before, " (before)")
    return out


def compile_kit(bin_dir: Path) -> str:
    """Bytecode for the kit's modules of the install in ``bin_dir``, as an installed wheel has;
    returns where that install's code is and its commit."""
    where = subprocess.run(
        [str(bin_dir / "python"), "-c", "import gpupool, os; print(os.path.dirname("
         "gpupool.__file__))"], cwd=bin_dir,  # not this checkout (`-c` puts the cwd first)
        capture_output=True, text=True, check=True).stdout.strip()
    subprocess.run([str(bin_dir / "python"), "-m", "compileall", "-q", where], check=True)
    commit = subprocess.run(["git", "-C", where, "log", "-1", "--format=%h %s"],
                            capture_output=True, text=True, check=False).stdout.strip()
    return f"{Path(where).parent} at {commit[:90] or 'an unknown commit'}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--before", type=Path, metavar="BIN",
                   help="bin directory of another install of the kit to run side by side")
    args = p.parse_args(argv)
    started = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    where = benchrun.machine()
    installs = [f"{tag}: {compile_kit(b)}" for tag, b in
                [("measured", BIN), *([("before", args.before)] if args.before else [])]]
    series = [(benchrun.Series(label), cmd) for label, cmd in commands(args.before)]
    jobs: list[tuple[benchrun.Series, Callable[[], benchrun.Run]]] = [
        (s, (lambda c=cmd: benchrun.measure(c, timeout=120))) for s, cmd in series]
    print(f"self-service: {args.rounds} interleaved rounds (+1 warm-up)", file=sys.stderr)
    benchrun.interleaved(jobs, args.rounds)
    by_label = {s.label: s for s, _ in series}

    def medians(label: str) -> tuple[float, float]:
        s = by_label[label]
        return s.median("wall") or float("nan"), s.median("cpu") or float("nan")

    head = ["command", "runs", "median wall s", "median CPU s", "peak MiB", "x --help (wall)",
            "x --help (CPU)"]
    rows, goals = [], []
    for s, _ in series:
        tag = " (before)" if s.label.endswith(" (before)") else ""
        help_wall, help_cpu = medians("gpupool --help" + tag)  # each install's own --help
        wall, cpu = medians(s.label)
        rows.append([s.label, str(len(s.ok)), f"{wall:.3f}", f"{cpu:.3f}",
                     f"{max(r.peak_mib for r in s.ok):.0f}", f"{wall / help_wall:.2f}",
                     f"{cpu / help_cpu:.2f}"])
        if s.label.startswith(("gpupool estimate", "gpupool new-stack")) and not tag:
            met = wall / help_wall < GOAL
            goals.append(f"{'met' if met else 'NOT met'}: `{s.label}` at {wall / help_wall:.2f}x "
                         f"`gpupool --help` (goal < {GOAL:g}x; CPU {cpu / help_cpu:.2f}x)")
    validate = medians("gpupool validate dev (reference)")[0]
    notebook = medians("gpupool new-stack research dev --template notebook")[0]
    goals.append(f"new-stack validates the stack it writes and reads every stack file of the "
                 f"project: its floor is `gpupool validate` (importing and building the stack "
                 f"models); new-stack notebook is {notebook / validate:.2f}x `gpupool validate "
                 "dev` in this run")
    floor = medians("pydantic floor: import, one model (reference)")[1]
    goals.append(f"pydantic's own floor (import, one model built) is "
                 f"{floor / medians('gpupool --help')[1]:.2f}x `gpupool --help` in CPU")
    for label, _ in gpupool_commands(BIN):
        if label + " (before)" in by_label:
            (bw, bc), (aw, ac) = medians(label + " (before)"), medians(label)
            goals.append(f"`{label}`: CPU {bc:.3f} s before, {ac:.3f} s after "
                         f"({(ac - bc) / bc:+.0%}); wall {bw:.3f} s, {aw:.3f} s")
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
        *[f"- {i}" for i in installs],
        "- the kit's modules compiled to bytecode first, as an installed wheel has them (see "
        "bench/README.md); CPU is user + system time of the process",
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
