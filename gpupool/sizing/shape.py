"""A dense transformer's shape, read from a Hugging Face ``config.json``, and its parameter count.

The count is exact for the families in :data:`FAMILIES` (it matches ``model.num_parameters()``
of the base model: BERT-base-cased 108,310,272; GPT-2 124,439,808; Llama-2-7B 6,738,415,616;
TinyLlama-1.1B 1,100,048,384) because it adds every matrix, bias, norm and embedding the
family's modelling code creates. An unknown ``model_type`` with the usual keys is counted as a
dense decoder (gated MLP when ``hidden_act`` is SiLU-like) and the estimate says so; mixture-of-
experts and multimodal configs are refused: their memory is not a dense transformer's.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from gpupool.errors import InputError
from gpupool.jsonio import JsonProblem, loads

MAX_CONFIG_BYTES = 1 << 20  # a config.json is a few KiB; anything near 1 MiB is not one
MAX_DIMENSION = 10**7  # hidden sizes, layers, heads, vocabularies: well above any real model's


@dataclass(frozen=True, slots=True)
class Family:
    """What a model family's modelling code creates besides the attention and MLP matrices."""

    encoder: bool = False  # bidirectional, no KV cache at inference
    gated_mlp: bool = False  # SwiGLU/GeGLU: gate, up and down projections
    layer_norm_bias: bool = False  # LayerNorm (weight + bias) rather than RMSNorm (weight)
    attn_bias: bool = False  # biases on Q, K, V and the output projection
    qkv_bias_only: bool = False  # Qwen2: biases on Q, K, V but not on the output projection
    mlp_bias: bool = False
    learned_positions: bool = False  # a position-embedding table (GPT-2, BERT), not RoPE
    token_types: bool = False  # BERT's token-type embeddings
    embedding_norm: bool = False  # a LayerNorm right after the embeddings (BERT)
    pooler: bool = False  # BERT's pooler (a dense layer on the first token)
    final_norm: bool = True
    tied_default: bool = True  # Hugging Face's PretrainedConfig default for tie_word_embeddings


_LLAMA = Family(gated_mlp=True, tied_default=False)
_BERT = Family(encoder=True, layer_norm_bias=True, attn_bias=True, mlp_bias=True,
               learned_positions=True, token_types=True, embedding_norm=True, pooler=True,
               final_norm=False)

# model_type → family, from each family's transformers modelling code.
FAMILIES: dict[str, Family] = {
    "llama": _LLAMA,
    "mistral": _LLAMA,
    "qwen2": replace(_LLAMA, qkv_bias_only=True),
    "gpt2": Family(layer_norm_bias=True, attn_bias=True, mlp_bias=True, learned_positions=True),
    "bert": _BERT,
    "roberta": _BERT,
    "distilbert": replace(_BERT, token_types=False, pooler=False),
}

# The keys each quantity goes by across families (first found wins).
_KEYS: dict[str, tuple[str, ...]] = {
    "hidden": ("hidden_size", "n_embd", "d_model", "dim"),
    "layers": ("num_hidden_layers", "n_layer", "num_layers", "n_layers"),
    "heads": ("num_attention_heads", "n_head", "num_heads", "n_heads"),
    "kv_heads": ("num_key_value_heads", "num_kv_heads", "n_head_kv"),
    "intermediate": ("intermediate_size", "n_inner", "ffn_dim", "hidden_dim"),
    "vocab": ("vocab_size",),
    "positions": ("max_position_embeddings", "n_positions", "n_ctx"),
}
_MOE_KEYS = ("num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts")
_GATED_ACTS = ("silu", "swiglu", "swish", "geglu", "gelu_pytorch_tanh_gated")


@dataclass(frozen=True, slots=True)
class ModelShape:
    """The dimensions that decide a dense transformer's memory."""

    name: str
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int
    positions: int = 0
    type_vocab: int = 0
    tied_embeddings: bool = True
    family: Family = field(default_factory=Family)
    model_type: str = ""
    notes: tuple[str, ...] = ()
    params_given: int | None = None  # --params: the count is the user's, the shape assumed

    @property
    def is_encoder(self) -> bool:
        return self.family.encoder

    @property
    def params(self) -> int:
        return self.params_given if self.params_given is not None else count_params(self)


