"""A tiny random-weight Llama model with a trained byte-level BPE tokenizer, built in seconds.

It is the adversarial case for guided decoding: a model with random weights emits near-uniform
logits, so only the constraint keeps its output well-formed. The folder it writes is a normal
Hugging Face model folder (config.json, model.safetensors, tokenizer.json, tokenizer_config.json)
that vLLM's CPU build and transformers both load.

Heavy imports (torch, transformers, tokenizers) happen inside `build_tiny_model`, so importing
this module costs nothing.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

__all__ = ["CHAT_TEMPLATE", "SPECIAL_TOKENS", "build_tiny_model"]

SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")

# ChatML, no BOS; a generation prompt opens an assistant turn.
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

_ENGLISH = """\
A judge reads the question and the two responses, then decides which response is better.
The explanation should be short, specific and honest; it must come before the judgment.
Is the answer correct? Yes or no. Does the response follow the instruction exactly?
Rate the clarity of the response as poor, fair, good or excellent, and explain why.
The quick brown fox jumps over the lazy dog. She sells sea shells by the sea shore.
Evaluate the helpfulness, harmlessness and truthfulness of the assistant's reply.
Output A is more accurate than Output B, because it answers the question that was asked.
Numbers such as 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 42, 100, 3.14 and -7 appear in scores.
Please respond in JSON with the fields explanation and judgment, and nothing else.
Here is the conversation:\n\nUser: How do I sort a list in Python?\nAssistant: Use sorted().
Tabs\tand  double  spaces, trailing spaces   and\r\nwindows line endings also occur in text.
"""

_WORDS = [
    "the",
    "a",
    "an",
    "and",
    "or",
    "but",
    "if",
    "then",
    "because",
    "while",
    "is",
    "are",
    "was",
    "were",
    "be",
    "been",
    "has",
    "have",
    "had",
    "do",
    "does",
    "did",
    "judge",
    "response",
    "question",
    "answer",
    "explanation",
    "judgment",
    "correctness",
    "clarity",
    "helpfulness",
    "safety",
    "score",
    "rating",
    "label",
    "reason",
    "yes",
    "no",
    "true",
    "false",
    "null",
    "poor",
    "fair",
    "good",
    "excellent",
    "better",
    "worse",
    "same",
    "model",
    "user",
    "assistant",
    "system",
    "prompt",
    "instruction",
    "output",
    "input",
    "context",
    "reference",
    "request",
    "reply",
    "accurate",
    "relevant",
    "complete",
    "concise",
    "verbose",
    "wrong",
    "right",
    "partially",
    "fully",
    "mostly",
    "never",
    "always",
    "python",
    "json",
    "xml",
    "list",
    "dict",
    "string",
    "number",
    "integer",
    "float",
    "value",
    "field",
    "key",
    "object",
    "array",
    "tag",
    "text",
]

_FIELDS = (
    "explanation",
    "judgment",
    "correctness",
    "correctness_explanation",
    "clarity",
    "clarity_explanation",
    "score",
    "confidence",
    "reason",
    "label",
)


def _corpus(rng: random.Random) -> list[str]:
    """A small English + JSON + XML corpus, deterministic given `rng`."""
    lines = _ENGLISH.splitlines(keepends=True)
    for _ in range(400):
        n = rng.randint(4, 14)
        words = [rng.choice(_WORDS) for _ in range(n)]
        sentence = " ".join(words).capitalize() + rng.choice([".", "?", "!", ",", ";", ":"])
        lines.append(sentence + rng.choice(["\n", " ", "\n\n", "  "]))
    for _ in range(200):
        fields = rng.sample(_FIELDS, rng.randint(1, 3))
        obj: dict[str, object] = {}
        for f in fields:
            kind = rng.random()
            if kind < 0.4:
                obj[f] = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 8)))
            elif kind < 0.6:
                obj[f] = rng.choice(["Yes", "No", "poor", "fair", "good", "excellent"])
            elif kind < 0.8:
                obj[f] = rng.randint(-10, 100)
            else:
                obj[f] = round(rng.uniform(0, 10), rng.randint(1, 3))
        indent = rng.choice([None, None, 2])
        lines.append(json.dumps(obj, indent=indent, ensure_ascii=False) + "\n")
        xml = "\n".join(f"<{f}>{v}</{f}>" for f, v in obj.items())
        lines.append(xml + "\n")
    lines.append('{"a": [1, 2.5, "x\\"y", true, false, null], "b": {"c": "\\n\\t\\\\ \\u00e9"}}\n')
    lines.append("<?xml version=\"1.0\"?>\n<root attr='1'>&lt;tag&gt; &amp; text</root>\n")
    lines.append("Unicode: caf\u00e9, na\u00efve, \u00fcber, \u65e5\u672c\u8a9e, emoji \U0001f600.\n")
    return lines


def _build_tokenizer(rng: random.Random, vocab_size: int):  # -> tokenizers.Tokenizer
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    # add_prefix_space=False: "Yes" and " Yes" stay distinct and text round-trips exactly.
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=1,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_corpus(rng), trainer=trainer)
    return tok


def _check_round_trip(fast_tokenizer) -> None:  # PreTrainedTokenizerFast
    samples = [
        " hello\n  world",
        '{"explanation": "It is \\"fine\\".\\n", "judgment": "Yes"}',
        "<explanation>a < b &amp; c</explanation>\n<judgment>No</judgment>",
        "\ttabs\r\nand   spaces  \n\n",
        "caf\u00e9 \u65e5\u672c \U0001f600 \x00\x1f~",
        "Unseen words: zyzzyva quokka 123456789",
    ]
    for text in samples:
        ids = fast_tokenizer.encode(text, add_special_tokens=False)
        back = fast_tokenizer.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False)
        if back != text:
            raise AssertionError(f"tokenizer does not round-trip {text!r}: got {back!r}")
    chat = fast_tokenizer.apply_chat_template(
        [{"role": "user", "content": "Hi"}], tokenize=False, add_generation_prompt=True
    )
    if chat != "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n":
        raise AssertionError(f"unexpected chat rendering {chat!r}")
    ids = fast_tokenizer.encode(chat, add_special_tokens=True)
    if ids[0] != fast_tokenizer.convert_tokens_to_ids("<|im_start|>"):
        raise AssertionError("the tokenizer adds a BOS token or splits <|im_start|>")


def build_tiny_model(
    path: Path,
    *,
    seed: int = 0,
    vocab_size: int = 2048,
    hidden_size: int = 128,
    num_layers: int = 2,
    num_heads: int = 2,
    intermediate_size: int = 256,
    max_position_embeddings: int = 4096,
) -> Path:
    """Write a random-weight tiny Llama causal LM and its tokenizer to `path`; return `path`.

    Deterministic given `seed` (same tokenizer, same weights). head_dim = hidden_size / num_heads
    must be at least 64: vLLM's CPU attention kernel crashes below that.
    """
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    head_dim = hidden_size // num_heads
    if head_dim < 64 or head_dim * num_heads != hidden_size:
        raise ValueError(f"hidden_size/num_heads must be an integer >= 64, got {hidden_size}/{num_heads}")

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)

    raw = _build_tokenizer(rng, vocab_size)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=raw,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        unk_token=None,
        bos_token=None,
        clean_up_tokenization_spaces=False,
        model_max_length=max_position_embeddings,
    )
    fast.chat_template = CHAT_TEMPLATE
    _check_round_trip(fast)
    fast.save_pretrained(str(path))
    # save_pretrained may drop None entries or add keys; pin down what loaders read.
    cfg_path = path / "tokenizer_config.json"
    tok_cfg = json.loads(cfg_path.read_text())
    tok_cfg.update(
        {
            "tokenizer_class": "PreTrainedTokenizerFast",
            "eos_token": "<|im_end|>",
            "pad_token": "<|endoftext|>",
            "bos_token": None,
            "add_bos_token": False,
            "add_eos_token": False,
            "chat_template": CHAT_TEMPLATE,
            "clean_up_tokenization_spaces": False,
            "model_max_length": max_position_embeddings,
        }
    )
    cfg_path.write_text(json.dumps(tok_cfg, indent=2, ensure_ascii=False) + "\n")
    (path / "chat_template.jinja").unlink(missing_ok=True)

    n_vocab = len(fast)
    eos_id = fast.convert_tokens_to_ids("<|im_end|>")
    pad_id = fast.convert_tokens_to_ids("<|endoftext|>")
    config = LlamaConfig(
        vocab_size=n_vocab,
        hidden_size=hidden_size,
        intermediate_size=intermediate_size,
        num_hidden_layers=num_layers,
        num_attention_heads=num_heads,
        num_key_value_heads=num_heads,
        head_dim=head_dim,
        max_position_embeddings=max_position_embeddings,
        rms_norm_eps=1e-6,
        rope_theta=10000.0,
        tie_word_embeddings=False,
        bos_token_id=None,
        eos_token_id=eos_id,
        pad_token_id=pad_id,
        dtype="bfloat16",
    )
    torch.manual_seed(seed)
    # Initialise in float32 (deterministic), store bfloat16: vLLM's CPU build runs bf16 and would
    # otherwise warn for every float32 weight it casts.
    model = LlamaForCausalLM(config).to(torch.bfloat16).eval()
    model.generation_config.bos_token_id = None
    model.generation_config.eos_token_id = eos_id
    model.generation_config.pad_token_id = pad_id
    model.save_pretrained(str(path), safe_serialization=True)
    return path


if __name__ == "__main__":  # manual check: python tests/tiny_model.py /tmp/tiny
    import sys
    import time

    t0 = time.perf_counter()
    out = build_tiny_model(Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/tiny_model"))
    print(f"built {out} in {time.perf_counter() - t0:.1f}s:", sorted(p.name for p in out.iterdir()))


def build_tiny_classifier(path: Path, *, num_labels: int = 1, seed: int = 0) -> Path:
    """The tiny model's tokenizer and backbone shape as a random-weight ``LlamaForSequenceClassification``
    with ``num_labels`` outputs (a reward model for one label, a classifier otherwise)."""
    import torch
    from transformers import LlamaConfig, LlamaForSequenceClassification

    build_tiny_model(path, seed=seed)
    config = LlamaConfig.from_pretrained(str(path))
    config.num_labels = num_labels
    config.architectures = ["LlamaForSequenceClassification"]
    torch.manual_seed(seed + 1)
    model = LlamaForSequenceClassification(config).to(torch.bfloat16).eval()
    for file in Path(path).glob("model*.safetensors"):
        file.unlink()
    model.save_pretrained(str(path), safe_serialization=True)
    return Path(path)
