"""Rule examples are made when first read (the docs, the tests, the CrossGuard pack), never by
importing a rule module: a check imports the rules a plan needs and reads none of their
examples."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from policies.rules.registry import INFOS, load

ROOT = Path(__file__).resolve().parents[3]

def test_importing_the_rules_makes_no_example() -> None:
    code = """
import json, sys
from policies.rules import base
made = []
init = base.Example.__init__
def counted(self, *args, **kwargs):
    made.append(1)
    init(self, *args, **kwargs)
base.Example.__init__ = counted
from policies.rules.registry import INFOS, load
rules = [load(i.id) for i in INFOS]
print(json.dumps({"at_import": len(made),
                  "pod": "policies.rules._pod_upsize_examples" in sys.modules,
                  "capacity": "policies.rules._capacity_examples" in sys.modules}))
"""
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.splitlines()[-1])
    assert out["at_import"] == 0  # gpu-capacity-vs-utilisation's 17 included
    assert out["pod"] is False  # gpu-no-vertical-upsize's pod examples: read with its examples
    # gpu-capacity-vs-utilisation's examples and their snapshots: their own module, read with them
    assert out["capacity"] is False


def test_examples_are_made_once_and_read_alike_from_rule_and_class() -> None:
    for info in INFOS:
        rule = load(info.id)
        first = rule.examples
        assert isinstance(first, tuple) and first, info.id
        assert rule.examples is first and type(rule).examples is first
