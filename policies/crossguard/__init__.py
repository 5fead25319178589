"""The CrossGuard side of gpupool: the engine's rules served as a pulumi-policy pack."""