def count_params(s: ModelShape) -> int:
    """Every parameter of the base model (with its LM head when the family has one)."""
    f = s.family
    h, d = s.hidden, s.head_dim
    q_out, kv_out = s.heads * d, s.kv_heads * d
    attn = h * q_out + 2 * h * kv_out + q_out * h
    if f.attn_bias:
        attn += q_out + 2 * kv_out + h
    elif f.qkv_bias_only:
        attn += q_out + 2 * kv_out
    mats = 3 if f.gated_mlp else 2
    mlp = mats * h * s.intermediate
    if f.mlp_bias:
        mlp += s.intermediate * (mats - 1) + h
    norm = 2 * h if f.layer_norm_bias else h
    per_layer = attn + mlp + 2 * norm
    embed = s.vocab * h
    if f.learned_positions:
        embed += s.positions * h
    if f.token_types:
        embed += s.type_vocab * h
    if f.embedding_norm:
        embed += norm
    total = embed + s.layers * per_layer
    if f.final_norm:
        total += norm
    if f.pooler:
        total += h * h + h
    if not f.encoder and not s.tied_embeddings:
        total += s.vocab * h  # a separate LM head
    return total


def shape_from_params(params: int) -> ModelShape:
    """A shape for ``--params N`` alone, so activations and the KV cache can be estimated.

    Assumes the usual dense-decoder proportions: ``params ≈ 12·L·h²`` with ``h = 128·L``
    (Kaplan et al. 2020 find loss nearly flat over a wide range of aspect ratios; 7B-class
    models sit near h/L = 128), 128-wide heads, a gated MLP of 8h/3 (Llama's: 12·h² per layer
    in all) and a 32k vocabulary. The estimate says it used this assumption; give
    --model-config for the real shape.
    """
    layers = max(1, round((params / (12 * 128**2)) ** (1 / 3)))
    hidden = max(128, round(math.sqrt(params / (12 * layers)) / 128) * 128)
    heads = max(1, hidden // 128)
    return ModelShape(
        name="dense decoder (--params)",
        hidden=hidden, layers=layers, heads=heads, kv_heads=heads, head_dim=hidden // heads,
        intermediate=max(256, round(8 * hidden / 3 / 256) * 256), vocab=32000, family=_LLAMA,
        model_type="assumed",
        notes=(f"shape assumed from the parameter count ({layers} layers, hidden size {hidden}, "
               f"{heads} heads): give --model-config for the model's own",),
        params_given=params,
    )


def read_config(path: str | Path) -> ModelShape:
    """Read a Hugging Face ``config.json``; InputError names the file and key on any problem."""
    from gpupool.inputs import read_regular

    shown = str(path)
    p = Path(path)
    raw = read_regular(p, shown, limit=MAX_CONFIG_BYTES, what="a Hugging Face config.json")
    try:
        doc = loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise InputError(f"{shown}: expected UTF-8 JSON text") from None
    except json.JSONDecodeError as e:
        raise InputError(f"{shown}: expected valid JSON (line {e.lineno} column {e.colno}: "
                         f"{e.msg})") from None
    except JsonProblem as e:  # duplicate keys, NaN, 1e999, 5,000-digit numbers, deep nesting
        raise InputError(f"{shown}: {e}") from None
    fallback = (p.parent.name if p.name == "config.json" and p.parent.name
                else p.name.removesuffix(".json").removesuffix(".config"))
    return shape_from_config(doc, shown, fallback_name=fallback)


def shape_from_config(doc: Any, shown: str, fallback_name: str = "") -> ModelShape:
    """The shape a config document describes; one InputError line per problem."""
    if not isinstance(doc, Mapping):
        raise InputError(f"{shown}: expected a JSON object (a Hugging Face config.json)")
    for key in _MOE_KEYS:
        if doc.get(key) is None:
            continue
        experts = _count_of(doc[key])
        if experts is None:  # the guard fails closed: an unreadable count may be many experts
            raise InputError(f"{shown}: {key}: expected a number of experts, got "
                             f"{_shown(doc[key])}")
        if experts > 1:
            raise InputError(f"{shown}: {key}: a mixture-of-experts model ({experts:,} experts) "
                             "is not a dense transformer; give its total parameter count with "
                             "--params instead")
    model_type = doc.get("model_type")
    model_type = model_type if isinstance(model_type, str) else ""
    problems: list[str] = []
    values: dict[str, int] = {}
    found: dict[str, str] = {}
    for name, keys in _KEYS.items():
        key = next((k for k in keys if k in doc and doc[k] is not None), None)
        if key is None:
            continue
        value = doc[key]
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            problems.append(f"{shown}: {key}: expected a positive whole number, got "
                            f"{_shown(value)}")
            continue
        if value > MAX_DIMENSION:
            problems.append(f"{shown}: {key}: expected a model dimension, got {_shown(value)}")
            continue
        values[name] = value
        found[name] = key
    for name in ("hidden", "layers", "heads", "vocab"):
        if name not in values and not any(p.startswith(f"{shown}: {k}:")
                                          for p in problems for k in _KEYS[name]):
            nested = " (multimodal configs keep them under text_config: give that part)" if (
                isinstance(doc.get("text_config"), Mapping)) else ""
            problems.append(f"{shown}: {_KEYS[name][0]}: required key is missing (also read as "
                            f"{', '.join(_KEYS[name][1:]) or 'nothing else'}){nested}")
    if problems:
        raise InputError(problems)
    hidden, heads = values["hidden"], values["heads"]
    head_dim = doc.get("head_dim")
    if head_dim is not None and not (_is_whole(head_dim) and 0 < head_dim <= MAX_DIMENSION):
        raise InputError(f"{shown}: head_dim: expected a model dimension (a whole number from "
                         f"1 to {MAX_DIMENSION:,}), got {_shown(head_dim)}")
    if head_dim is None:
        if hidden % heads:
            raise InputError(f"{shown}: {found['heads']}: expected a divisor of "
                             f"{found['hidden']} ({hidden}), got {heads}")
        head_dim = hidden // heads
    kv_heads = values.get("kv_heads", heads)
    if doc.get("multi_query") is True:
        kv_heads = 1
    if heads % kv_heads:
        raise InputError(f"{shown}: {found['kv_heads']}: expected a divisor of "
                         f"{found['heads']} ({heads}), got {kv_heads}")
    family, notes = _family(model_type, doc)
    tied = doc.get("tie_word_embeddings", family.tied_default)
    type_vocab = doc.get("type_vocab_size", 2 if family.token_types else 0)
    name = doc.get("_name_or_path") or fallback_name or model_type or "model"
    return ModelShape(
        name=str(name)[:100],
        hidden=hidden,
        layers=values["layers"],
        heads=heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        intermediate=values.get("intermediate") or 4 * hidden,
        vocab=values["vocab"],
        positions=values.get("positions", 0),
        type_vocab=type_vocab if _is_whole(type_vocab) and 0 <= type_vocab <= MAX_DIMENSION
        else 0,
        tied_embeddings=tied is True,
        family=family,
        model_type=model_type,
        notes=tuple(notes),
    )


def _is_whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _count_of(value: Any) -> int | None:
    """A count as JSON writers spell it: ``8``, ``8.0``, ``"8"``; None when it is not one."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if math.isfinite(value) and value.is_integer() else None
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) <= 20:
        return int(value.strip())
    return None


def _shown(value: Any) -> str:
    """A config value in a message: a number of 400 digits is said as such, not printed."""
    if _is_whole(value) and abs(value) > 10**15:
        return f"a number of {len(str(abs(value))):,} digits"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _family(model_type: str, doc: Mapping[str, Any]) -> tuple[Family, list[str]]:
    known = FAMILIES.get(model_type)
    if known is not None:
        return known, []
    act = str(doc.get("hidden_act") or doc.get("activation_function") or "").lower()
    gated = any(a in act for a in _GATED_ACTS)
    label = model_type or "no model_type"
    return (replace(_LLAMA, gated_mlp=gated),
            [f"model_type {label!r} is not one of {', '.join(sorted(FAMILIES))}: counted as a "
             f"dense decoder with a {'gated' if gated else 'plain'} MLP; biases and norms may "
             "differ by a fraction of a percent"])
