"""Parameter counts from real Hugging Face configs, against the models' published counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpupool.errors import InputError
from gpupool.sizing import count_params, read_config, shape_from_params
from gpupool.sizing.shape import shape_from_config

HF = Path(__file__).resolve().parents[2] / "fixtures" / "hf"


@pytest.mark.parametrize(("file", "params"), [
    # model.num_parameters() of the base model, as transformers builds it
    ("bert-base-cased.config.json", 108_310_272),
    ("gpt2.config.json", 124_439_808),
    ("llama-2-7b-chat-hf.config.json", 6_738_415_616),
    ("tinyllama-1.1b-chat-v1.0.config.json", 1_100_048_384),
])
def test_parameter_count_of_real_configs_is_exact(file: str, params: int) -> None:
    assert read_config(HF / file).params == params


def test_grouped_query_attention_is_read() -> None:
    tiny = read_config(HF / "tinyllama-1.1b-chat-v1.0.config.json")
    assert (tiny.heads, tiny.kv_heads, tiny.head_dim) == (32, 4, 64)
    llama = read_config(HF / "llama-2-7b-chat-hf.config.json")
    assert llama.kv_heads == llama.heads == 32 and not llama.is_encoder


def test_encoder_and_its_positions() -> None:
    bert = read_config(HF / "bert-base-cased.config.json")
    assert bert.is_encoder and bert.positions == 512 and bert.type_vocab == 2


def test_fewer_kv_heads_means_fewer_parameters() -> None:
    doc = json.loads((HF / "llama-2-7b-chat-hf.config.json").read_text())
    mha = shape_from_config(doc, "x")
    gqa = shape_from_config({**doc, "num_key_value_heads": 8}, "x")
    # K and V projections shrink from 4096x4096 to 4096x1024 in each of 32 layers
    assert mha.params - gqa.params == 32 * 2 * 4096 * (4096 - 1024)


def test_unknown_family_is_counted_as_dense_decoder_with_a_note() -> None:
    doc = json.loads((HF / "llama-2-7b-chat-hf.config.json").read_text())
    shape = shape_from_config({**doc, "model_type": "newthing"}, "x")
    assert shape.params == 6_738_415_616  # silu → gated MLP, as llama
    assert any("newthing" in n for n in shape.notes)


def test_params_only_assumes_a_shape_and_says_so() -> None:
    shape = shape_from_params(7_000_000_000)
    assert shape.params == 7_000_000_000
    assert 28 <= shape.layers <= 36 and 3584 <= shape.hidden <= 4608  # a 7B-class shape
    assert "assumed" in shape.notes[0]
    assert abs(count_params(shape) - 7e9) / 7e9 < 0.1  # the assumed shape is that size


@pytest.mark.parametrize(("doc", "expected"), [
    ({"model_type": "mixtral", "num_local_experts": 8, "hidden_size": 4096},
     "num_local_experts: a mixture-of-experts model (8 experts)"),
    ({"model_type": "llama", "hidden_size": "4096", "num_hidden_layers": 32,
      "num_attention_heads": 32, "vocab_size": 32000},
     "hidden_size: expected a positive whole number, got '4096'"),
    ({"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
      "vocab_size": 32000}, "num_attention_heads: required key is missing"),
    ({"model_type": "llava", "text_config": {"hidden_size": 4096}},
     "multimodal configs keep them under text_config"),
    ({"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 30,
      "vocab_size": 32000}, "num_attention_heads: expected a divisor of hidden_size"),
    ({"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
      "num_key_value_heads": 5, "vocab_size": 32000},
     "num_key_value_heads: expected a divisor of num_attention_heads"),
    ({"hidden_size": True, "num_hidden_layers": 32, "num_attention_heads": 32,
      "vocab_size": 32000}, "hidden_size: expected a positive whole number, got True"),
    ([1, 2], "expected a JSON object"),
])
def test_bad_configs_name_the_key(doc: object, expected: str) -> None:
    with pytest.raises(InputError) as e:
        shape_from_config(doc, "cfg.json")
    assert all(line.startswith("cfg.json: ") for line in e.value.problems)
    assert any(expected in line for line in e.value.problems), e.value.problems


@pytest.mark.parametrize(("content", "expected"), [
    (b'{"hidden_size": 1, "hidden_size": 2}', 'key "hidden_size": expected each key once'),
    (b'{"hidden_size": NaN}', "expected a JSON number, got NaN"),
    (b'{"hidden_size": 1e999}', "expected a finite number"),
    (b"{not json", "expected valid JSON (line 1"),
    (b"\xff\xfe", "expected UTF-8 JSON text"),
    (b"[" * 100_000 + b"]" * 100_000, "nest"),
])
def test_unreadable_files_are_one_line(tmp_path: Path, content: bytes, expected: str) -> None:
    f = tmp_path / "config.json"
    f.write_bytes(content)
    with pytest.raises(InputError) as e:
        read_config(f)
    assert len(e.value.problems) == 1 and expected in e.value.problems[0]


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_config(tmp_path / "nope.json")
    with pytest.raises(InputError, match="got a directory"):
        read_config(tmp_path)
