"""What ``gpupool check`` imports, held by counting modules, never by timing (issue 16 item 25).

Start-up dominated a check of 1,000 resources (pydantic models of every rule's parameters, the
stack config, YAML): bench/check_bench.py measures the time; this test holds what the speed
comes from. Each case runs the real CLI in a fresh interpreter and lists what it loaded.

The interpreter runs as a wheel install has it: without ``site`` (``-S``), the source tree and
the environment's site-packages on ``sys.path``, no ``.pth`` file run. The dev environment's
editable install runs a finder from a ``.pth`` at start-up that imports pathlib, contextlib,
urllib.parse and more itself, which would hide the kit importing them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from cli_support import FIXTURES, PULUMI_UPSIZE, ROOT, TF_UPSIZE

# Never on a check of a plan file without --config/--waivers/--teams/--utilisation.
NOT_ON_A_PLAN_CHECK = ("pydantic", "pydantic_core", "pulumi", "pulumi_aws", "pulumi_kubernetes",
                       "pulumi_policy", "yaml", "rich", "gpupool.config", "gpupool.teams",
                       "gpupool.debt", "policies.rules.param_schema", "policies.waiver_file")

CHILD = """
import json, os, sys
sys.path[:0] = [sys.argv.pop(1)]
sys.path += sys.argv.pop(1).split(os.pathsep)
from gpupool.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def _loaded(*args: str) -> tuple[int, list[str]]:
    site = os.pathsep.join(dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib")))
    p = subprocess.run([sys.executable, "-S", "-c", CHILD, str(ROOT), site, *args],
                       capture_output=True, text=True, cwd=ROOT, timeout=300, check=False)
    last = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
    assert last.startswith("{"), p.stdout + p.stderr
    doc = json.loads(last)
    return doc["code"], doc["modules"]


def _among(modules: list[str], names: tuple[str, ...]) -> list[str]:
    return [m for m in modules if any(m == n or m.startswith(n + ".") for n in names)]


def _rules_loaded(modules: list[str]) -> set[str]:
    """The policy IDs whose rule module the check imported."""
    from policies.rules.registry import INFOS

    return {i.id for i in INFOS if f"policies.rules.{i.module}" in modules}


def _rules_reading(path: Path) -> set[str]:
    """The policy IDs that read a kind of resource the plan holds (a proxy-tier rule: and the
    plan holds a GPU proxy or client)."""
    from policies.facts.network.roles import has_tier
    from policies.rules.registry import INFOS
    from policies.sources import load_plans

    plans = load_plans([str(path)])
    kinds = {c.kind for plan in plans for c in plan.changes}
    assert kinds
    tier = any(has_tier(plan.changes) for plan in plans)
    return {i.id for i in INFOS if not i.kinds.isdisjoint(kinds) and (tier or not i.proxy_tier)}


# gpu-proxy-network-budget, -placement and -private judge only a plan's proxies and clients.
PROXY_TIER_MODULES = ("policies.rules.gpu_proxy_network_budget",
                      "policies.rules.gpu_proxy_placement", "policies.rules.gpu_proxy_private")


def _tier_rules_loaded(modules: list[str]) -> list[str]:
    """The proxy-tier rule modules the check imported."""
    return _among(modules, PROXY_TIER_MODULES)


# Plan readers a check of the other kind never imports, and standard modules only a mistyped
# name (difflib) or a fractional count (fractions, decimal) needs; dataclasses (with inspect,
# ast, dis and tokenize: the kit's classes are gpupool.record classes), shutil (argparse asked it
# the terminal's width; with bz2 and lzma), tempfile and importlib.resources (with zipfile: the
# catalog's data is read beside its module), threading, datetime and typing (annotations are
# strings: their names are imported under TYPE_CHECKING), contextlib and signal (the gc pause and
# the signal handlers are their own context managers, on _signal), pathlib (with urllib.parse,
# ipaddress and ntpath: a plan file's path is the string given, read with os; fnmatch only for
# utilisation thresholds), locale (gettext's, for argparse's words: only a help prints them),
# argparse with gettext (a plain check command line is read by gpupool.cliargs.plain_check),
# importlib with warnings (modules named at run time are imported by __import__), errno (an
# output error's); and the other commands' arguments.
OTHER_READERS = {
    "terraform": ("policies.sources.pulumi_preview", "policies.sources.pulumi_events",
                  "policies.sources.offline", "policies.sources.kubernetes",
                  "policies.sources.hints", "gpupool.yamldoc"),
    "pulumi": ("policies.sources.terraform", "policies.sources.offline",
               "policies.sources.kubernetes", "policies.sources.hints", "gpupool.yamldoc"),
}
NOT_NEEDED_STDLIB = ("difflib", "fractions", "decimal", "dataclasses", "inspect", "ast", "dis",
                     "tokenize", "shutil", "bz2", "lzma", "tempfile", "importlib.resources",
                     "zipfile", "threading", "datetime", "typing", "contextlib", "signal",
                     "pathlib", "urllib", "ipaddress", "ntpath", "fnmatch", "locale",
                     "argparse", "gettext", "importlib", "warnings", "errno")
# Only for --waivers (or a configuration's waivers), and for --check / --skip-check.
NOT_WITHOUT_THEIR_OPTIONS = ("policies.waivers", "policies.selection")
OTHER_COMMANDS = ("gpupool.cliargs.debt", "gpupool.cliargs.network", "gpupool.cliargs.rightsize",
                  "gpupool.cliargs.sizing", "gpupool.cliargs.prometheus", "gpupool.argtypes",
                  "gpupool.cliargs.admission")
# The argparse parser of the check: only for a command line plain_check leaves to argparse;
# did-you-mean: only for a mistyped policy ID.
ONLY_FOR_ARGPARSE_OR_A_TYPO = ("gpupool.cliargs.parser", "gpupool.cliargs.stacks",
                               "gpupool.suggest")
# The .tf reader (python-hcl2 and lark behind it): only for a plan whose configuration lacks a
# block its values hold (a dynamic block), or for SARIF's .tf lines.
TF_SOURCES = ("policies.tfsource", "hcl2", "lark")
# sys.modules after a plan check (the interpreter's own ~30 included, run as a wheel install:
# see the module docstring): 213-217 before issue 16 item 25's start-up work (with the editable
# finder's), 154-156 at 3f2ba02, 150-152 without contextlib and signal, 144-146 without pathlib,
# 140-142 without locale (argparse's own words translated when a help is written), 134-135 at
# e47f9bf, 127-128 without argparse, gettext, importlib and warnings (plain_check).
# A new import on this path must be worth its cost (bench/check_bench.py) and raise this bound
# knowingly.
MAX_MODULES = 130


@pytest.mark.parametrize(("plan", "kind"), [(TF_UPSIZE, "terraform"), (PULUMI_UPSIZE, "pulumi")],
                         ids=["terraform", "pulumi"])
def test_a_plan_check_loads_no_pydantic_yaml_or_pulumi(plan: Path, kind: str,
                                                       tmp_path: Path) -> None:
    code, modules = _loaded("check", str(plan), "--format", "json",
                            "--output", str(tmp_path / "r.json"))
    assert code == 1  # the fixture's violations were found: the check really ran
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["verdict"] == "fail"
    assert _among(modules, NOT_ON_A_PLAN_CHECK) == []
    # Only the rules that read the plan's kinds were imported, and no Kubernetes reader: the
    # report still lists every rule, from the generated index (policies/rules/_index.py).
    assert _rules_loaded(modules) == _rules_reading(plan)
    assert "k8s-gpu-limits" not in _rules_loaded(modules)
    assert _tier_rules_loaded(modules) == []  # instances and templates, but no proxy tier
    assert _among(modules, ("policies.facts.k8s",)) == []
    assert len(report["policies"]) == 20
    assert _among(modules, OTHER_READERS[kind] + NOT_NEEDED_STDLIB) == []
    assert _among(modules, OTHER_COMMANDS + TF_SOURCES + NOT_WITHOUT_THEIR_OPTIONS) == []
    assert _among(modules, ONLY_FOR_ARGPARSE_OR_A_TYPO) == []
    assert len(modules) <= MAX_MODULES, len(modules)


@pytest.mark.parametrize("plan", [FIXTURES / "terraform" / "proxy-tiers.json",
                                  FIXTURES / "pulumi" / "preview-proxy-tiers.json"],
                         ids=["terraform", "pulumi"])
def test_a_plan_with_a_proxy_tier_brings_in_the_tier_rules(plan: Path, tmp_path: Path) -> None:
    """The counter-case: proxies and clients (role tags) load the three proxy-tier rules."""
    code, modules = _loaded("check", str(plan), "--format", "json",
                            "--output", str(tmp_path / "r.json"))
    assert code in (0, 1), code
    assert _tier_rules_loaded(modules) == list(PROXY_TIER_MODULES)
    assert _rules_loaded(modules) == _rules_reading(plan)


def test_a_plan_whose_configuration_lacks_a_dynamic_block_reads_the_tf_sources(
        tmp_path: Path) -> None:
    """The counter-case of the .tf reader: the live proxy-exposure plan's groups write their
    traffic sources as dynamic blocks, which only the .tf files beside it show."""
    plan = FIXTURES / "terraform" / "live" / "proxy-exposure" / "plan-create.json"
    code, modules = _loaded("check", str(plan), "--format", "json",
                            "--output", str(tmp_path / "r.json"))
    assert code in (0, 1), code
    assert {"policies.tfsource", "hcl2"} <= set(modules)


def test_a_kubernetes_plan_brings_in_the_kubernetes_rules(tmp_path: Path) -> None:
    """The counter-case: a Terraform plan of a Kubernetes Deployment imports the readers and
    the rules of Kubernetes objects."""
    plan = FIXTURES / "terraform" / "kubernetes-deployment.json"
    code, modules = _loaded("check", str(plan), "--format", "json",
                            "--output", str(tmp_path / "r.json"))
    assert code in (0, 1), code
    assert "policies.facts.k8s" in modules
    assert _among(modules, ("dataclasses", "typing")) == []  # the Kubernetes facts' classes too
    assert {"k8s-gpu-limits", "k8s-gpu-per-container"} <= _rules_loaded(modules)
    assert _rules_reading(plan) <= _rules_loaded(modules)


def test_a_config_brings_in_validation(tmp_path: Path) -> None:
    """The counter-case: the same check with --config validates it with pydantic (so the test
    above would see pydantic if the default path imported it)."""
    config = tmp_path / "policy.yaml"
    config.write_text("gpu-pool-scales-on-utilisation:\n  minTarget: 50\n")
    code, modules = _loaded("check", str(TF_UPSIZE), "--config", str(config), "--format",
                            "json", "--output", str(tmp_path / "r.json"))
    assert code == 1
    assert "pydantic" in modules and "yaml" in modules
    assert "policies.rules.param_schema" in modules


def test_a_manifest_check_loads_no_pydantic_or_pulumi(tmp_path: Path) -> None:
    code, modules = _loaded("check", str(FIXTURES / "kubernetes"), "--format", "json",
                            "--output", str(tmp_path / "r.json"))
    assert code in (0, 1), code
    assert "yaml" in modules  # manifests are YAML: the counter-case of the plan checks
    assert _among(modules, tuple(n for n in NOT_ON_A_PLAN_CHECK if n != "yaml")) == []
    # (k8s-cpu-pods-off-gpu-nodes borrows karpenter-gpu-smallest's type judgement)
    assert _rules_reading(FIXTURES / "kubernetes") <= _rules_loaded(modules)
    assert "imdsv2-required" not in _rules_loaded(modules)  # an AWS-only rule
    assert _among(modules, ("dataclasses", "typing", "threading", "shutil")) == []


# The network facts only the proxy-tier rules (gpu-proxy-*) read: placement, clients, ingress and
# exposure, NetworkIndex over them, and the network catalog (per-flow caps, round-trip floors).
# Links (launch templates) and roles (the role tags) every check reads.
PROXY_TIER_FACTS = ("policies.facts.network.placement", "policies.facts.network.clients",
                    "policies.facts.network.ingress", "policies.facts.network.exposure",
                    "policies.facts.network.tier", "gpupool.catalog.network")
PROXY_TIER_RULES = ("gpu-proxy-network-budget", "gpu-proxy-placement", "gpu-proxy-private")

CHILD_CODE = """
import json, os, sys
sys.path[:0] = [sys.argv.pop(1)]
sys.path += sys.argv.pop(1).split(os.pathsep)
exec(sys.argv.pop(1))
print(json.dumps({"code": 0, "modules": sorted(sys.modules)}))
"""


def _loaded_by(code: str) -> list[str]:
    """The modules loaded by running ``code`` in a fresh interpreter, as a wheel install has it."""
    site = os.pathsep.join(dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib")))
    p = subprocess.run([sys.executable, "-S", "-c", CHILD_CODE, str(ROOT), site, code],
                       capture_output=True, text=True, cwd=ROOT, timeout=300, check=False)
    last = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
    assert last.startswith("{"), p.stdout + p.stderr
    modules: list[str] = json.loads(last)["modules"]
    return modules


def test_the_engine_and_the_other_rules_load_no_proxy_tier_facts() -> None:
    """Every rule but the proxy-tier ones, with the engine, a plan's index and its launch
    templates, loads none of the facts only proxy tiers need (gpu-smallest-instance and
    gpu-no-vertical-upsize read a proxy's own tags through roles, not NetworkIndex)."""
    modules = _loaded_by(
        "import policies.engine\n"
        "from policies.facts import PlanIndex, own_tag\n"
        "from policies.rules.registry import INFOS, load\n"
        f"rules = [load(i.id) for i in INFOS if i.id not in {PROXY_TIER_RULES!r}]\n"
        "PlanIndex(()).launch_templates\n")
    assert "policies.rules.gpu_smallest_instance" in modules  # the rules really loaded
    assert {"policies.facts.network.links", "policies.facts.network.roles"} <= set(modules)
    assert _among(modules, PROXY_TIER_FACTS) == []


def test_the_proxy_tier_facts_load_on_first_use() -> None:
    """The counter-cases: a plan's network index, the package's names, and a proxy whose budget
    asks for a bigger size each load what they need, where they always were."""
    index = _loaded_by("from policies.facts import PlanIndex\nPlanIndex(()).network\n")
    assert set(PROXY_TIER_FACTS) <= set(index)
    names = _loaded_by("from policies.facts.network import WORLD, ClientsWhere, NetworkIndex\n"
                       "assert NetworkIndex.__module__ == 'policies.facts.network'\n"
                       "from policies.facts import NetworkIndex as same\n"
                       "assert same is NetworkIndex\n")
    assert set(PROXY_TIER_FACTS) <= set(names)
    sizing = _loaded_by("from gpupool.catalog import load_catalog\n"
                        "from policies.rules._proxy import bandwidth_sizing\n"
                        "assert bandwidth_sizing(load_catalog(), 'g5.8xlarge', 20.0) is not None\n")
    assert "gpupool.catalog.network" in sizing
    assert _among(sizing, PROXY_TIER_FACTS[:-1]) == []


# Patterns a check compiles only when its plan asks (each ~0.5 M instructions of start-up):
# getter (module, function) -> compiled on first call.
PATTERNS = {"camel": ("policies.model", "_camel"), "region": ("policies.sources.region", "_region"),
            "index_suffix": ("policies.facts.index", "_index_suffix"),
            "module_prefix": ("policies.facts.index", "_module_prefix"),
            "autoname": ("policies.rules._asg_raise", "_autoname")}
COMPILED = """
import importlib
from gpupool.cli import main
main({args!r})
patterns = {patterns!r}
compiled = sorted(k for k, (m, f) in patterns.items() if m in sys.modules
                  and getattr(importlib.import_module(m), f).cache_info().misses)
print(json.dumps({{"code": 0, "modules": compiled}}))
raise SystemExit(0)
"""


def _compiled(plan: Path, out: Path) -> list[str]:
    args = ["check", str(plan), "--format", "json", "--output", str(out)]
    return _loaded_by(COMPILED.format(args=args, patterns=PATTERNS))


def test_a_plan_check_compiles_only_the_patterns_its_plan_needs(tmp_path: Path) -> None:
    """A Pulumi preview's camelCase keys and its stack's region need theirs; neither plan has a
    module path, a counted resource or a snapshot to match autonames against."""
    assert _compiled(PULUMI_UPSIZE, tmp_path / "p.json") == ["camel", "region"]
    assert "camel" not in _compiled(TF_UPSIZE, tmp_path / "t.json")  # snake_case already
    assert set(_compiled(TF_UPSIZE, tmp_path / "t.json")) <= {"region"}


def test_module_paths_and_counted_resources_compile_their_patterns_and_resolve() -> None:
    """The counter-case: a reference from inside a module, and one to a counted resource, are
    resolved as before (the patterns compiled on first use)."""
    from policies.facts.index import PlanIndex, _index_suffix, _module_prefix
    from policies.model import ChangeKind, ResourceChange, ResourceKind

    def lt(address: str) -> ResourceChange:
        return ResourceChange(address, "aws_launch_template", "t", ChangeKind.CREATE, {}, None,
                              "terraform", ResourceKind.LAUNCH_TEMPLATE)

    group = ResourceChange("module.m.aws_autoscaling_group.g", "aws_autoscaling_group", "g",
                           ChangeKind.CREATE, {}, None, "terraform",
                           ResourceKind.AUTOSCALING_GROUP)
    templates = [lt("module.m.aws_launch_template.t"), lt("aws_launch_template.c[0]"),
                 lt("aws_launch_template.c[1]")]
    index = PlanIndex([group, *templates])
    kinds = frozenset({ResourceKind.LAUNCH_TEMPLATE})
    assert index.resolve("aws_launch_template.t", group, kinds) == (templates[0],)
    assert index.resolve("aws_launch_template.c", group, kinds) == tuple(templates[1:])
    assert _index_suffix.cache_info().misses == 1 and _module_prefix.cache_info().misses == 1
