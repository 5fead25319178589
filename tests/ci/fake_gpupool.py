"""A stand-in for ``gpupool`` in the action's tests: writes the report it is asked for.

FAKE_CODES="dev=1,staging=2" sets the exit code per stack (``plans`` for plan files; default 0);
FAKE_ROWS sets the markdown report's table rows (a large value makes a report over the limit).
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
        text = "\n".join(["<!-- gpupool-check -->", f"## {label}", "", "| a | b |",
                          "| --- | --- |", *[f"| {label} {i} | {'y' * 60} |" for i in range(rows)]])
    else:
        text = json.dumps({"verdict": "fail" if code else "pass"})
    with open(out, "w", encoding="utf-8") as f:
        f.write(text + "\n")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
