"""Memory per component: by hand, against published figures, and as properties."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpupool.errors import InputError
from gpupool.sizing import Workload, estimate, read_config
from gpupool.sizing.memory import GIB, kv_cache
from gpupool.sizing.shape import FAMILIES, ModelShape

HF = Path(__file__).resolve().parents[2] / "fixtures" / "hf"
MIB = 1024**2
BERT = read_config(HF / "bert-base-cased.config.json")
LLAMA7B = read_config(HF / "llama-2-7b-chat-hf.config.json")
TINY = read_config(HF / "tinyllama-1.1b-chat-v1.0.config.json")


def within(value: float, published: float, tolerance: float = 0.10) -> bool:
    return abs(value - published) <= tolerance * published


# -- published figures ---------------------------------------------------------------------

# `accelerate estimate-memory bert-base-cased`, as Hugging Face's Accelerate documentation shows
# it (docs/source/usage_guides/model_size_estimator.md; its "MB"/"GB" are powers of 1024).
ACCELERATE_BERT_TOTAL_MIB = {"fp32": 413.18, "fp16": 206.59, "int8": 103.29, "int4": 51.65}
ACCELERATE_BERT_TRAINING_ADAM_FP32_GIB = 1.61


@pytest.mark.parametrize(("dtype", "mib"), ACCELERATE_BERT_TOTAL_MIB.items())
def test_weights_match_accelerate_estimate_memory(dtype: str, mib: float) -> None:
    weights = estimate(BERT, Workload(dtype=dtype, seq_len=512)).components["weights"]
    assert within(weights / MIB, mib)


def test_weights_match_accelerates_own_test_in_bytes() -> None:
    # accelerate tests/test_cli.py pins bert-base-cased at 433,249,280 bytes in fp32
    weights = estimate(BERT, Workload(dtype="fp32", seq_len=512)).components["weights"]
    assert within(weights, 433_249_280, 0.001)


def test_fp32_adam_model_states_match_accelerates_training_column() -> None:
    c = estimate(BERT, Workload(mode="training", dtype="fp32", optimizer="adam",
                                seq_len=512)).components
    states = c["weights"] + c["gradients"] + c["optimizer_states"]
    assert within(states / GIB, ACCELERATE_BERT_TRAINING_ADAM_FP32_GIB)


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_mixed_precision_adam_is_16_bytes_per_parameter(dtype: str) -> None:
    # EleutherAI, Transformer Math 101 (and ZeRO §3.1): 2 (weights) + 2 (gradients) + 12
    # (fp32 master copy, momentum, variance) bytes per parameter before activations.
    c = estimate(LLAMA7B, Workload(mode="training", dtype=dtype, seq_len=4096)).components
    per_param = (c["weights"] + c["gradients"] + c["optimizer_states"]) / LLAMA7B.params
    assert within(per_param, 16)
    assert c["optimizer_states"] / LLAMA7B.params == 12


def test_inference_overhead_is_of_the_order_transformer_math_states() -> None:
    # Transformer Math 101: inference needs up to ~20 % over the weights. At a short context
    # our KV cache, activations, context and headroom land in that range for a 7B model.
    e = estimate(LLAMA7B, Workload(dtype="fp16", seq_len=512))
    ratio = e.total / e.components["weights"]
    assert 1.1 <= ratio <= 1.3


# -- components by hand ----------------------------------------------------------------------


def test_kv_cache_by_hand() -> None:
    # 2 (K and V) x 32 layers x 32 KV heads x 128 head dim x 2 bytes x 4096 tokens = 2 GiB
    assert kv_cache(LLAMA7B, 1, 4096, 2) == 2 * GIB
    # grouped-query attention: 4 KV heads of 64 instead of 32
    assert kv_cache(TINY, 1, 2048, 2) == 2 * 22 * 4 * 64 * 2 * 2048
    assert kv_cache(TINY, 3, 2048, 2) == 3 * kv_cache(TINY, 1, 2048, 2)


def test_encoders_have_no_kv_cache() -> None:
    assert "kv_cache" not in estimate(BERT, Workload(seq_len=512)).components
    assert "kv_cache" in estimate(LLAMA7B, Workload(seq_len=512)).components


def test_activations_follow_korthikanti_by_hand() -> None:
    s, b = 1024, 2
    h, a, layers = LLAMA7B.hidden, LLAMA7B.heads, LLAMA7B.layers
    w = Workload(mode="training", dtype="bf16", batch=b, seq_len=s)
    flash = estimate(LLAMA7B, w).components["activations"]
    assert flash == layers * s * b * h * 34
    eager = estimate(LLAMA7B, replace(w, eager_attention=True)).components["activations"]
    assert eager == layers * s * b * h * (34 + 5 * a * s / h)
    ckpt = estimate(LLAMA7B, replace(w, gradient_checkpointing=True)).components["activations"]
    assert ckpt == (layers - 1) * 2 * s * b * h + s * b * h * 34  # inputs + one recomputed layer
    fp32 = estimate(LLAMA7B, replace(w, dtype="fp32")).components["activations"]
    assert fp32 == 2 * flash


def test_logits_optimizer_context_and_headroom() -> None:
    w = Workload(mode="training", dtype="fp16", batch=2, seq_len=256, optimizer="sgd",
                 headroom=0.2, context_gib=1.0)
    c = estimate(TINY, w).components
    assert c["logits"] == 2 * 4 * 2 * 256 * 32000
    assert c["optimizer_states"] == TINY.params * (4 + 4)  # momentum + fp32 master
    assert c["cuda_context"] == GIB
    others = sum(v for k, v in c.items() if k != "headroom")
    assert c["headroom"] == pytest.approx(0.2 * others)


def test_sharding_splits_all_but_the_context() -> None:
    e = estimate(LLAMA7B, Workload(dtype="fp16", seq_len=4096))
    assert e.per_gpu(1) == pytest.approx(e.total)
    c = e.components
    shared = e.total / 1.1 - c["cuda_context"]
    assert e.per_gpu(4) == pytest.approx((shared / 4 + c["cuda_context"]) * 1.1)


@pytest.mark.parametrize(("w", "expected"), [
    (Workload(mode="training", dtype="int8"), "--dtype int8: expected fp32, bf16 or fp16"),
    (Workload(batch=0), "--batch: expected a whole number of at least 1"),
    (Workload(seq_len=-5), "--seq-len"),
    (Workload(headroom=1.5), "--headroom"),
    (Workload(headroom=float("nan")), "--headroom"),
    (Workload(context_gib=float("inf")), "--overhead-gib"),
])
def test_impossible_workloads_are_refused(w: Workload, expected: str) -> None:
    with pytest.raises(InputError) as e:
        estimate(TINY, w)
    assert any(expected in line for line in e.value.problems)


# -- properties ------------------------------------------------------------------------------

shapes = st.builds(
    lambda heads, kv_div, head_dim, layers, vocab, family: ModelShape(
        name="m", hidden=heads * head_dim, layers=layers, heads=heads,
        kv_heads=max(1, heads // kv_div), head_dim=head_dim,
        intermediate=4 * heads * head_dim, vocab=vocab, positions=4096,
        family=FAMILIES[family]),
    st.sampled_from([4, 8, 16, 32]), st.sampled_from([1, 2, 4]),
    st.sampled_from([32, 64, 128]), st.integers(1, 48), st.integers(1000, 160_000),
    st.sampled_from(sorted(FAMILIES)),
)
workloads = st.builds(
    Workload,
    mode=st.sampled_from(["inference", "training"]),
    dtype=st.sampled_from(["fp32", "fp16", "bf16"]),
    batch=st.integers(1, 64), seq_len=st.integers(1, 16384),
    optimizer=st.sampled_from(["adam", "adamw", "sgd"]),
    gradient_checkpointing=st.booleans(), eager_attention=st.booleans(),
)


@given(shapes, workloads, st.integers(1, 8))
def test_monotone_in_batch(shape: ModelShape, w: Workload, more: int) -> None:
    assert estimate(shape, replace(w, batch=w.batch + more)).total >= estimate(shape, w).total


@given(shapes, workloads, st.integers(1, 4096))
def test_monotone_in_sequence_length(shape: ModelShape, w: Workload, more: int) -> None:
    longer = replace(w, seq_len=w.seq_len + more)
    assert estimate(shape, longer).total >= estimate(shape, w).total


@given(shapes, workloads)
def test_monotone_in_precision(shape: ModelShape, w: Workload) -> None:
    order = ["fp32", "fp16", "int8", "int4"] if w.mode == "inference" else ["fp32", "fp16"]
    totals = [estimate(shape, replace(w, dtype=d)).total for d in order]
    assert totals == sorted(totals, reverse=True)
    assert estimate(shape, replace(w, dtype="bf16")).total == totals[1]


@given(shapes, workloads.filter(lambda w: w.mode == "training"))
def test_checkpointing_never_costs_memory(shape: ModelShape, w: Workload) -> None:
    on = estimate(shape, replace(w, gradient_checkpointing=True)).total
    off = estimate(shape, replace(w, gradient_checkpointing=False)).total
    assert on <= off


@given(shapes, workloads)
def test_training_needs_more_than_inference(shape: ModelShape, w: Workload) -> None:
    train = estimate(shape, replace(w, mode="training")).total
    infer = estimate(shape, replace(w, mode="inference")).total
    assert train >= infer
