"""The action's ``mode: rightsize`` (schedule or workflow_dispatch), runnable and tested anywhere.

``action.yml`` assumes the read-only role (OIDC), then runs ``python -I -m gpupool.ci.rightsize``
with its inputs in ``GPUPOOL_*`` variables. This module:

1. runs ``gpupool debt --format json`` over the window (the evidence, kept as an artifact);
2. runs ``gpupool rightsize --write --pr-body FILE`` over the same window on the stacks asked
   for (each edited stack validated before it is written);
3. lists the stack files that changed (``git status``), and sets the outputs the pull request
   step reads: ``changed`` (true when a file changed), ``pr-body``, ``changed-files`` (the
   paths the pull request may add, and nothing else) and ``exit-code``.

``peter-evans/create-pull-request`` (pinned by commit) then opens or updates ONE pull request on
the fixed branch, so the review and the code owners decide. A read or a rightsize that fails is
exit 2 and no pull request.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from gpupool.ci import github


def _env(name: str, default: str = "") -> str:
    return os.environ.get(f"GPUPOOL_{name}", default)


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m gpupool.ci.rightsize",
                                description="the gpupool action's rightsize mode")
    p.add_argument("--stacks", default=_env("STACKS", "all"), help="all, or stack names")
    p.add_argument("--window", default=_env("WINDOW", "--since 14d"),
                   help="the window flags debt and rightsize share (default --since 14d)")
    p.add_argument("--rightsize-args", default=_env("RIGHTSIZE_ARGS"),
                   help="more rightsize flags (--percentile, --headroom, --min-span)")
    p.add_argument("--out-dir", default=_env("OUT_DIR", "gpupool-reports"))
    p.add_argument("--gpupool", default=_env("COMMAND"),
                   help="the gpupool command (default: this interpreter, isolated)")
    return p.parse_args(argv)


class Rightsize:
    def __init__(self, a: argparse.Namespace, cwd: Path) -> None:
        self.cwd = cwd
        self.out = Path(a.out_dir) if Path(a.out_dir).is_absolute() else cwd / a.out_dir
        self.command = (shlex.split(a.gpupool) if a.gpupool
                        else [sys.executable, "-I", "-m", "gpupool"])
        self.window = shlex.split(a.window)
        self.extra = shlex.split(a.rightsize_args)
        names = a.stacks.split()
        self.stacks = [] if names in ([], ["all"]) else names
        self.log = self.out / "commands.jsonl"

    def gpupool(self, *args: str) -> subprocess.CompletedProcess[str]:
        cmd = [*self.command, *args]
        with self.log.open("a", encoding="utf-8") as f:
            f.write(json.dumps(cmd) + "\n")
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
        return subprocess.run(cmd, cwd=self.cwd, capture_output=True, text=True, env=env,
                              timeout=3600)

    def changed_files(self) -> list[str]:
        done = subprocess.run(["git", "status", "--porcelain", "-z", "--", "."], cwd=self.cwd,
                              capture_output=True, text=True, check=True)
        paths = [entry[3:] for entry in done.stdout.split("\0") if entry]
        return sorted(p for p in paths if Path(p).name.startswith("Pulumi.")
                      and p.endswith((".yaml", ".yml")))

    def run(self) -> int:
        self.out.mkdir(parents=True, exist_ok=True)
        self.log.write_text("")
        debt_json = self.out / "debt.json"
        body = self.out / "rightsize.md"
        debt = self.gpupool("debt", *self.window, "--format", "json", "--output", str(debt_json))
        if debt.returncode != 0:
            return self.fail("gpupool debt", debt)
        stacks = [x for s in self.stacks for x in ("--stack", s)]
        done = self.gpupool("rightsize", *stacks, *self.window, *self.extra, "--write",
                            "--pr-body", str(body))
        (self.out / "rightsize.log").write_text(done.stderr, encoding="utf-8")
        if done.returncode != 0:
            return self.fail("gpupool rightsize", done)
        files = self.changed_files()
        github.write_outputs({"changed": "true" if files else "false", "pr-body": str(body),
                              "changed-files": "\n".join(files), "exit-code": "0",
                              "debt": str(debt_json)})
        github.append_summary(body.read_text(encoding="utf-8"))
        sys.stdout.write(f"gpupool action (rightsize): {len(files)} stack file(s) changed"
                         f"{': ' + ', '.join(files) if files else ''}\n")
        return 0

    def fail(self, what: str, done: subprocess.CompletedProcess[str]) -> int:
        message = done.stderr.strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        github.annotate("error", None, f"{what}: {message[0]}")
        sys.stderr.write(f"gpupool action (rightsize): {what} failed: {done.stderr.strip()}\n")
        github.write_outputs({"changed": "false", "pr-body": "", "changed-files": "",
                              "exit-code": "2"})
        return 2


def main(argv: Sequence[str] | None = None) -> int:
    return Rightsize(parse(argv), Path.cwd()).run()


if __name__ == "__main__":
    raise SystemExit(main())
