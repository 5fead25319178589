"""gpupool: GPU pools that scale out on measured utilisation, never up."""

__version__ = "0.1.0"
