"""Stack configuration: models and loading."""

from gpupool.config.loader import LoadedStack, load_stack, parse_flat_config, stack_path
from gpupool.config.models import GpuPoolConfig, NetworkConfig, StackConfig

__all__ = [
    "GpuPoolConfig",
    "LoadedStack",
    "NetworkConfig",
    "StackConfig",
    "load_stack",
    "parse_flat_config",
    "stack_path",
]
