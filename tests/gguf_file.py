"""Writing the tiny test model as a GGUF file, the way llama.cpp's converter lays one out.

The GGUF holds the tiny model's weights (float32 tensors under llama.cpp's names, attention q/k rows
permuted as llama.cpp permutes them for llama), its byte-level BPE vocabulary and merges
(``tokenizer.ggml.model`` gpt2), special tokens, ChatML template and hyper-parameters, so that converting
it back (:mod:`jurist.models.gguf_convert`) must give the same model and tokenizer. Heavy imports inside.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["write_gguf"]

_NORMAL, _CONTROL = 1, 3  # gguf.TokenType


def _permute(weights: Any, heads: int) -> Any:
    """llama.cpp's permutation of a llama attention q/k weight (transformers' GGUF reader undoes it)."""
    return (
        weights.reshape(heads, 2, weights.shape[0] // heads // 2, *weights.shape[1:])
        .swapaxes(1, 2)
        .reshape(weights.shape)
    )


def write_gguf(
    model_dir: Path,
    out: Path,
    *,
    architecture: str = "llama",
    pre_tokenizer: str = "default",
    chat_template: str | None = None,
    eos_token: str = "<|im_end|>",
) -> Path:
    """Write the HF folder ``model_dir`` (a Llama model with a byte-level BPE tokenizer) as a GGUF file at
    ``out``; ``architecture`` is written as ``general.architecture`` (another value than llama makes a
    file a converter must refuse)."""
    import gguf
    import numpy as np
    import torch
    from safetensors.torch import load_file

    config = json.loads((model_dir / "config.json").read_text())
    tokenizer = json.loads((model_dir / "tokenizer.json").read_text())
    tokenizer_config = json.loads((model_dir / "tokenizer_config.json").read_text())
    vocab: dict[str, int] = tokenizer["model"]["vocab"]
    for added in tokenizer.get("added_tokens", []):
        vocab[added["content"]] = added["id"]
    tokens = [token for token, _ in sorted(vocab.items(), key=lambda item: item[1])]
    special = {added["content"] for added in tokenizer.get("added_tokens", []) if added.get("special")}
    merges = [m if isinstance(m, str) else " ".join(m) for m in tokenizer["model"]["merges"]]
    heads, kv_heads = config["num_attention_heads"], config["num_key_value_heads"]

    writer = gguf.GGUFWriter(str(out), architecture)
    writer.add_name("jurist tiny test model")
    writer.add_context_length(config["max_position_embeddings"])
    writer.add_embedding_length(config["hidden_size"])
    writer.add_block_count(config["num_hidden_layers"])
    writer.add_feed_forward_length(config["intermediate_size"])
    writer.add_head_count(heads)
    writer.add_head_count_kv(kv_heads)
    writer.add_layer_norm_rms_eps(config["rms_norm_eps"])
    writer.add_rope_freq_base(config.get("rope_theta") or config["rope_parameters"]["rope_theta"])
    writer.add_vocab_size(len(tokens))
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre(pre_tokenizer)
    writer.add_token_list(tokens)
    writer.add_token_types([_CONTROL if t in special else _NORMAL for t in tokens])
    writer.add_token_merges(merges)
    writer.add_eos_token_id(vocab[eos_token])
    writer.add_pad_token_id(vocab["<|endoftext|>"])
    writer.add_bos_token_id(vocab["<|endoftext|>"])
    writer.add_add_bos_token(False)
    writer.add_chat_template(
        chat_template if chat_template is not None else tokenizer_config["chat_template"]
    )

    weights = {
        k: v.to(torch.float32).numpy() for k, v in load_file(str(model_dir / "model.safetensors")).items()
    }
    names = {
        "model.embed_tokens.weight": "token_embd.weight",
        "model.norm.weight": "output_norm.weight",
        "lm_head.weight": "output.weight",
    }
    per_layer = {
        "input_layernorm": "attn_norm",
        "self_attn.q_proj": "attn_q",
        "self_attn.k_proj": "attn_k",
        "self_attn.v_proj": "attn_v",
        "self_attn.o_proj": "attn_output",
        "post_attention_layernorm": "ffn_norm",
        "mlp.gate_proj": "ffn_gate",
        "mlp.up_proj": "ffn_up",
        "mlp.down_proj": "ffn_down",
    }
    for layer in range(config["num_hidden_layers"]):
        for hf, ours in per_layer.items():
            names[f"model.layers.{layer}.{hf}.weight"] = f"blk.{layer}.{ours}.weight"
    for hf, name in names.items():
        tensor = weights[hf]
        if name.endswith("attn_q.weight"):
            tensor = _permute(tensor, heads)
        elif name.endswith("attn_k.weight"):
            tensor = _permute(tensor, kv_heads)
        writer.add_tensor(name, np.ascontiguousarray(tensor, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return out
