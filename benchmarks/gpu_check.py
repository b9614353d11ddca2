"""GPU check for a box without network: jurist's engines on a random-weight model of Llama-3-8B's shape.

    python benchmarks/gpu_check.py [--batch-sizes 1,2,4,...,256] [--rows-per-batch 2] [--out FILE]
    python benchmarks/gpu_check.py --tiny --device cpu   # the same path, a tiny shape (CI keeps it working)

Nothing is downloaded: a byte-level BPE tokenizer with a ChatML template is trained here on generated text,
and the model (Llama-3-8B's shape: hidden 4096, 32 layers, 32 heads, 8 KV heads, MLP 14336, vocabulary
128256; bfloat16) is built with random weights directly on the device. For each batch size b, b x
``--rows-per-batch`` synthetic rows are judged in chunks of b rows by a BOOL judge with a bounded explanation:

* ``native``: jurist's NATIVE engine (transformers ``generate`` + the outlines-core regex mask), in
  ``generation`` (the answer decoded under the judge's constraint) and ``logprobs`` (label probabilities
  after one prefill, :meth:`TransformersBackend.score_labels`);
* ``vllm``: the same through the VLLM engine, one ``generate`` call per chunk, when a vLLM build for this
  device is installed (the model is saved to a temporary folder for it); otherwise the reason is recorded.

Each measurement records rows/s, output tokens/s, parse rate, statuses and peak GPU memory (torch's peak
allocation in this process). The JSON (default ``benchmarks/results/gpu_check.json``) fills the README's
GPU table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

LLAMA3_8B = {
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "vocab_size": 128256,
    "max_position_embeddings": 8192,
    "rope_theta": 500000.0,
}
TINY = {
    "hidden_size": 128,
    "intermediate_size": 256,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "num_key_value_heads": 2,
    "vocab_size": 0,  # the tokenizer's size
    "max_position_embeddings": 2048,
    "rope_theta": 10000.0,
}
CHAT_TEMPLATE = (
    "{% for m in messages %}"
    "{{ '<|im_start|>' + m['role'] + '\n' + m['content'] + '<|im_end|>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
JUDGE = {
    "name": "check",
    "judge_params": {
        "system_instruction": "You check answers to questions. Be strict and brief.",
        "prompt_template": "Question: {question}\nAnswer: {answer}\nIs the answer correct?",
        "judgment_type": "BOOL",
        "include_explanation": True,
        "max_explanation_chars": 60,
    },
}
WORDS = (
    "the",
    "answer",
    "question",
    "is",
    "correct",
    "wrong",
    "because",
    "number",
    "value",
    "result",
    "explain",
    "reason",
    "short",
    "clear",
    "judge",
    "model",
    "output",
    "response",
    "true",
    "false",
    "yes",
    "no",
    "sum",
    "product",
    "city",
    "river",
    "capital",
    "year",
    "first",
    "last",
    "large",
    "small",
)


def corpus(rng: random.Random, lines: int = 4000) -> list[str]:
    out = [
        json.dumps({"explanation": " ".join(rng.choices(WORDS, k=6)), "judgment": rng.choice(["Yes", "No"])})
    ]
    for _ in range(lines):
        words = rng.choices(WORDS, k=rng.randint(4, 14))
        out.append(
            " ".join(words)
            + rng.choice([".", "?", "!", "\n", ' "', "{", "}", ":", ","])
            + str(rng.randint(0, 999))
        )
    return out


def build_tokenizer(vocab: int = 4096) -> Any:
    """A byte-level BPE tokenizer (spaces and newlines round-trip) with a ChatML chat template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    raw = Tokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    raw.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab,
        special_tokens=SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    raw.train_from_iterator(corpus(random.Random(0)), trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=raw, eos_token="<|im_end|>", pad_token="<|endoftext|>", bos_token=None
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    text = ' {"explanation": "a\n  b", "judgment": "Yes"}'
    if tokenizer.decode(tokenizer.encode(text, add_special_tokens=False)) != text:
        raise RuntimeError("the generated tokenizer does not round-trip text")
    return tokenizer


def build_model(shape: dict[str, Any], tokenizer: Any, device: str) -> Any:
    """Random weights of ``shape``, made on ``device`` (bfloat16 on GPUs, float32 on CPU)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    dims = dict(shape)
    dims["vocab_size"] = max(dims["vocab_size"], len(tokenizer))
    eos, pad = tokenizer.convert_tokens_to_ids("<|im_end|>"), tokenizer.convert_tokens_to_ids("<|endoftext|>")
    config = LlamaConfig(
        **dims, eos_token_id=eos, pad_token_id=pad, bos_token_id=None, tie_word_embeddings=False
    )
    dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
    previous = torch.get_default_dtype()
    torch.manual_seed(0)
    torch.set_default_dtype(dtype)
    try:
        with torch.device(device):
            model = LlamaForCausalLM(config)
    finally:
        torch.set_default_dtype(previous)
    model.generation_config.eos_token_id = eos
    model.generation_config.pad_token_id = pad
    return model.eval()


def rows(n: int) -> list[dict[str, str]]:
    rng = random.Random(n)
    return [
        {
            "question": f"What is {a} plus {b}? " + " ".join(rng.choices(WORDS, k=rng.randint(5, 30))),
            "answer": f"{a + b + rng.choice([0, 0, 1])}, "
            + " ".join(rng.choices(WORDS, k=rng.randint(3, 20))),
        }
        for a, b in ((rng.randint(1, 99), rng.randint(1, 99)) for _ in range(n))
    ]


def measure(backend: Any, mode: str, batch: int, per_batch: int, device: str) -> dict[str, Any]:
    """Judge ``batch * per_batch`` rows in chunks of ``batch`` rows; one warm-up chunk first."""
    import torch

    from jurist import Engine, load_judge_config

    config = load_judge_config(
        JUDGE, {"judge_params.scoring": "LOGPROBS" if mode == "logprobs" else "GENERATE"}
    )
    engine = Engine(config, backend, chunk_size=batch)
    data = rows(batch * per_batch)
    engine.run(data[:batch])  # warm-up: allocation, kernels, the constraint's index
    cuda = device.startswith("cuda")
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    started = time.perf_counter()
    table = engine.run(data)
    if cuda:
        torch.cuda.synchronize()
    seconds = time.perf_counter() - started
    statuses = table["check.status"].to_pylist()
    tokens = sum(t or 0 for t in table["check.completion_tokens"].to_pylist())
    return {
        "batch": batch,
        "rows": len(data),
        "seconds": round(seconds, 3),
        "rows_per_s": round(len(data) / seconds, 3),
        "output_tokens_per_s": round(tokens / seconds, 1),
        "parse_rate": round(statuses.count("ok") / len(statuses), 4),
        "statuses": {s: statuses.count(s) for s in sorted(set(statuses))},
        "peak_gpu_mb": round(torch.cuda.max_memory_allocated() / 2**20, 1) if cuda else None,
    }


class Chunked:
    """A backend without its stream: one ``generate`` call per chunk, so a chunk of b rows is a batch of b."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.model_id = backend.model_id
        self.constraint_kinds = backend.constraint_kinds

    def generate(self, requests: Any) -> Any:
        return self.backend.generate(requests)

    def score_labels(self, requests: Any) -> Any:
        return self.backend.score_labels(requests)

    def close(self) -> None:
        self.backend.close()


def run_vllm(model: Any, tokenizer: Any, sizes: list[int], per_batch: int, device: str) -> dict[str, Any]:
    """The same measurements through the VLLM engine, or why they were skipped."""
    try:
        import vllm  # noqa: F401
    except ImportError as exc:
        return {"skipped": f"vLLM is not installed ({exc})"}
    from jurist import InferenceConfig
    from jurist.backends.local.placement import vllm_on_cpu
    from jurist.backends.vllm.backend import VLLMBackend

    if device.startswith("cuda") and vllm_on_cpu():
        return {"skipped": "the installed vLLM is the CPU build"}
    folder = Path(tempfile.mkdtemp(prefix="jurist-gpu-check-"))
    try:
        model.save_pretrained(folder, safe_serialization=True)
        tokenizer.save_pretrained(folder)
        params: dict[str, Any] = {"max_num_seqs": max(sizes)}
        if not device.startswith("cuda"):
            params["gpu_memory_utilization"] = 0.1
        config = InferenceConfig.model_validate(
            {"model": {"model_name": str(folder), "model_max_length": 2048}, "engine_params": params}
        )
        started = time.perf_counter()
        backend = VLLMBackend(config)
        out: dict[str, Any] = {"load_seconds": round(time.perf_counter() - started, 1)}
        try:
            for mode in ("generation", "logprobs"):
                out[mode] = [measure(Chunked(backend), mode, b, per_batch, device) for b in sizes]
                print("vllm", mode, out[mode], flush=True)
        finally:
            backend.close()
        return out
    except Exception as exc:  # recorded, so that the native results still come back
        return {"failed": f"{type(exc).__name__}: {exc}"}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def machine(device: str) -> dict[str, Any]:
    import torch

    info: dict[str, Any] = {
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "torch": torch.__version__,
    }
    if device.startswith("cuda"):
        props = torch.cuda.get_device_properties(0)
        info.update(
            gpu=props.name, gpu_memory_gb=round(props.total_memory / 2**30, 1), cuda=torch.version.cuda
        )
    return info


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tiny", action="store_true", help="a tiny shape (CI, CPU) instead of Llama-3-8B's")
    parser.add_argument("--device", default=None, help="cuda (default when available) or cpu")
    parser.add_argument("--batch-sizes", default=None, help="default 1,2,4,...,256 (tiny: 1,4,16)")
    parser.add_argument("--rows-per-batch", type=int, default=2, help="chunks timed per batch size")
    parser.add_argument("--skip-vllm", action="store_true")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "gpu_check.json")
    args = parser.parse_args(argv)

    import torch

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from jurist.backends.hf.backend import TransformersBackend

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    default = "1,4,16" if args.tiny else "1,2,4,8,16,32,64,128,256"
    sizes = [int(s) for s in (args.batch_sizes or default).split(",")]
    shape = TINY if args.tiny else LLAMA3_8B
    started = time.perf_counter()
    tokenizer = build_tokenizer()
    model = build_model(shape, tokenizer, device)
    built = time.perf_counter() - started
    params = sum(p.numel() for p in model.parameters())
    print(f"built a {params / 1e9:.2f}B-parameter random model on {device} in {built:.1f} s", flush=True)
    results: dict[str, Any] = {
        "benchmark": "gpu_check",
        "date": time.strftime("%Y-%m-%d"),
        "machine": machine(device),
        "shape": "tiny" if args.tiny else "Llama-3-8B",
        "parameters": params,
        "build_seconds": round(built, 1),
        "rows_per_batch": args.rows_per_batch,
        "native": {},
    }
    for mode in ("generation", "logprobs"):
        measured = []
        for size in sizes:
            backend = TransformersBackend.from_model(
                model, tokenizer, model_id=f"random {results['shape']}", batch_size=size
            )
            measured.append(measure(backend, mode, size, args.rows_per_batch, device))
            print("native", mode, measured[-1], flush=True)
        results["native"][mode] = measured
    results["vllm"] = (
        {"skipped": "--skip-vllm"}
        if args.skip_vllm
        else run_vllm(model, tokenizer, sizes, args.rows_per_batch, device)
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.out}", flush=True)
    return results


if __name__ == "__main__":
    main()
