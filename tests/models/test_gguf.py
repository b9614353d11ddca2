"""Any GGUF file as a model: the tiny model written as a GGUF (llama.cpp's layout) converts back to the same
weights and tokenizer, is cached by its hash, fails clearly, and judges on the real vLLM engine from the
file's path."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys
from typing import Any

import pytest

from gguf_file import write_gguf
from installed import have
from jurist.errors import BackendError
from jurist.models import gguf_convert
from jurist.models.gguf_convert import MANIFEST_NAME, TMP_PREFIX
from jurist.models.gguf_model import conversions, gguf_model_path
from jurist.models.resolve import resolve_model
from jurist.models.tokenizer_check import ROUND_TRIP_TEXTS

pytestmark = pytest.mark.skipif(not have("gguf", "torch", "transformers"), reason="gguf/torch/transformers")

TEXTS = (*ROUND_TRIP_TEXTS, "<|im_start|>user\nhi<|im_end|>\n", "Ελληνικά 🙂 \r\n\t x")


@pytest.fixture(scope="module")
def tiny_gguf(tiny_model_dir: pathlib.Path, tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    return write_gguf(tiny_model_dir, tmp_path_factory.mktemp("gguf") / "tiny-model.F32.gguf")


@pytest.fixture(scope="module")
def converted(tiny_gguf: pathlib.Path, tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    return gguf_model_path(tiny_gguf, cache_dir=tmp_path_factory.mktemp("cache"), progress=lambda _m: None)


def test_the_conversion_is_the_same_model(tiny_model_dir: pathlib.Path, converted: pathlib.Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM

    original = AutoModelForCausalLM.from_pretrained(str(tiny_model_dir), dtype=torch.float32)
    again = AutoModelForCausalLM.from_pretrained(str(converted), dtype=torch.float32)
    ids = torch.tensor([[5, 17, 99, 300, 1000, 7, 42, 3]])
    with torch.inference_mode():
        assert torch.equal(original(ids).logits, again(ids).logits)  # bf16 weights, bit for bit
    config = json.loads((converted / "config.json").read_text())
    assert config["dtype"] == "bfloat16" and config["model_type"] == "llama"
    manifest = json.loads((converted / MANIFEST_NAME).read_text())
    assert manifest["architecture"] == "llama" and manifest["tokenizer"] == "gpt2/default"
    assert manifest["model_id"] == "tiny-model.F32.gguf" and len(manifest["source_sha256"]) == 64


def test_the_tokenizer_is_the_files_own(tiny_model_dir: pathlib.Path, converted: pathlib.Path) -> None:
    from transformers import AutoTokenizer

    original = AutoTokenizer.from_pretrained(str(tiny_model_dir))
    again = AutoTokenizer.from_pretrained(str(converted))
    for text in TEXTS:
        ids = again.encode(text, add_special_tokens=False)
        assert ids == original.encode(text, add_special_tokens=False), text
        assert again.decode(ids) == text
    assert again.encode("hi") == again.encode("hi", add_special_tokens=False)  # the file adds no BOS
    assert again.eos_token == "<|im_end|>" and again.pad_token == "<|endoftext|>"
    assert again.chat_template == original.chat_template
    messages = [{"role": "user", "content": "Hi"}]
    assert again.apply_chat_template(messages, tokenize=False, add_generation_prompt=True) == (
        "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    )
    generation = json.loads((converted / "generation_config.json").read_text())
    assert generation["eos_token_id"] == again.eos_token_id


def test_the_conversion_is_kept_by_the_files_hash(tiny_gguf: pathlib.Path, tmp_path: pathlib.Path) -> None:
    cache = tmp_path / "cache"
    said: list[str] = []
    first = gguf_model_path(tiny_gguf, cache_dir=cache, progress=said.append)
    assert any("converting tiny-model.F32.gguf" in line for line in said)
    stamp = (first / MANIFEST_NAME).stat().st_mtime_ns
    said.clear()
    assert gguf_model_path(tiny_gguf, cache_dir=cache, progress=said.append) == first
    assert said == [] and (first / MANIFEST_NAME).stat().st_mtime_ns == stamp
    copy = shutil.copy(tiny_gguf, tmp_path / "renamed.gguf")  # the same bytes under another name
    assert gguf_model_path(copy, cache_dir=cache, progress=said.append) == first and said == []
    assert [c.folder for c in conversions(cache)] == [first]


def test_a_killed_conversion_leaves_nothing_half_written(
    tiny_gguf: pathlib.Path, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    leftover = cache / f"{TMP_PREFIX}killed"  # what a SIGKILLed conversion leaves
    leftover.mkdir()
    (leftover / "model.safetensors").write_bytes(b"half")

    def fail(*_args: Any) -> None:
        raise RuntimeError("disk gone")

    monkeypatch.setattr(gguf_convert, "_save_tokenizer", fail)
    with pytest.raises(BackendError, match="disk gone"):
        gguf_model_path(tiny_gguf, cache_dir=cache, progress=lambda _m: None)
    assert not leftover.exists()  # cleaned by the next converter
    assert [p.name for p in cache.iterdir() if not p.name.startswith(".")] == []
    monkeypatch.undo()
    folder = gguf_model_path(tiny_gguf, cache_dir=cache, progress=lambda _m: None)
    assert (folder / MANIFEST_NAME).is_file()
    assert not list(cache.glob(f"{TMP_PREFIX}*"))


def test_an_unsupported_architecture_is_named(tiny_model_dir: pathlib.Path, tmp_path: pathlib.Path) -> None:
    odd = write_gguf(tiny_model_dir, tmp_path / "odd.gguf", architecture="rwkv9")
    with pytest.raises(
        BackendError, match=r"GGUF architecture 'rwkv9' is not one transformers converts"
    ) as e:
        gguf_model_path(odd, cache_dir=tmp_path / "cache", progress=lambda _m: None)
    assert "qwen2" in str(e.value) and "llama" in str(e.value)  # the supported ones are listed
    assert [p.name for p in (tmp_path / "cache").iterdir() if not p.name.startswith(".")] == []


def test_a_file_without_chat_template_is_refused(
    tiny_model_dir: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    bare = write_gguf(tiny_model_dir, tmp_path / "bare.gguf", chat_template="")
    with pytest.raises(BackendError, match="holds no chat template"):
        gguf_model_path(bare, cache_dir=tmp_path / "cache", progress=lambda _m: None)


def test_what_is_not_a_gguf_file_is_named(tmp_path: pathlib.Path) -> None:
    with pytest.raises(BackendError, match="no such GGUF file"):
        gguf_model_path(tmp_path / "missing.gguf", cache_dir=tmp_path / "cache")
    text = tmp_path / "notes.gguf"
    text.write_text("hello")
    with pytest.raises(BackendError, match=r"notes.gguf: not a GGUF file"):
        gguf_model_path(text, cache_dir=tmp_path / "cache")
    with pytest.raises(BackendError, match="no such GGUF file"):
        resolve_model(str(tmp_path / "missing.gguf"))


def test_names_resolve_to_what_an_engine_loads(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JURIST_CACHE_DIR", str(tmp_path))
    assert resolve_model("org/some-model").path == "org/some-model"
    with pytest.raises(BackendError, match=r"jurist models fetch qwen2.5-coder-0.5b-instruct"):
        resolve_model("qwen2.5-coder-0.5b-instruct")


@pytest.mark.skipif(not have("vllm"), reason="vLLM not installed")
def test_judging_from_the_gguf_path_on_vllm(tiny_gguf: pathlib.Path, tmp_path: pathlib.Path) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text(
        "".join(json.dumps({"question": f"Is {i} odd?", "answer": "yes"}) + "\n" for i in range(6))
    )
    judge = tmp_path / "judge.yaml"
    judge.write_text(
        "judge_params:\n  prompt_template: 'Q: {question} A: {answer}'\n  judgment_type: BOOL\n"
        "  scoring: LOGPROBS\ninference_config:\n  engine_params: {gpu_memory_utilization: 0.05}\n"
    )
    out = tmp_path / "out.parquet"
    command = [sys.executable, "-m", "jurist", "judge", "dataset", "-c", str(judge), "-i", str(rows),
               "-o", str(out), "--model", str(tiny_gguf), "--quiet"]  # fmt: skip
    env = {**os.environ, "JURIST_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "converting tiny-model.F32.gguf" in done.stderr  # progress on stderr
    import pyarrow.parquet as pq

    table = pq.read_table(out)
    assert table["judge.status"].to_pylist() == ["ok"] * 6
    assert table["judge.model"].to_pylist() == [str(tiny_gguf)] * 6
    metadata = json.loads(table.schema.metadata[b"jurist"])
    assert '"head_dtype": "float32"' in json.dumps(metadata)  # a LOGPROBS judge: the head in float32
