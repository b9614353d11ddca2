"""Hosted inference providers that speak OpenAI's chat-completions protocol: the one table of their default
API URLs and API-key variables. Oumi's engine names (:mod:`jurist.config.inference`) and pipecat-style
judge services (:mod:`jurist.conversation.services`) both read it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True)
class Provider:
    """Where a provider answers (``url``) and the environment variable holding its key (None: no key)."""

    url: str
    api_key_env: str | None


PROVIDERS: Mapping[str, Provider] = MappingProxyType(
    {
        "openai": Provider("https://api.openai.com/v1", "OPENAI_API_KEY"),
        "anthropic": Provider("https://api.anthropic.com/v1", "ANTHROPIC_API_KEY"),
        "deepseek": Provider("https://api.deepseek.com/v1", "DEEPSEEK_API_KEY"),
        "fireworks": Provider("https://api.fireworks.ai/inference/v1", "FIREWORKS_API_KEY"),
        "parasail": Provider("https://api.parasail.io/v1", "PARASAIL_API_KEY"),
        "together": Provider("https://api.together.xyz/v1", "TOGETHER_API_KEY"),
        "openrouter": Provider("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
        "sambanova": Provider("https://api.sambanova.ai/v1", "SAMBANOVA_API_KEY"),
        "cerebras": Provider("https://api.cerebras.ai/v1", "CEREBRAS_API_KEY"),
        "hugging_face_router": Provider("https://router.huggingface.co/v1", "HF_TOKEN"),
        "gemini": Provider("https://generativelanguage.googleapis.com/v1beta/openai", "GEMINI_API_KEY"),
        "groq": Provider("https://api.groq.com/openai/v1", "GROQ_API_KEY"),
        "ollama": Provider("http://localhost:11434/v1", None),
    }
)
