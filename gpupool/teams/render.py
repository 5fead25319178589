"""Render a template into a stack file's ``config`` mapping, and write it as YAML.

The rendered mapping goes through the same validation as any stack file
(:func:`gpupool.config.parse_flat_config`) before a byte is written, so ``new-stack`` never
writes a stack that ``gpupool validate`` would refuse.

The file is made by a YAML emitter (PyYAML's), never by joining text: whatever a value holds
(a model's ``_name_or_path``, a template's description) is quoted or escaped by the emitter. The
header comment, which no YAML emitter writes, is one ``# `` line per line of text, split at
every line break YAML knows (LF, CR, NEL, U+2028, U+2029, and Python's others) with anything
unprintable escaped, so no text can end its comment and start a key. Then the text is read back
with the kit's own reader (:func:`read_back`) and must be exactly the validated ``config`` and
nothing else: those are the bytes written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from gpupool.catalog import InstanceType
from gpupool.config.models import GpuPoolConfig
from gpupool.errors import InputError
from gpupool.teams.models import Team
from gpupool.teams.template import Template

_POOL_ORDER = tuple(f.alias or n for n, f in GpuPoolConfig.model_fields.items())


@dataclass(frozen=True)
class Choice:
    """The GPU the stack runs on and how many of them at most."""

    instance_type: InstanceType
    max_gpus: int

    @property
    def max_instances(self) -> int:
        return max(1, int(self.max_gpus // max(self.instance_type.gpu_count, 1)))


def render_config(team_name: str, team: Team, environment: str, region: str,
                  template_name: str, template: Template, choice: Choice,
                  budget: dict[str, Any] | None = None) -> dict[str, Any]:
    """The flat ``namespace:key`` mapping of the stack file (``budget``: a remote-GPU tier's,
    from ``new-stack --profile``, over the template's)."""
    t = choice.instance_type
    size = choice.max_instances
    spec = {**template.pool_for(environment), "gpu": t.gpu_model, "arch": t.arch,
            "maxSize": size}
    pool: dict[str, Any] = {}
    for key in _POOL_ORDER:  # the order of GpuPoolConfig's fields, as a reader expects
        if key not in spec:
            continue
        value = spec[key]
        if key in ("minSize", "desiredCapacity", "onDemandBase") and isinstance(value, int):
            value = min(value, size)  # a template's floor never exceeds the quota's ceiling
        pool[key] = value
    flat = {
        "aws:region": region,
        "gpupool:environment": environment,
        "gpupool:team": team_name,
        "gpupool:costCenter": team.cost_center,
        "gpupool:tags": {"gpupool:template": template_name},
        "gpupool:network": template.network_for(environment),
        "gpupool:pools": [pool],
    }
    if template.remote_gpu is not None:  # the pool is a proxy tier: no plain pool beside it
        remote = template.remote_gpu
        tier = {**pool, "port": remote.port, "budget": budget or remote.budget}
        if remote.clients:
            tier["clients"] = remote.clients
        tier["networkKind"] = remote.network_kind
        flat["gpupool:pools"] = []
        flat["gpupool:remoteGpu"] = [tier]
    return flat


def stack_yaml(flat: dict[str, Any], header: Sequence[str]) -> str:
    """The stack file's text: a comment header saying how it was made, then ``config:``."""
    body = yaml.safe_dump({"config": flat}, sort_keys=False, default_flow_style=False,
                          allow_unicode=True, width=100)
    return comment_lines(header) + body


def comment_lines(header: Sequence[str]) -> str:
    """``# text`` lines that stay comments whatever the text holds (see the module docstring)."""
    out = []
    for line in header:
        for piece in line.splitlines() or [""]:
            shown = "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in piece)
            out.append(f"# {shown}".rstrip() + "\n")
    return "".join(out)


def read_back(text: str, flat: dict[str, Any], shown: str) -> None:
    """Refuse (InputError) a stack file text that does not read back, with the reader
    ``gpupool validate`` uses, as exactly ``{config: flat}``."""
    from gpupool.config.stackfile import stack_config
    from gpupool.yamlio import parse_yaml

    doc = parse_yaml(text, shown)
    config = stack_config(doc, shown)  # Pulumi's keys only, in Pulumi's shapes
    if doc == {"config": flat}:
        return
    extra = sorted(str(k) for k in doc if k != "config")
    changed = sorted(k for k in {*flat, *config} if flat.get(k) != config.get(k))
    what = "; ".join([*(["top-level " + ", ".join(extra)] if extra else []),
                      *(["different " + ", ".join(changed)] if changed else [])])
    raise InputError(f"{shown}: expected the text new-stack writes to read back as the config "
                     f"it validated, but it reads back with {what}; nothing written")
