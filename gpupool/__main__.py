from gpupool.cli import script

script()
