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

# Set after its class, beside the snapshots they are judged against: made at import.
EAGER = {"gpu-capacity-vs-utilisation"}


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
at_import = len(made)
eager = {i.id: len(load(i.id).examples) for i in INFOS if i.id in EAGER}
print(json.dumps({"at_import": at_import, "eager": sum(eager.values()),
                  "pod": "policies.rules._pod_upsize_examples" in sys.modules}))
""".replace("EAGER", repr(EAGER))
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.splitlines()[-1])
    assert out["at_import"] == out["eager"]
    assert out["pod"] is False  # gpu-no-vertical-upsize's pod examples: read with its examples


def test_examples_are_made_once_and_read_alike_from_rule_and_class() -> None:
    for info in INFOS:
        rule = load(info.id)
        first = rule.examples
        assert isinstance(first, tuple) and first, info.id
        assert rule.examples is first and type(rule).examples is first
