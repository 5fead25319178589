"""``gpupool estimate`` as a user runs it: JSON keys, text, and one-line refusals."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "cli"))
from cli_support import run_in_process, run_process

HF = Path(__file__).resolve().parents[2] / "fixtures" / "hf"
LLAMA = str(HF / "llama-2-7b-chat-hf.config.json")


def test_json_has_the_fixed_keys() -> None:
    r = run_in_process(["estimate", "--model-config", LLAMA, "--seq-len", "4096",
                        "--format", "json"])
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    assert isinstance(doc["total_gib"], float)
    assert any("weights" in k for k in doc["breakdown"])
    assert doc["breakdown"]["kv_cache"] == 2.0
    assert sum(doc["breakdown"].values()) == pytest.approx(doc["total_gib"], abs=0.01)
    rec = doc["recommendation"]
    assert {"instance_type", "gpu_model", "gpus", "price_per_hour"} <= rec.keys()
    assert rec["instance_type"] == "g6.xlarge" and rec["gpus"] == 1
    assert doc["model"]["params"] == 6_738_415_616


def test_default_sequence_is_the_models_context() -> None:
    r = run_in_process(["estimate", "--model-config", LLAMA, "--format", "json"])
    assert json.loads(r.out)["seq_len"] == 4096


def test_text_names_every_component_and_the_choice() -> None:
    r = run_in_process(["estimate", "--params", "7B", "--mode", "training", "--dtype", "bf16",
                        "--gradient-checkpointing"])
    assert r.code == 0, r.err
    for word in ("weights", "gradients", "optimizer states", "activations", "CUDA context",
                 "headroom (10%)", "total", "recommendation:", "sharding:", "shape assumed"):
        assert word in r.out, word


@pytest.mark.parametrize(("args", "expected"), [
    (["--params", "seven"], "--params: expected a parameter count"),
    (["--params", "0"], "--params: expected between 1"),
    (["--model-config", "/nonexistent/config.json"], "/nonexistent/config.json: no such file"),
    (["--params", "7B", "--mode", "training", "--dtype", "int4"], "--dtype int4: expected"),
    (["--params", "7B", "--batch", "0"], "--batch: expected"),
    (["--params", "7B", "--headroom", "nan"], "--headroom: expected"),
    ([], "give the model"),
    (["--params", "7B", "--model-config", LLAMA], "not allowed with argument"),
    (["--params", "7B", "--batch", "two"], "invalid int value"),
])
def test_bad_input_is_one_line_and_exit_2(args: list[str], expected: str) -> None:
    r = run_process(["estimate", *args])
    assert r.code == 2
    assert len(r.err_lines) == 1 and expected in r.err, r.err
    assert "Traceback" not in r.err


def test_moe_config_is_refused(tmp_path: Path) -> None:
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({"model_type": "mixtral", "num_local_experts": 8}))
    r = run_in_process(["estimate", "--model-config", str(cfg)])
    assert r.code == 2 and "mixture-of-experts" in r.err
