"""Chat templates of thinking models: one whose generation prompt opens the think block itself (DeepSeek-R1's
distills) gets no second `<think>`, and the reasoning round's prompt plus its reasoning is the answer
round's prompt (so the engine's prefix cache holds); a Qwen3-style `enable_thinking` switch reaches the
template from `model.chat_template_kwargs` (local engines) or the request body (`vllm serve`); a reasoning
phase with thinking switched off is refused. Real transformers tokenizers; the tiny random model on engine
NATIVE for the whole path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("transformers")

from jurist import Engine, InferenceConfig
from jurist.backends.local.chat import ChatRenderer
from jurist.config.loading import load_judge_config
from jurist.config.models import JudgeConfig
from jurist.errors import ConfigError
from jurist.records import Message

OPENS = (  # the assistant turn opens the think block, as DeepSeek-R1's distills' templates do
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n<think>\n{% endif %}"
)
SWITCH = (  # Qwen3's switch: thinking off writes an empty, closed think block
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n"
    "{% if enable_thinking is defined and enable_thinking is false %}<think>\n\n</think>\n\n{% endif %}"
    "{% endif %}"
)
MESSAGES = (Message("system", "You judge."), Message("user", "Is the sky blue?"))


def tokenizer(template: str) -> Any:
    from tokenizers import Tokenizer, models
    from transformers import PreTrainedTokenizerFast

    fast = PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    )
    fast.chat_template = template
    return fast


def test_a_template_that_opens_the_think_block_gets_no_second_marker() -> None:
    chat = ChatRenderer(tokenizer(OPENS))
    opened = chat.text(MESSAGES)
    assert opened.endswith("<|im_start|>assistant\n<think>\n")
    first = chat.prompt(MESSAGES, "<think>")
    assert first == opened and first.count("<think>") == 1
    thought = "The sky scatters blue light."
    second = chat.prompt(MESSAGES, f"<think>{thought}</think>\n")
    assert second == first + f"{thought}</think>\n"  # round one's prompt, then what the model wrote
    assert chat.prompt(MESSAGES, '{"judgment": "') == opened + '{"judgment": "'


def test_a_plain_template_gets_the_marker_written_after_its_generation_prompt() -> None:
    chat = ChatRenderer(tokenizer(SWITCH))
    assert chat.prompt(MESSAGES, "<think>") == chat.text(MESSAGES) + "<think>"
    assert chat.text(MESSAGES).endswith("<|im_start|>assistant\n")


def test_enable_thinking_reaches_the_template() -> None:
    off = ChatRenderer(tokenizer(SWITCH), {"enable_thinking": False}).text(MESSAGES)
    on = ChatRenderer(tokenizer(SWITCH), {"enable_thinking": True}).text(MESSAGES)
    assert off.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")
    assert on.endswith("<|im_start|>assistant\n") and on == ChatRenderer(tokenizer(SWITCH)).text(MESSAGES)


def judge(**model: Any) -> dict[str, Any]:
    return {
        "name": "j",
        "judge_params": {"prompt_template": "Is it true? {text}", "reasoning": {"budget_tokens": 8}},
        "inference_config": {"engine": "NATIVE", "model": model},
    }


def test_a_reasoning_phase_with_thinking_switched_off_is_refused() -> None:
    with pytest.raises(ConfigError, match="enable_thinking: false: that template closes the think block"):
        load_judge_config(judge(chat_template_kwargs={"enable_thinking": False}))
    config = load_judge_config(judge(chat_template_kwargs={"enable_thinking": True}))
    assert isinstance(config, JudgeConfig)


def test_vllm_serve_gets_the_template_kwargs_in_the_body() -> None:
    from jurist.backends.remote.openai import OpenAIBackend
    from jurist.errors import BackendError
    from jurist.records import GenerationRequest

    remote = {"api_url": "http://localhost:1/v1"}
    model = {"model_name": "m", "chat_template_kwargs": {"enable_thinking": False}}
    backend = OpenAIBackend(InferenceConfig(engine="REMOTE_VLLM", model=model, remote_params=remote))
    body = backend.body(GenerationRequest(MESSAGES, 8))
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    plain = OpenAIBackend(
        InferenceConfig(engine="REMOTE_VLLM", model={"model_name": "m"}, remote_params=remote)
    )
    assert "chat_template_kwargs" not in plain.body(GenerationRequest(MESSAGES, 8))
    with pytest.raises(BackendError, match=r"engine OPENAI takes no model\.chat_template_kwargs"):
        OpenAIBackend(InferenceConfig(engine="OPENAI", model=model, remote_params=remote))


@pytest.mark.engine
def test_a_thinking_judge_on_a_template_that_opens_the_block(tiny_model_dir: Path) -> None:
    """Engine NATIVE on the tiny model with an R1-style template: both rounds' prompts hold one <think>,
    and every row gets its verdict after its reasoning."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from jurist.backends.hf.backend import TransformersBackend

    tok = AutoTokenizer.from_pretrained(tiny_model_dir)
    tok.chat_template = OPENS
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir, torch_dtype=torch.float32)
    backend = TransformersBackend.from_model(model, tok, model_id="tiny-r1")
    seen: list[str] = []
    encode = backend._encode

    def recording(request: Any) -> tuple[int, ...]:
        ids = encode(request)
        seen.append(tok.decode(list(ids)))
        return ids

    backend._encode = recording  # type: ignore[method-assign]
    config = judge(model_name="tiny-r1")
    del config["inference_config"]
    table = Engine(config, backend).run([{"text": f"claim {i}"} for i in range(4)])
    assert table.column("j.status").to_pylist() == ["ok"] * 4
    assert all(n <= 8 for n in table.column("j.reasoning_tokens").to_pylist())
    assert len(seen) == 8 and all(text.count("<think>") == 1 for text in seen)
    firsts = [t for t in seen if t.endswith("<think>\n")]
    assert len(firsts) == 4
    for thought in table.column("j.reasoning").to_pylist():  # the answer round continues round one's prompt
        assert any(f"{first}{thought}</think>\n" in seen for first in firsts)
