"""Write a synthetic per-call trace (and the profile that goes with it): CNN inference, or
launch-bound token decoding.

    .venv/bin/python bench/gen_trace.py --iterations 20 --out examples/profiles/resnet50-inference
    .venv/bin/python bench/gen_trace.py --calls 1000000 --out bench/out/trace-1m
    .venv/bin/python bench/gen_trace.py --workload decode --iterations 200 \
        --out examples/profiles/decode-launch-bound

Each iteration is one batch through a ResNet-50-like network on PyTorch: the input copied to
the GPU, per layer a handful of cuDNN descriptor calls and a kernel launch, an occasional
``cudaGetLastError``, and a ``cudaStreamSynchronize`` that brings the logits back. How each API
is remoted (SYNC / ASYNC / LOCAL) and what it waits for locally follow the rperf tool's own
tables (``rperf/typedict/remoting.py`` and ``blocking.py`` of github.com/chengchen666/
PhoenixOS-Remoting): cuDNN descriptor setters and kernel launches are ASYNC, ``cudaGetDevice``
is answered locally, ``cudaGetLastError`` and ``cudaStreamSynchronize`` are SYNC.

The times are plausible, not measured: launches of 3-5 µs, serialisation of about 0.5 µs (the
order rperf measured), kernels of 20-200 µs, a T4-like batch of 8 in about 15 ms. The file is an
example of the format and a benchmark input; profile your own application (docs/remoting.md).
The output is deterministic for given arguments.

``--workload decode`` is token-by-token decoding of a small language model without CUDA graphs:
per token about two dozen tiny kernels (2-4 µs of GPU time each, a matmul of one token's
activations) launched back to back, then the sampled token copied back and a synchronise. Each
launch costs the CPU more (a 4-5.5 µs dispatch gap in the framework plus 0.5-0.9 µs in the
driver) than its kernel costs the GPU, so the run is *launch-bound*: the GPU waits for the CPU.
That is where the latency models part (docs/remoting-model.md): pipelined, the launches overlap
on the wire; serialised (the authors' model), each one's RTT/2 waits for the previous arrival.
Plausible times, not measured; one iteration is one token.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

HEADER = ("name,kind,blocking,bytes_to_gpu,bytes_from_gpu,serialise_us,deserialise_us,"
          "process_us,gap_us,block_us")
LAYERS = 53  # convolutions of ResNet-50 (plus the classifier)


def iteration_calls(batch: int) -> list[tuple[str, str, str, float, float]]:
    """(name, kind, blocking, bytes to GPU, bytes back) for one batch, in order."""
    calls: list[tuple[str, str, str, float, float]] = [
        ("cudaGetDevice", "LOCAL", "NonBlocking", 0, 0),
        ("cudaMemcpyAsyncHostToDevice", "ASYNC", "GPUBlocking", batch * 3 * 224 * 224 * 4, 0),
    ]
    for layer in range(LAYERS):
        calls += [
            ("cudnnSetTensorNdDescriptor", "ASYNC", "NonBlocking", 64, 0),
            ("cudnnSetFilterNdDescriptor", "ASYNC", "NonBlocking", 64, 0),
            ("cudnnConvolutionForward", "ASYNC", "GPUBlocking", 160, 0),
            ("cudnnBatchNormalizationForwardInference", "ASYNC", "GPUBlocking", 160, 0),
            ("cudaLaunchKernel", "ASYNC", "GPUBlocking", 96, 0),  # ReLU / add
        ]
        if layer % 8 == 7:
            calls.append(("cudaGetLastError", "SYNC", "NonBlocking", 8, 4))
    calls += [
        ("cublasSgemm_v2", "ASYNC", "GPUBlocking", 128, 0),
        ("cudaMemcpyAsyncDeviceToHost", "ASYNC", "GPUBlocking", 32, 0),
        # the logits (batch x 1000 floats) come back with the synchronise that waits for them
        ("cudaStreamSynchronize", "SYNC", "CPUBlocking", 8, batch * 1000 * 4),
    ]
    return calls


DECODE_LAYERS = 2  # a tiny decoder: its kernels are short, so launches dominate
DECODE_KERNELS = ("layernorm", "qkv_gemm", "rotary", "attention", "out_gemm", "add",
                  "layernorm", "mlp_gemm", "gelu", "mlp_gemm")


def decode_calls(batch: int) -> list[tuple[str, str, str, float, float]]:
    """One token: embedding, the layers' kernels, the head and sampling, the token back."""
    calls: list[tuple[str, str, str, float, float]] = [
        ("cudaGetDevice", "LOCAL", "NonBlocking", 0, 0),
        ("cudaLaunchKernel", "ASYNC", "GPUBlocking", 160, 0),  # embedding lookup
    ]
    for _ in range(DECODE_LAYERS):
        calls += [("cudaLaunchKernel", "ASYNC", "GPUBlocking", 96 + 32 * (k % 3), 0)
                  for k, _ in enumerate(DECODE_KERNELS)]
    calls += [
        ("cudaLaunchKernel", "ASYNC", "GPUBlocking", 128, 0),  # final layernorm
        ("cublasGemmEx", "ASYNC", "GPUBlocking", 256, 0),  # the head
        ("cudaLaunchKernel", "ASYNC", "GPUBlocking", 96, 0),  # softmax
        ("cudaLaunchKernel", "ASYNC", "GPUBlocking", 96, 0),  # sampling
        ("cudaMemcpyAsyncDeviceToHost", "ASYNC", "GPUBlocking", 32, 0),
        ("cudaStreamSynchronize", "SYNC", "CPUBlocking", 8, batch * 8),  # the token ids back
    ]
    return calls


