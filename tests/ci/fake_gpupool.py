"""A stand-in for ``gpupool`` in the action's tests: writes the report it is asked for.

FAKE_CODES="dev=1,staging=2" sets the exit code per stack (``plans`` for plan files; default 0);
FAKE_ROWS sets the markdown report's table rows (a large value makes a report over the limit);
FAKE_COST="dev=3.2192" gives a stack's report one GPU cost line of that change in $/h (an empty
value: an unpriced one), and FAKE_QUIET="dev" a report with no findings (no table).
"""

from __future__ import annotations

import json
import os
import sys


def main(argv: list[str]) -> int:
    if argv[0] == "plan":  # an empty offline plan of the stack
        with open(argv[argv.index("--output") + 1], "w", encoding="utf-8") as f:
            json.dump({"kind": "gpupool-plan", "version": 1, "stack": argv[1],
                       "resources": [{"urn": f"urn:pulumi:{argv[1]}::p::aws:ec2/instance:"
                                             f"Instance::gpu", "type": "aws:ec2/instance:Instance",
                                      "name": "gpu", "custom": True, "inputs": {}}]}, f)
        return 0
    label = argv[argv.index("--stack") + 1] if "--stack" in argv else (
        "quotas" if any(a.endswith("all-stacks.json") for a in argv) else "plans")
    codes = dict(p.split("=") for p in os.environ.get("FAKE_CODES", "").split(",") if p)
    code = int(codes.get(label, "0"))
    if code == 2:
        sys.stderr.write(f"gpupool check: stacks/Pulumi.{label}.yaml: broken on purpose\n")
        return 2
    specs = [argv[i + 1] for i, a in enumerate(argv) if a == "--format"]
    if "--output" in argv:  # FORMAT --output FILE
        specs = [f"{specs[0]}={argv[argv.index('--output') + 1]}"]
    for spec in specs:
        fmt, out = spec.split("=", 1)
        write(fmt, out, label, code)
    return code


def write(fmt: str, out: str, label: str, code: int) -> None:
    level = {0: "warning", 1: "error"}[code]
    if fmt == "sarif":
        doc = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "gpupool"}},
                                             "results": [{"ruleId": "x", "level": level,
                                                          "message": {"text": label}}]}]}
        text = json.dumps(doc)
    elif fmt == "markdown":
        rows = int(os.environ.get("FAKE_ROWS", "3"))
        table = ["<!-- gpupool-section: findings -->", "| a | b |", "| --- | --- |",
                 *[f"| {label} {i} | {'y' * 60} |" for i in range(rows)]]
        if label in os.environ.get("FAKE_QUIET", "").split(","):
            table = ["No findings."]
        cost = _costs().get(label)
        if cost is not None:
            table += ["", "<!-- gpupool-section: cost -->", "### GPU cost change",
                      f"{label} {cost}"]
        text = "\n".join(["<!-- gpupool-check -->", f"## {label}", "", f"{label} summary", "",
                          *table, "", "<!-- gpupool-section: policies -->",
                          f"<details><summary>Policies of {label}</summary>", "", "</details>"])
    else:
        cost = _costs().get(label)
        lines = [] if cost is None else [{"delta_per_hour": float(cost) if cost else None}]
        text = json.dumps({"verdict": "fail" if code else "pass", "cost": lines})
    with open(out, "w", encoding="utf-8") as f:
        f.write(text + "\n")


def _costs() -> dict[str, str]:
    return dict(p.split("=") for p in os.environ.get("FAKE_COST", "").split(",") if p)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
