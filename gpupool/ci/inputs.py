"""The action's inputs: ``GPUPOOL_*`` variables as ``action.yml`` passes them, or flags.

An input set to the empty string means "not used" (no waivers file, no policy config): set wins
over the default, so a workflow can turn a default off.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

FAIL_LEVELS = ("mandatory", "advisory", "never")


@dataclass
class Inputs:
    plans: list[str]
    stacks: str
    base_ref: str
    policy_ref: str
    config: str
    waivers: str
    teams: str
    utilisation: str
    fail_level: str
    governed: list[str]
    out_dir: Path
    gpupool: list[str]


def _env(name: str, default: str = "") -> str:
    """An input as action.yml passes it: set (even to empty: "not used") wins over the default."""
    return os.environ.get(f"GPUPOOL_{name}", default)


def _default_base() -> str:
    branch = os.environ.get("GITHUB_BASE_REF", "")
    return f"origin/{branch}" if branch else ""


def parse(argv: Sequence[str] | None = None) -> Inputs:
    p = argparse.ArgumentParser(prog="python -m gpupool.ci.action",
                                description="the gpupool GitHub Action's steps")
    p.add_argument("--plans", default=_env("PLANS"),
                   help="plan files, one per line or space-separated")
    p.add_argument("--stacks", default=_env("STACKS", "changed"),
                   help="changed (default), all, or stack names")
    p.add_argument("--base-ref", default=_env("BASE_REF") or _default_base(),
                   help="git ref of the base (default: origin/$GITHUB_BASE_REF in a PR)")
    p.add_argument("--policy-ref", default=_env("POLICY_REF"),
                   help="where config, waivers and teams come from (default: --base-ref)")
    p.add_argument("--config", default=_env("CONFIG", "policy-config.json"))
    p.add_argument("--waivers", default=_env("WAIVERS"))
    p.add_argument("--teams", default=_env("TEAMS", "stacks/teams.yaml"))
    p.add_argument("--utilisation", default=_env("UTILISATION"))
    p.add_argument("--fail-level", default=_env("FAIL_LEVEL", "mandatory"))
    p.add_argument("--governed", default=_env("GOVERNED"),
                   help="more path patterns whose change is reported for owners' review")
    p.add_argument("--out-dir", default=_env("OUT_DIR", "gpupool-reports"))
    p.add_argument("--gpupool", default=_env("COMMAND"),
                   help="the gpupool command (default: this interpreter, isolated)")
    a = p.parse_args(argv)
    a.fail_level = a.fail_level.strip() or "mandatory"
    if a.fail_level not in FAIL_LEVELS:
        p.error(f"--fail-level: expected one of {', '.join(FAIL_LEVELS)}, got {a.fail_level!r}")
    command = shlex.split(a.gpupool) if a.gpupool else [sys.executable, "-I", "-m", "gpupool"]
    return Inputs(
        plans=a.plans.split(), stacks=a.stacks.strip() or "changed", base_ref=a.base_ref.strip(),
        policy_ref=(a.policy_ref or a.base_ref).strip(), config=a.config.strip(),
        waivers=a.waivers.strip(), teams=a.teams.strip(), utilisation=a.utilisation.strip(),
        fail_level=a.fail_level, governed=a.governed.split(), out_dir=Path(a.out_dir),
        gpupool=command,
    )