def generate_decode(iterations: int, batch: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    one = decode_calls(batch)
    names = np.array([c[0] for c in one] * iterations, dtype=object)
    kinds = np.array([c[1] for c in one] * iterations, dtype=object)
    blocking = np.array([c[2] for c in one] * iterations, dtype=object)
    to_gpu = np.array([c[3] for c in one] * iterations, dtype=np.float64)
    from_gpu = np.array([c[4] for c in one] * iterations, dtype=np.float64)
    n = len(names)
    gpu = blocking == "GPUBlocking"
    block = np.where(gpu, rng.uniform(2.0, 4.0, n), 0.0)
    process = np.where(gpu, rng.uniform(0.5, 0.9, n), rng.uniform(0.3, 0.8, n))
    gap = rng.uniform(4.0, 5.5, n)  # the framework's dispatch, per op
    serialise = np.where(kinds == "LOCAL", 0.0, 0.3 + to_gpu / 20e3)
    return dict(name=names, kind=kinds, blocking=blocking, bytes_to_gpu=to_gpu,
                bytes_from_gpu=from_gpu, serialise_us=serialise.round(3),
                deserialise_us=serialise.round(3), process_us=process.round(3),
                gap_us=gap.round(3), block_us=block.round(3))


def generate(iterations: int, batch: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    one = iteration_calls(batch)
    names = np.array([c[0] for c in one] * iterations, dtype=object)
    kinds = np.array([c[1] for c in one] * iterations, dtype=object)
    blocking = np.array([c[2] for c in one] * iterations, dtype=object)
    to_gpu = np.array([c[3] for c in one] * iterations, dtype=np.float64)
    from_gpu = np.array([c[4] for c in one] * iterations, dtype=np.float64)
    n = len(names)
    gpu = blocking == "GPUBlocking"
    h2d = names == "cudaMemcpyAsyncHostToDevice"
    block = np.where(gpu, rng.uniform(20.0, 200.0, n), 0.0)
    block[h2d] = to_gpu[h2d] / 12e3  # ~12 GB/s over PCIe: 12e3 bytes per µs
    block[names == "cudaMemcpyAsyncDeviceToHost"] = 2.0
    process = np.where(gpu, rng.uniform(3.0, 5.0, n), rng.uniform(0.3, 1.0, n))
    gap = rng.exponential(4.0, n)
    serialise = np.where(kinds == "LOCAL", 0.0, 0.3 + to_gpu / 20e3)  # memcpy ~20 GB/s
    deserialise = serialise.copy()
    return dict(name=names, kind=kinds, blocking=blocking, bytes_to_gpu=to_gpu,
                bytes_from_gpu=from_gpu, serialise_us=serialise.round(3),
                deserialise_us=deserialise.round(3), process_us=process.round(3),
                gap_us=gap.round(3), block_us=block.round(3))


def write(columns: dict[str, np.ndarray], csv_path: Path) -> None:
    import pandas as pd

    pd.DataFrame(columns).to_csv(csv_path, index=False, float_format="%.6g")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workload", choices=("cnn", "decode"), default="cnn",
                    help="cnn: ResNet-50-like inference; decode: launch-bound token decoding")
    ap.add_argument("--iterations", type=int,
                    help="batches or tokens (default: from --calls, else 20)")
    ap.add_argument("--calls", type=int, help="about this many calls (whole iterations)")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seed", type=int, default=8)
    ap.add_argument("--out", required=True, help="path without suffix: writes .csv and .yaml")
    args = ap.parse_args(argv)
    calls_of = decode_calls if args.workload == "decode" else iteration_calls
    per = len(calls_of(args.batch))
    iterations = args.iterations or (max(1, args.calls // per) if args.calls else 20)
    gen = generate_decode if args.workload == "decode" else generate
    columns = gen(iterations, args.batch, args.seed)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    csv_path = out.with_suffix(".csv")
    write(columns, csv_path)

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from gpupool.remoting.replay import local_time_us
    from gpupool.remoting.trace import load_trace

    trace = load_trace(csv_path)
    kinds = columns["kind"]
    what, name = ((f"Launch-bound token decoding, batch {args.batch}, {iterations} tokens",
                   "decode-launch-bound") if args.workload == "decode" else
                  (f"ResNet-50-like inference, batch {args.batch}, {iterations} batches",
                   "resnet50-inference"))
    profile = (
        f"# {what}: a SYNTHETIC trace, not a measurement,\n"
        f"# written by bench/gen_trace.py (see its docstring for what is modelled and from where)\n"
        f"name: {name}\n"
        f"local_time_s: {local_time_us(trace) / 1e6:.6g}   # the trace replayed on a local GPU\n"
        f"sync_calls: {int((kinds == 'SYNC').sum())}\n"
        f"async_calls: {int((kinds == 'ASYNC').sum())}\n"
        f"local_calls: {int((kinds == 'LOCAL').sum())}\n"
        f"bytes_to_gpu: {trace.total_bytes_to_gpu:.6g}\n"
        f"bytes_from_gpu: {trace.total_bytes_from_gpu:.6g}\n"
        f"trace: {csv_path.name}\n"
    )
    out.with_suffix(".yaml").write_text(profile)
    print(f"{csv_path}: {len(trace):,} calls; {out.with_suffix('.yaml')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
