"""Random traces for the replay's property tests (shared by test_replay and test_latency)."""

from __future__ import annotations

import numpy as np

from gpupool.remoting.trace import SYNC, Trace


def random_trace(seed: int, n: int) -> Trace:
    rng = np.random.default_rng(seed)
    kind = rng.integers(0, 3, n).astype(np.int8)
    blocking = rng.integers(0, 3, n).astype(np.int8)
    kind[blocking == 2] = SYNC  # CPUBlocking calls are SYNC
    sparse = rng.random((7, n)) < 0.3  # many zeros, as in real traces
    values = np.where(sparse, 0.0, rng.exponential(1.0, (7, n))) * np.array(
        [[500.0], [100.0], [0.5], [0.5], [3.0], [5.0], [40.0]])
    return Trace(names=("a", "b", "c"), name=rng.integers(0, 3, n).astype(np.int32),
                 kind=kind, blocking=blocking, bytes_to_gpu=values[0], bytes_from_gpu=values[1],
                 serialise_us=values[2], deserialise_us=values[3], process_us=values[4],
                 gap_us=values[5], block_us=values[6])
