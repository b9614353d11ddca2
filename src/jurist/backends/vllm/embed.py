"""Embeddings on vLLM's pooling runner (``/v1/embeddings`` lines of ``jurist batch``).

The engine is a :class:`~jurist.backends.vllm.backend.VLLMBackend` loaded with ``pooling=True`` (its arguments
are named there); a causal LM loaded this way is read as an embedding model (vLLM pools its last token).
"""

from __future__ import annotations

from collections.abc import Sequence

from jurist.backends.vllm.backend import VLLMBackend
from jurist.config.inference import InferenceConfig


class VLLMEmbedder:
    """One pooling model: a vector and the prompt's token count per text."""

    def __init__(self, config: InferenceConfig) -> None:
        self._backend = VLLMBackend(config, pooling=True)

    @property
    def model_id(self) -> str:
        return self._backend.model_id

    def embed(self, texts: Sequence[str]) -> list[tuple[list[float], int]]:
        """The embedding of each text, in order (raises when the engine refuses one, e.g. too long)."""
        if not texts:
            return []
        outputs = self._backend.llm.embed(list(texts))
        return [
            ([float(v) for v in output.outputs.embedding], len(output.prompt_token_ids or ()))
            for output in outputs
        ]

    def close(self) -> None:
        self._backend.close()
