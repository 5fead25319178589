"""Every report ``gpupool check`` writes, and every help text, saved to compare two trees byte for
byte: a change meant to make the CLI faster must not change a byte of what it prints.

    .venv/bin/python bench/same_reports.py bench/out/same/before        # this tree
    .venv/bin/python bench/same_reports.py bench/out/same/main --tree bench/out/baseline-abc123
    diff -r bench/out/same/main bench/out/same/before                 # empty: byte-identical

For each input (every plan fixture under tests/fixtures, each manifest file and directory, the
cluster dump, a 1,000-resource Terraform plan and Pulumi preview from bench/gen_*.py, a plan on
standard input, the stacks through ``--stack``) one fresh ``python -m gpupool check`` writes the
five formats (``--format F=FILE``) and the text report on stdout; its exit code, stdout and
stderr are saved too. Then ``gpupool --help``, every command's ``--help``, ``--version`` and a
few usage errors. ``--tree DIR`` runs the code of DIR (put first on ``PYTHONPATH``), as
bench/check_bench.py's ``--baseline`` does.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
FIXTURES = ROOT / "tests" / "fixtures"
FORMATS = ("text", "json", "sarif", "junit", "markdown")
COMMANDS = ("validate", "catalog", "catalog refresh", "plan", "check", "estimate", "remoting",
            "netcheck", "netcheck serve", "netcheck probe", "new-stack", "render", "admission",
            "admission render", "debt", "rightsize")
USAGE = (["check", "--fromat", "json", "x.json"], ["chek", "plan.json"], ["bogus"],
         ["check", "x.json", "--format", "sarfi"], ["catalog", "--format", "jsn"],
         ["netcheck"], ["check"], ["check", "--today", ""], ["plan"], ["check", "--help", "x"],
         ["check", "missing.json"], ["check", "stacks/Pulumi.dev.yaml"])


def _rel(p: Path) -> str:
    return str(p.relative_to(ROOT))


def cases(plans: Path) -> list[tuple[str, list[str], bytes | None]]:
    """(name, arguments of ``gpupool``, standard input) of every case."""
    out: list[tuple[str, list[str], bytes | None]] = []
    files = sorted(p for d in ("terraform", "pulumi", "gpupool")
                   for p in (FIXTURES / d).rglob("*.json"))
    files += sorted(p for d in ("kubernetes", "kubernetes-workloads", "kubernetes-bad")
                    for p in (FIXTURES / d).iterdir() if p.suffix in (".yaml", ".yml"))
    files += [FIXTURES / d for d in ("kubernetes", "kubernetes-workloads")]
    for p in files:
        out.append((_rel(p).replace("/", "_"), ["check", _rel(p)], None))
    live = FIXTURES / "terraform" / "live" / "gpu-asgs"
    out.append(("tf-root", ["check", _rel(live / "plan-update.json"), "--tf-root", _rel(live)],
                None))
    out.append(("tf-root-elsewhere", ["check", _rel(FIXTURES / "terraform" / "upsize-g4dn.json"),
                                      "--tf-root", _rel(live)], None))
    out.append(("cluster-dump", ["check", "--cluster-dump",
                                 _rel(FIXTURES / "cluster-dump" / "kubectl-get-all.json")], None))
    out.append(("two-plans", ["check", _rel(FIXTURES / "terraform" / "upsize-g4dn.json"),
                              _rel(FIXTURES / "pulumi" / "preview-upsize.json")], None))
    out.append(("stdin", ["check", "-"],
                (FIXTURES / "terraform" / "upsize-g4dn.json").read_bytes()))
    for p in sorted(plans.iterdir()):
        out.append((f"generated_{p.name}", ["check", str(p)], None))
    for stack in ("dev", "staging", "prod"):
        out.append((f"stack-{stack}", ["check", "--stack", stack], None))
    return out


def _generated(where: Path) -> Path:
    sys.path.insert(0, str(HERE))
    from gen_preview import write_preview
    from gen_tfplan import write_plan

    where.mkdir(parents=True, exist_ok=True)
    write_plan(1000, where)
    write_preview(1000, where)
    return where


def _run(argv: list[str], stdin: bytes | None, env: dict[str, str]
         ) -> subprocess.CompletedProcess[bytes]:
    # -P: `-m` would put the working directory (this tree) ahead of PYTHONPATH, so --tree
    # would compare this tree with itself; the inputs' paths stay relative to ROOT.
    return subprocess.run([sys.executable, "-P", "-m", "gpupool", *argv], input=stdin,
                          capture_output=True, cwd=ROOT, env=env, timeout=600, check=False)


def _save(where: Path, p: subprocess.CompletedProcess[bytes]) -> None:
    where.mkdir(parents=True, exist_ok=True)
    (where / "rc").write_text(f"{p.returncode}\n")
    (where / "stdout").write_bytes(p.stdout)
    (where / "stderr").write_bytes(p.stderr)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path, help="directory to write (replaced)")
    ap.add_argument("--tree", type=Path, help="run the code of this tree (default: this one)")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items()
           if k not in ("FORCE_COLOR", "CLICOLOR_FORCE", "GPUPOOL_DEBUG", "NO_COLOR")}
    env.update(PYTHONPATH=str((args.tree or ROOT).resolve()), COLUMNS="100")
    out: Path = args.out.resolve()
    shutil.rmtree(out, ignore_errors=True)
    # Reports go to one fixed scratch place per case (a path may be printed), then move.
    scratch = HERE / "out" / "same-scratch"
    shutil.rmtree(scratch, ignore_errors=True)
    plans = _generated(HERE / "out" / "same-plans")

    def check(case: tuple[str, list[str], bytes | None]) -> str:
        name, argv, stdin = case
        work = scratch / name
        work.mkdir(parents=True)
        formats = [a for f in FORMATS for a in ("--format", f"{f}={_rel(work)}/report.{f}")]
        p = _run([*argv, *formats, "--format", "text"], stdin, env)
        _save(out / "check" / name, p)
        for f in work.iterdir():
            shutil.move(f, out / "check" / name / f.name)
        return name

    def helps(i: int, argv: list[str]) -> str:
        _save(out / "cli" / f"{i:02d}-{'_'.join(argv) or 'bare'}", _run(argv, None, env))
        return str(i)

    cli = [[], ["--help"], ["--version"], *([*c.split(), "--help"] for c in COMMANDS), *USAGE]
    with ThreadPoolExecutor(args.jobs) as pool:
        done = list(pool.map(check, cases(plans)))
        done += list(pool.map(helps, range(len(cli)), cli))
    shutil.rmtree(scratch, ignore_errors=True)
    print(f"{len(done)} cases written to {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
