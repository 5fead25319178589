"""GPU memory sizing: how much memory a model needs, and which catalog GPU holds it cheapest.

Pure arithmetic over a model's shape (``shape``), the workload (``memory``) and the GPU
catalog (``recommend``); no framework is imported and nothing is downloaded.
"""

from gpupool.sizing.memory import DTYPES, Estimate, Workload, estimate
from gpupool.sizing.recommend import Option, Recommendation, recommend
from gpupool.sizing.shape import ModelShape, count_params, read_config, shape_from_params

__all__ = [
    "DTYPES",
    "Estimate",
    "ModelShape",
    "Option",
    "Recommendation",
    "Workload",
    "count_params",
    "estimate",
    "read_config",
    "recommend",
    "shape_from_params",
]
