"""Recommendations against the bundled catalog: the cheapest GPU that holds the estimate."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpupool.catalog import load_catalog
from gpupool.sizing import Workload, estimate, read_config, recommend
from gpupool.sizing.recommend import candidates

HF = Path(__file__).resolve().parents[2] / "fixtures" / "hf"
CATALOG = load_catalog()
BERT = read_config(HF / "bert-base-cased.config.json")
LLAMA7B = read_config(HF / "llama-2-7b-chat-hf.config.json")
T4_SMALLEST = CATALOG.smallest_for("T4", "x86_64")


def cheapest_single_gpu_holding(need_bytes: float, arch: str = "x86_64") -> str:
    """Independent of recommend(): scan the catalog for the answer."""
    fits = [t for t in CATALOG if t.arch == arch and t.gpu_count == 1
            and t.price_per_hour is not None and t.gpu_maker == "NVIDIA"
            and t.gpu_memory_mib * 1024**2 >= need_bytes]
    return min(fits, key=lambda t: (t.price_per_hour, t.instance_type)).instance_type


def test_small_encoder_fits_the_smallest_t4_size() -> None:
    est = estimate(BERT, Workload(dtype="fp32", batch=8, seq_len=512))
    rec = recommend(est, CATALOG)
    assert rec.best is not None and T4_SMALLEST is not None
    assert rec.best.instance_type.instance_type == T4_SMALLEST.instance_type == "g4dn.xlarge"
    assert rec.best.gpus == 1 and rec.best.price_per_hour == T4_SMALLEST.price_per_hour


def test_arm_or_any_architecture_takes_the_cheaper_t4g() -> None:
    est = estimate(BERT, Workload(dtype="fp16", seq_len=512))
    for arch in ("arm64", "any"):
        rec = recommend(est, CATALOG, arch=arch)
        assert rec.best is not None and rec.best.instance_type.instance_type == "g5g.xlarge"


def test_7b_decoder_at_4k_fp16_does_not_fit_16_gib_and_takes_the_next_cheapest() -> None:
    est = estimate(LLAMA7B, Workload(dtype="fp16", seq_len=4096))
    assert est.total_gib > 16  # 12.55 weights + 2 KV cache + context and headroom
    rec = recommend(est, CATALOG)
    assert rec.best is not None and rec.best.gpus == 1
    chosen = rec.best.instance_type
    assert chosen.gpu_model not in ("T4", "T4g") and chosen.gpu_memory_gib > 16
    assert chosen.instance_type == cheapest_single_gpu_holding(est.total)
    assert chosen.instance_type == "g6.xlarge"  # 1 x L4, $0.8048/h in the bundled price list
    assert rec.best.per_gpu_bytes <= chosen.gpu_memory_mib * 1024**2
    assert [a.instance_type.gpu_model for a in rec.alternatives][:1] == ["A10G"]


def test_bf16_skips_gpus_without_bf16() -> None:
    est = estimate(BERT, Workload(dtype="bf16", seq_len=512))
    rec = recommend(est, CATALOG)
    assert rec.best is not None and rec.best.instance_type.gpu_model not in ("T4", "T4g")
    assert any("T4: no bf16" in s for s in rec.skipped)


def test_too_big_for_one_gpu_takes_the_fewest_of_a_size() -> None:
    est = estimate(LLAMA7B, Workload(mode="training", dtype="bf16", seq_len=4096))
    rec = recommend(est, CATALOG)
    best = rec.best
    assert best is not None and best.gpus > 1
    memory = best.instance_type.gpu_memory_mib * 1024**2
    assert est.per_gpu(best.gpus) <= memory
    assert best.instance_type.gpu_count == best.gpus // best.instances
    assert "fully sharded" in best.sharding
    # a single GPU that holds 7B of mixed-precision Adam state (B200) costs more per hour
    single = recommend(est, CATALOG, single_gpu=True).best
    assert single is None or single.price_per_hour > best.price_per_hour
    # and nothing cheaper per hour holds it on its fewest GPUs
    for alt in rec.alternatives:
        assert alt.price_per_hour >= best.price_per_hour


def test_single_gpu_only_refuses_what_needs_sharding() -> None:
    est = estimate(LLAMA7B, Workload(mode="training", dtype="bf16", seq_len=4096))
    assert recommend(est, CATALOG, single_gpu=True, allowed=["A10G", "L4", "T4"]).best is None


def test_allowed_models_limit_the_choice() -> None:
    est = estimate(LLAMA7B, Workload(dtype="fp16", seq_len=4096))
    rec = recommend(est, CATALOG, allowed=["a10g"])
    assert rec.best is not None and rec.best.instance_type.instance_type == "g5.xlarge"


def test_candidates_leave_out_fractional_unpriced_and_other_arch() -> None:
    types, skipped = candidates(CATALOG, "x86_64", "fp16")
    assert types and all(t.gpu_count >= 1 and t.price_per_hour is not None
                         and t.arch == "x86_64" for t in types)
    assert not any(t.family == "g6f" for t in types)
    unpriced = {t.gpu_model for t in CATALOG if t.price_per_hour is None} - {
        t.gpu_model for t in types}
    for model in unpriced:
        assert any(s.startswith(f"{model}: no recorded price") for s in skipped)


@pytest.mark.parametrize("arch", ["x86_64", "arm64", "any"])
def test_recommendation_never_exceeds_gpu_memory(arch: str) -> None:
    for shape in (BERT, LLAMA7B):
        for mode in ("inference", "training"):
            est = estimate(shape, Workload(mode=mode, dtype="fp16", seq_len=512))
            best = recommend(est, CATALOG, arch=arch).best
            if best is not None:
                assert best.per_gpu_bytes <= best.instance_type.gpu_memory_mib * 1024**2
