"""The Pulumi program (``main: infra/`` in Pulumi.yaml), as ``pulumi up`` and ``preview`` run it.

The engine hands the stack's configuration over as a flat ``namespace:key`` mapping (structured
values as JSON text). It is validated in full before any resource is declared; a bad stack stops
here with one line per problem and no resource touched.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pulumi
from pulumi.runtime import config as runtime_config

from gpupool.config import parse_flat_config
from gpupool.errors import InputError
from infra.program import define_stack


def engine_config() -> dict[str, Any]:
    """Every config key of the stack, as the engine passed it to this process."""
    return {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}


def config_source(stack: str) -> str:
    """Name the stack file in messages when it is where Pulumi keeps it."""
    candidate = Path("stacks") / f"Pulumi.{stack}.yaml"
    return str(candidate) if candidate.is_file() else f"stack {stack}"


def main() -> None:
    source = config_source(pulumi.get_stack())
    try:
        config, instance_types = parse_flat_config(engine_config(), source)
    except InputError as e:
        raise pulumi.RunError("\n".join(e.problems)) from None
    for key, value in define_stack(config, instance_types).items():
        pulumi.export(key, value)


main()
