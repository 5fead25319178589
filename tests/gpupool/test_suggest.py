"""gpupool.suggest: the one "did you mean" every command uses."""

from __future__ import annotations

from gpupool.suggest import closest, did_you_mean

IDS = ("gpu-smallest-instance", "imdsv2-required", "karpenter-gpu-smallest")


def test_close_words_and_nothing_wild() -> None:
    assert closest("gpu-smalest-instance", IDS) == "gpu-smallest-instance"
    assert closest("imdsv2-requird", IDS) == "imdsv2-required"
    assert closest("g", ("gpu-inference", "gpu-training")) is None  # several, none close
    assert closest("terraform", IDS) is None
    assert did_you_mean("karpenter-gpu-smalest", IDS) == (
        " (did you mean karpenter-gpu-smallest?)")
    assert did_you_mean("", IDS) == ""
