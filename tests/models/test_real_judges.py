"""The real judge models (marked ``real_judges``): Qwen2.5-Coder-0.5B- and 1.5B-Instruct from their GGUF
files, when they are fetched (``jurist models fetch qwen2.5-coder-0.5b-instruct``, and ``-1.5b-``; the
README's set-up does not fetch them, so CI skips these). Their tokenizers round-trip text and are the
files' own; LOGPROBS scores on LLMBar do not tie with the lm_head in float32; both judge from the file's
path."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
from typing import Any

import pytest

from installed import have
from jurist.models.catalog import CATALOG
from jurist.models.fetch import fetched_path, is_fetched
from jurist.models.tokenizer_check import ROUND_TRIP_TEXTS

pytestmark = [pytest.mark.real_judges, pytest.mark.engine]
ROOT = pathlib.Path(__file__).resolve().parents[2]
NATURAL = ROOT / "examples" / "llmbar" / "Natural.json"
SMALL, LARGE = "qwen2.5-coder-0.5b-instruct", "qwen2.5-coder-1.5b-instruct"


def fetched(name: str) -> pathlib.Path:
    """The fetched GGUF file of a catalogued model, or a skip that says how to fetch it."""
    model = CATALOG[name]
    if not is_fetched(model):
        pytest.skip(f"{name} is not fetched: jurist models fetch {name} ({model.download_mb:,.0f} MB)")
    return fetched_path(model)


def jurist(*args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "VLLM_CPU_NUM_OF_RESERVED_CPU": "0"}
    command = [sys.executable, "-m", "jurist", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False, env=env)


@pytest.mark.parametrize("name", [SMALL, pytest.param(LARGE, marks=pytest.mark.slow)])  # the same code path
def test_the_qwen_tokenizers_are_the_files_own(name: str) -> None:
    if not have("gguf", "transformers"):
        pytest.skip("gguf/transformers not installed")
    from transformers import AutoTokenizer

    from jurist.models.gguf_meta import read_gguf
    from jurist.models.gguf_model import gguf_model_path

    source = fetched(name)
    tokenizer: Any = AutoTokenizer.from_pretrained(str(gguf_model_path(source)))
    info = read_gguf(source)
    for text in (*ROUND_TRIP_TEXTS, "<|im_start|>user\nhi<|im_end|>\n"):
        assert tokenizer.decode(tokenizer.encode(text, add_special_tokens=False)) == text
    assert tokenizer.eos_token == info.eos_token == "<|im_end|>"
    assert tokenizer.pad_token == info.pad_token == "<|endoftext|>"
    assert tokenizer.encode("hi") == tokenizer.encode("hi", add_special_tokens=False)  # no BOS
    assert tokenizer.chat_template == info.chat_template
    rendered = tokenizer.apply_chat_template([{"role": "user", "content": "u"}], tokenize=False)
    assert rendered.startswith("<|im_start|>system\nYou are Qwen")  # Qwen's template adds its system line


def judged_from_file(source: pathlib.Path, out: pathlib.Path, rows: int) -> Any:
    """``pairwise/preference`` in LOGPROBS on the first ``rows`` LLMBar Natural rows, the model given as the
    GGUF file's path; the result table."""
    done = jurist("judge", "dataset", "-c", "pairwise/preference", "-i", str(NATURAL), "-o", str(out),
                  "--model", str(source), "--judge_params.scoring", "LOGPROBS", "--limit", str(rows),
                  "--quiet", "--inference_config.engine_params.gpu_memory_utilization", "0.1")  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    import pyarrow.parquet as pq

    return pq.read_table(out)


@pytest.mark.skipif(not have("vllm"), reason="vLLM not installed")
def test_the_small_judge_from_its_file_scores_without_ties(tmp_path: pathlib.Path) -> None:
    """The first 30 rows of LLMBar Natural in LOGPROBS from the .gguf path: at most one row at exactly
    p_a = 0.5 (12 of 30 with the head in bfloat16), and the metadata says the head ran in float32."""
    out = tmp_path / "small.parquet"
    table = judged_from_file(fetched(SMALL), out, 30)
    p_a = table["preference.p_a"].to_pylist()
    assert table["preference.status"].to_pylist() == ["ok"] * 30
    assert sum(p == 0.5 for p in p_a) <= 1 and len(set(p_a)) >= 29
    metadata = json.loads(table.schema.metadata[b"jurist"])
    info = jurist("info", str(out))
    assert "head_dtype" in json.dumps(metadata) and '"head_dtype": "float32"' in json.dumps(metadata)
    assert info.returncode == 0


@pytest.mark.slow  # the small judge runs from its file in the default tier (the same path, a smaller model)
@pytest.mark.skipif(not have("vllm"), reason="vLLM not installed")
def test_the_large_judge_runs_from_its_file(tmp_path: pathlib.Path) -> None:
    source = fetched(LARGE)
    table = judged_from_file(source, tmp_path / "large.parquet", 4)
    assert table["preference.status"].to_pylist() == ["ok"] * 4
    assert table["preference.model"].to_pylist() == [str(source)] * 4
