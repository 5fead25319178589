# ruff: noqa: RUF002, RUF003  (× is the multiplication sign of the formulas)
"""GPU memory of one training or inference process, component by component.

Every formula names its source (docs/sizing.md has the derivations):

- weights: parameters × bytes of the dtype (what ``accelerate estimate-memory`` reports);
- training state, mixed precision (fp16/bf16) with Adam: 2 bytes of half-precision weights,
  2 of gradients and 12 of optimizer state (an fp32 master copy and two fp32 moments): 16 bytes
  per parameter before activations (Rajbhandari et al. 2020, "ZeRO", §3.1; EleutherAI,
  "Transformer Math 101", 2023). In fp32: 4 + 4 + 8. SGD keeps one momentum buffer instead of
  two moments;
- activations kept for the backward pass, per layer, 16-bit: ``s·b·h·(34 + 5·a·s/h)`` bytes
  (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models",
  eq. 1). The ``5·a·s/h`` term is the attention-score matrices, which memory-efficient attention
  (FlashAttention, PyTorch SDPA: the default) never materialises; ``eager_attention`` puts it
  back. With gradient checkpointing (full recomputation) only each layer's input stays,
  ``2·s·b·h`` bytes per layer (same paper, §4), and one layer's activations while it is
  recomputed (its input among them);
- the logits and their gradient in fp32 for the loss (``2 × 4·b·s·V``), the largest single
  tensor of a large-vocabulary model;
- inference: the KV cache, ``2 × layers × kv_heads × head_dim × bytes × tokens × batch``, and
  one layer's activations as working space;
- the CUDA context and framework workspace (PyTorch measured 287 MB with lazy module loading,
  667 MB without: pytorch/pytorch#86509); a stated headroom for allocator fragmentation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gpupool.errors import InputError
from gpupool.sizing.shape import ModelShape

GIB = 1024**3
Dtype = Literal["fp32", "bf16", "fp16", "int8", "int4"]
Mode = Literal["inference", "training"]
Optimizer = Literal["adam", "adamw", "sgd"]

DTYPE_BYTES: dict[str, float] = {"fp32": 4, "bf16": 2, "fp16": 2, "int8": 1, "int4": 0.5}
DTYPES: tuple[str, ...] = tuple(DTYPE_BYTES)
DEFAULT_CONTEXT_GIB = 0.5  # between PyTorch's lazy (0.27 GiB) and eager (0.62 GiB) contexts
DEFAULT_HEADROOM = 0.10

# Bytes of optimizer state per parameter: the moments, plus the fp32 master copy under mixed
# precision (counted here, as ZeRO does, because the optimizer owns it).
_MOMENTS = {"adam": 8, "adamw": 8, "sgd": 4}


@dataclass(frozen=True, slots=True)
class Workload:
    """What runs: inference or training, at which precision, batch and sequence length."""

    mode: Mode = "inference"
    dtype: Dtype = "fp16"
    batch: int = 1
    seq_len: int = 2048
    optimizer: Optimizer = "adamw"
    gradient_checkpointing: bool = False
    eager_attention: bool = False
    context_gib: float = DEFAULT_CONTEXT_GIB
    headroom: float = DEFAULT_HEADROOM

    def problems(self) -> list[str]:
        out = []
        if self.batch < 1:
            out.append(f"--batch: expected a whole number of at least 1, got {self.batch}")
        if self.seq_len < 1:
            out.append(f"--seq-len: expected a whole number of at least 1, got {self.seq_len}")
        if not 0 <= self.headroom < 1:
            out.append(f"--headroom: expected a fraction from 0 up to (not including) 1, got "
                       f"{self.headroom:g}")
        if not 0 <= self.context_gib <= 64:
            out.append(f"--overhead-gib: expected 0 to 64 GiB, got {self.context_gib:g}")
        if self.mode == "training" and self.dtype in ("int8", "int4"):
            out.append(f"--dtype {self.dtype}: expected fp32, bf16 or fp16 for training "
                       "(quantised weights are for inference or adapter fine-tuning such as "
                       "QLoRA, which this estimate does not model)")
        return out


@dataclass(frozen=True, slots=True)
class Estimate:
    """Bytes per component; ``total`` includes the headroom."""

    shape: ModelShape
    workload: Workload
    components: dict[str, float]  # component → bytes, headroom last

    @property
    def total(self) -> float:
        return sum(self.components.values())

    @property
    def total_gib(self) -> float:
        return self.total / GIB

    @property
    def breakdown_gib(self) -> dict[str, float]:
        return {k: round(v / GIB, 3) for k, v in self.components.items()}

    def per_gpu(self, gpus: int) -> float:
        """Bytes on each of ``gpus`` GPUs sharding the model evenly (tensor parallelism for
        inference, fully sharded data parallelism for training): every component is split
        except the CUDA context, which each GPU holds whole; headroom on top."""
        context = self.components.get("cuda_context", 0.0)
        shared = sum(v for k, v in self.components.items() if k not in ("cuda_context",
                                                                          "headroom"))
        return (shared / gpus + context) * (1 + self.workload.headroom)


def estimate(shape: ModelShape, w: Workload) -> Estimate:
    """Every component of ``w`` running ``shape``; InputError for an impossible workload."""
    problems = w.problems()
    if problems:
        raise InputError(problems)
    p = shape.params
    weight_bytes = DTYPE_BYTES[w.dtype]
    act_bytes = 4 if w.dtype == "fp32" else 2  # quantised weights compute in 16-bit
    c: dict[str, float] = {"weights": p * weight_bytes}
    if w.mode == "training":
        c["gradients"] = p * weight_bytes
        master = 4 if w.dtype in ("fp16", "bf16") else 0
        c["optimizer_states"] = p * (_MOMENTS[w.optimizer] + master)
        c["activations"] = training_activations(shape, w, act_bytes)
        c["logits"] = 2 * 4 * w.batch * w.seq_len * shape.vocab
    else:
        if not shape.is_encoder:
            c["kv_cache"] = kv_cache(shape, w.batch, w.seq_len, act_bytes)
        c["activations"] = layer_activations(shape, w.batch, w.seq_len, w.eager_attention,
                                             act_bytes)
    c["cuda_context"] = w.context_gib * GIB
    c["headroom"] = sum(c.values()) * w.headroom
    return Estimate(shape, w, c)


def layer_activations(shape: ModelShape, batch: int, seq: int, eager: bool,
                      act_bytes: float) -> float:
    """One layer's activations (Korthikanti et al. 2022, eq. 1), scaled from 16-bit."""
    s, b, h, a = seq, batch, shape.hidden, shape.heads
    per_layer = s * b * h * 34 + (5 * a * s * s * b if eager else 0)
    return per_layer * act_bytes / 2


def training_activations(shape: ModelShape, w: Workload, act_bytes: float) -> float:
    one = layer_activations(shape, w.batch, w.seq_len, w.eager_attention, act_bytes)
    if not w.gradient_checkpointing:
        return shape.layers * one
    inputs = 2 * w.seq_len * w.batch * shape.hidden * act_bytes / 2  # 2·s·b·h bytes in 16-bit
    # the layer being recomputed holds its own input among its activations
    return (shape.layers - 1) * inputs + one


def kv_cache(shape: ModelShape, batch: int, tokens: int, act_bytes: float) -> float:
    """Keys and values of every layer for ``tokens`` positions of ``batch`` sequences."""
    return 2 * shape.layers * shape.kv_heads * shape.head_dim * act_bytes * tokens * batch
