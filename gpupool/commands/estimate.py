"""``gpupool estimate (--params N | --model-config FILE) [sizing flags] [--format text|json]``.

Prints the GPU memory a model needs, component by component, and the cheapest catalog GPU (or
fewest GPUs of one size) that holds it. The sizing flags are shared with ``gpupool new-stack``
(:func:`sizing_inputs`), so a stack is sized exactly as ``estimate`` shows.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Any

from gpupool.errors import InputError
from gpupool.sizing import (
    Estimate,
    ModelShape,
    Recommendation,
    Workload,
    estimate,
    read_config,
    recommend,
    shape_from_params,
)

DEFAULT_SEQ_LEN = 2048
MAX_DEFAULT_SEQ_LEN = 8192
_SUFFIX = {"": 1, "k": 10**3, "m": 10**6, "b": 10**9, "t": 10**12}
_PARAMS = re.compile(r"^\s*(\d+(?:\.\d+)?(?:e\d+)?)\s*([kmbt]?)\s*$", re.IGNORECASE)
MAX_PARAMS = 10**14


def parse_params(text: str) -> int:
    """``7B``, ``125M``, ``1.1e9`` or ``6738415616`` → a parameter count."""
    m = _PARAMS.match(text)
    if not m:
        raise InputError(f"--params: expected a parameter count such as 7B, 125M or "
                         f"6738415616, got {text!r}")
    value = float(m.group(1)) * _SUFFIX[m.group(2).lower()]
    if not 1 <= value <= MAX_PARAMS:
        raise InputError(f"--params: expected between 1 and {MAX_PARAMS:.0e} parameters, "
                         f"got {text!r}")
    return round(value)


def sizing_inputs(args: argparse.Namespace) -> tuple[ModelShape, Workload]:
    """The model shape and workload the sizing flags describe."""
    if args.model_config:
        shape = read_config(args.model_config)
    elif args.params:
        shape = shape_from_params(parse_params(args.params))
    else:
        raise InputError("give the model: --model-config FILE (a Hugging Face config.json) "
                         "or --params N (such as 7B)")
    seq_len = args.seq_len
    if seq_len is None:
        seq_len = min(shape.positions, MAX_DEFAULT_SEQ_LEN) if shape.positions else (
            DEFAULT_SEQ_LEN)
    workload = Workload(
        mode=args.mode, dtype=args.dtype, batch=args.batch, seq_len=seq_len,
        optimizer=args.optimizer, gradient_checkpointing=args.gradient_checkpointing,
        eager_attention=args.eager_attention, headroom=args.headroom,
        context_gib=args.overhead_gib,
    )
    return shape, workload


def notes(shape: ModelShape, w: Workload) -> list[str]:
    out = list(shape.notes)
    if shape.family.learned_positions and shape.positions and w.seq_len > shape.positions:
        out.append(f"--seq-len {w.seq_len} is longer than the model's "
                   f"{shape.positions} learned positions")
    if w.mode == "training" and w.optimizer != "sgd" and w.dtype in ("fp16", "bf16"):
        out.append("mixed precision: half-precision weights and gradients, fp32 master "
                   "weights and Adam moments in optimizer_states (16 bytes per parameter "
                   "before activations)")
    return out


def run(args: argparse.Namespace) -> int:
    shape, workload = sizing_inputs(args)
    est = estimate(shape, workload)
    from gpupool.catalog import load_catalog

    rec = recommend(est, load_catalog(), arch=args.arch)
    doc = to_document(est, rec, args.arch)
    if args.format == "json":
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    else:
        sys.stdout.write(render_text(doc))
    return 0


def to_document(est: Estimate, rec: Recommendation, arch: str) -> dict[str, Any]:
    s, w = est.shape, est.workload
    return {
        "model": {
            "name": s.name,
            "model_type": s.model_type,
            "params": s.params,
            "params_source": "given" if s.params_given is not None else "config",
            "layers": s.layers, "hidden_size": s.hidden, "heads": s.heads,
            "kv_heads": s.kv_heads, "head_dim": s.head_dim,
            "intermediate_size": s.intermediate, "vocab_size": s.vocab,
            "kind": "encoder" if s.is_encoder else "decoder",
        },
        "mode": w.mode, "dtype": w.dtype, "batch": w.batch, "seq_len": w.seq_len,
        "optimizer": w.optimizer if w.mode == "training" else None,
        "gradient_checkpointing": w.gradient_checkpointing,
        "eager_attention": w.eager_attention,
        "headroom": w.headroom,
        "arch": arch,
        "total_gib": round(est.total_gib, 3),
        "breakdown": est.breakdown_gib,
        "recommendation": rec.best.to_dict() if rec.best else None,
        "alternatives": [o.to_dict() for o in rec.alternatives],
        "skipped": list(rec.skipped),
        "notes": notes(s, w),
    }


_LABELS = {
    "weights": "weights",
    "gradients": "gradients",
    "optimizer_states": "optimizer states",
    "activations": "activations",
    "logits": "logits (fp32, with gradient)",
    "kv_cache": "KV cache",
    "cuda_context": "CUDA context + framework",
    "headroom": "headroom",
}


def render_text(doc: dict[str, Any]) -> str:
    m = doc["model"]
    lines = [
        f"{m['name']}: {m['params']:,} parameters ({m['kind']}, {m['layers']} layers, "
        f"hidden {m['hidden_size']}, {m['heads']} heads / {m['kv_heads']} KV heads)",
        f"{doc['mode']} in {doc['dtype']}, batch {doc['batch']}, sequence {doc['seq_len']}"
        + (f", {doc['optimizer']}" if doc["optimizer"] else "")
        + (", gradient checkpointing" if doc["gradient_checkpointing"] else ""),
        "",
    ]
    width = max(len(v) for v in _LABELS.values())
    for key, gib in doc["breakdown"].items():
        label = _LABELS.get(key, key)
        if key == "headroom":
            label += f" ({doc['headroom']:.0%})"
        lines.append(f"  {label:<{width + 6}} {gib:>10.2f} GiB")
    lines.append(f"  {'total':<{width + 6}} {doc['total_gib']:>10.2f} GiB")
    lines.append("")
    rec = doc["recommendation"]
    if rec is None:
        lines.append(f"no catalog GPU on {doc['arch']} holds it (up to "
                     "64 instances of the largest size)")
    else:
        count = (f"{rec['instances']} x {rec['instance_type']}" if rec["instances"] > 1
                 else rec["instance_type"])
        lines.append(
            f"recommendation: {count} ({rec['gpus']} x {rec['gpu_model']}, "
            f"{rec['gpu_memory_gib']:g} GiB each, {rec['per_gpu_gib']:.2f} GiB used per GPU) "
            f"at ${rec['price_per_hour']:.4f}/h on-demand")
        if rec["gpus"] > 1:
            lines.append(f"  sharding: {rec['sharding']}")
    for alt in doc["alternatives"]:
        lines.append(f"  then: {alt['instances']} x {alt['instance_type']} "
                     f"({alt['gpus']} x {alt['gpu_model']}) ${alt['price_per_hour']:.4f}/h")
    for note in doc["notes"]:
        lines.append(f"note: {note}")
    for why in doc["skipped"]:
        lines.append(f"skipped: {why}")
    from gpupool.terminal import safe

    return safe("\n".join(lines) + "\n", multiline=True)  # the model's name is the config's
