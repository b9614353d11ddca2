"""The GPU check on a tiny shape on CPU (so that CI keeps it working), and the NATIVE engine's label scores,
which it measures, against a brute-force forward pass over each whole label."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from installed import have
from jurist import InferenceConfig
from jurist.records import LabelRequest, Message

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.engine
@pytest.mark.slow  # the script, not jurist: NATIVE's label scores it measures are checked below, by default
@pytest.mark.skipif(not have("torch", "transformers", "tokenizers"), reason="torch/transformers missing")
def test_gpu_check_runs_on_a_tiny_shape_on_cpu(tmp_path: Path) -> None:
    out = tmp_path / "gpu_check.json"
    command = [
        sys.executable, str(ROOT / "benchmarks" / "gpu_check.py"), "--tiny", "--device", "cpu",
        "--batch-sizes", "1,4", "--out", str(out),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["shape"] == "tiny" and result["parameters"] > 0
    for mode in ("generation", "logprobs"):
        measured = result["native"][mode]
        assert [m["batch"] for m in measured] == [1, 4]
        assert all(m["parse_rate"] == 1.0 and m["rows"] == 2 * m["batch"] for m in measured)
    if have("vllm"):
        assert [m["batch"] for m in result["vllm"]["generation"]] == [1, 4]
        assert all(m["parse_rate"] == 1.0 for m in result["vllm"]["logprobs"])
    else:
        assert "skipped" in result["vllm"]


def test_native_label_scores_equal_a_forward_pass_per_label(tiny_model_dir: Path) -> None:
    import torch

    from jurist.backends.hf.backend import TransformersBackend

    backend = TransformersBackend(
        InferenceConfig.model_validate(
            {
                "engine": "NATIVE",
                "model": {"model_name": str(tiny_model_dir)},
                "engine_params": {"batch_size": 2},
            }
        )
    )
    try:
        requests = [
            LabelRequest(
                (Message("user", "Is the sky green? " * repeat),),
                ("Yes", "No", "Unsure", "Unsurely"),
                answer_prefix='{"judgment": "',
                answer_suffix='"',
                with_suffix=True,
            )
            for repeat in (1, 3, 7)
        ]
        scored = backend.score_labels(requests)
        tokenizer, model = backend._tokenizer, backend._model
        for request, result in zip(requests, scored, strict=True):
            assert result.finish_reason == "stop" and result.logprobs is not None
            base = backend._chat.text(request.messages) + request.answer_prefix
            for label, value in result.logprobs.items():
                full = tokenizer.encode(base + label + request.answer_suffix, add_special_tokens=False)
                shared = tokenizer.encode(base, add_special_tokens=False)
                start = (
                    next(i for i, (a, b) in enumerate(zip(full, shared, strict=False)) if a != b)
                    if any(a != b for a, b in zip(full, shared, strict=False))
                    else len(shared)
                )
                with torch.inference_mode():
                    logits = model(input_ids=torch.tensor([full])).logits[0].float().log_softmax(-1)
                expected = sum(float(logits[i - 1, full[i]]) for i in range(start, len(full)))
                assert math.isclose(value, expected, abs_tol=2e-3), (label, value, expected)
        too_long = backend.score_labels([LabelRequest((Message("user", "word " * 5000),), ("Yes", "No"))])[0]
        assert too_long.finish_reason == "too_long" and "context" in (too_long.error or "")
    finally:
        backend.close()
