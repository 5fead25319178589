"""The slim install and its extras: which command needs what, and the line that says so.

``pip install gpupool`` is what a CI check needs (``gpupool check`` of plan files and manifests,
``validate``, ``catalog``, ``estimate``, ``new-stack``): no Pulumi, boto3, numpy, pandas or
matplotlib. The rest come with extras (pyproject.toml):

- ``infra``: Pulumi and its providers, the policy pack's gRPC, the Kubernetes schemas
  (``plan``, ``render``, ``check --stack``, the CrossGuard pack, the Pulumi program);
- ``aws``: boto3 (``catalog refresh``, ``netcheck probe --cloudwatch``);
- ``debt``: boto3 and matplotlib (``debt``, ``debt --chart``);
- ``remoting``: numpy and pandas (``remoting`` with a trace, ``netcheck probe``);
- ``all``: every one of them (``make test`` installs it).

A command that reaches a module of a missing extra exits 2 with one line naming the extra.
"""

from __future__ import annotations

import importlib.util
from typing import Final

from gpupool.errors import InputError

# top-level module → (extra, the distribution a user would recognise)
_MODULES: Final = {
    "pulumi": ("infra", "pulumi"), "pulumi_aws": ("infra", "pulumi-aws"),
    "pulumi_kubernetes": ("infra", "pulumi-kubernetes"),
    "pulumi_policy": ("infra", "pulumi-policy"), "grpc": ("infra", "grpcio"),
    "google": ("infra", "protobuf"), "kubernetes_validate": ("infra", "kubernetes-validate"),
    "jsonschema": ("infra", "jsonschema"), "referencing": ("infra", "jsonschema"),
    "celpy": ("infra", "cel-python"),
    "boto3": ("aws", "boto3"), "botocore": ("aws", "boto3"),
    "matplotlib": ("debt", "matplotlib"),
    "ruamel": ("debt", "ruamel.yaml"),
    "numpy": ("remoting", "numpy"), "pandas": ("remoting", "pandas"),
}
# A command whose own extra carries a module another extra also has: name the command's.
_COMMAND_EXTRA: Final = {"debt": "debt", "rightsize": "debt"}


def install_line(extra: str) -> str:
    return f"pip install 'gpupool[{extra}]'"


def missing(command: str, error: ModuleNotFoundError) -> str | None:
    """The line for a module of an extra that is not installed; None for any other module."""
    top = (error.name or "").split(".")[0]
    found = _MODULES.get(top)
    if found is None:
        return None
    extra, dist = found
    if extra == "aws" and command in _COMMAND_EXTRA:
        extra = _COMMAND_EXTRA[command]
    return (f"needs {dist}, which the slim install leaves out: {install_line(extra)} "
            f"(the {extra} extra)")


def require(extra: str, what: str, module: str) -> None:
    """Refuse early (one line, exit 2) when ``module`` of ``extra`` is not installed: for work
    that runs elsewhere (``check --stack`` plans in child processes)."""
    try:
        present = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        present = False
    if not present:
        dist = _MODULES.get(module.split(".")[0], (extra, module))[1]
        raise InputError(f"{what} needs {dist}, which the slim install leaves out: "
                         f"{install_line(extra)} (the {extra} extra)")
