"""Inputs that come from Terraform but are not a plan ``gpupool check`` can read: say what to run.

A ``.tf`` file (HCL configuration), Terraform's JSON configuration syntax (``*.tf.json``), a
``.tfvars`` file, or the text ``terraform plan`` / ``terraform show`` print are what a Terraform
user has at hand; read as Kubernetes YAML they gave a baffling YAML error. Each gets one line
naming what it is and the command that makes the JSON plan. (A binary plan file, the zip
``terraform plan -out`` writes, is named by the JSON reader.)
"""

from __future__ import annotations

import re
from pathlib import Path

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any, Final

SHOW_JSON: Final = ("run `terraform plan -out=tfplan && terraform show -json tfplan > plan.json` "
                    "and check plan.json")
_EXPECTED: Final = "expected a plan file (terraform show -json)"
_ESCAPE = re.compile(rb"\x1b\[[0-9;]*m")  # colours, when the text was captured from a terminal
_TEXT_PLAN = re.compile(
    rb"Terraform will perform the following actions|Terraform used the selected providers"
    rb"|^\s*# \S+ (?:will be|must be) (?:created|updated|destroyed|replaced|read)"
    rb"|No changes\. Your infrastructure matches the configuration"
    rb"|^Plan: \d+ to add, \d+ to change, \d+ to destroy", re.MULTILINE)
_HCL_BLOCK = re.compile(
    rb'^[ \t]*(?:resource|data|module|provider|terraform|variable|output|locals)'
    rb'(?:[ \t]+"[^"\n]*")*[ \t]*\{', re.MULTILINE)
# Top-level keys of Terraform's JSON configuration syntax (a *.tf.json file).
_CONFIG_KEYS: Final = frozenset({"resource", "data", "module", "provider", "terraform",
                                 "variable", "output", "locals", "moved", "import", "check",
                                 "removed"})


def text_hint(path: Path, head: bytes, shown: str) -> str | None:
    """The line for a file (or stream) that is not JSON but comes from Terraform, or None."""
    name = path.name.lower()
    if name.endswith(".tfvars"):
        return f"{shown}: {_EXPECTED}, got Terraform variable values (.tfvars); {SHOW_JSON}"
    text = _ESCAPE.sub(b"", head)
    if _TEXT_PLAN.search(text):
        return (f"{shown}: {_EXPECTED}, got the text `terraform plan` or `terraform show` "
                f"prints (for people, not tools); {SHOW_JSON}")
    if name.endswith((".tf", ".tofu")) or _HCL_BLOCK.search(text):
        return f"{shown}: {_EXPECTED}, got Terraform configuration (HCL); {SHOW_JSON}"
    return None


def config_json_hint(doc: Any, shown: str) -> str | None:
    """The line for Terraform's JSON configuration syntax (``main.tf.json``), or None."""
    if type(doc) is not dict or not doc or not doc.keys() <= _CONFIG_KEYS:
        return None
    return (f"{shown}: {_EXPECTED}, got Terraform configuration in JSON syntax (*.tf.json); "
            f"{SHOW_JSON}")


def directory_hint(path: Path, shown: str) -> str | None:
    """The line for a directory of Terraform configuration without manifests, or None."""
    try:
        has_tf = any(p.suffix in (".tf", ".tofu") for p in path.iterdir() if p.is_file())
    except OSError:
        return None
    if not has_tf:
        return None
    return (f"{shown}: expected plan files or Kubernetes manifests, got a directory of Terraform "
            f"configuration (*.tf); {SHOW_JSON}")
