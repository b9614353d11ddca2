"""Hidden states from vLLM's pooling runner, on an engine loaded cut after one layer (``config.use``'s
``hidden_states_layer``): the last token's state (LAST pooling, the embed task) or, on an engine loaded for
pooled features (``token_states``), every token's (ALL pooling, token_embed: vLLM serves one pooling task per
engine), never normalised. :func:`jurist.backends.local.states.hidden_states` turns them into answers."""

from __future__ import annotations

from typing import Any

from jurist.backends.local.states import States, TokenStates


def states_pooler(every_token: bool) -> dict[str, Any]:
    """The ``pooler_config`` of an engine that gives hidden states: every token's, or the last token's."""
    if every_token:
        return {"task": "token_embed", "tok_pooling_type": "ALL", "use_activation": False}
    return {"seq_pooling_type": "LAST", "use_activation": False}


def state_parts(llm: Any, every_token: bool) -> tuple[States, TokenStates | None]:
    """What ``llm`` (a ``vllm.LLM`` loaded with :func:`states_pooler`) gives: prompts' last-token states
    and, where it was loaded for them, every token's (the last-token states then taken from those)."""
    if not every_token:
        return lambda prompts, layer: last_states(llm, prompts), None

    def every(prompts: list[list[int]], layer: int, whole: bool) -> list[Any]:
        return token_states(llm, prompts, whole)

    def last(prompts: list[list[int]], layer: int) -> Any:
        import numpy as np

        return np.stack([states[-1] for states in every(prompts, layer, False)])

    return last, every


def last_states(llm: Any, prompts: list[list[int]]) -> Any:
    """The last-token states (prompts x hidden size, float32)."""
    import numpy as np
    from vllm import PoolingParams
    from vllm.inputs import TokensPrompt

    outputs = llm.embed(
        [TokensPrompt(prompt_token_ids=ids) for ids in prompts],
        pooling_params=PoolingParams(use_activation=False),
        use_tqdm=False,
    )
    return np.asarray([list(o.outputs.embedding) for o in outputs], dtype=np.float32)


def token_states(llm: Any, prompts: list[list[int]], whole: bool) -> list[Any]:
    """Token states, one float32 array (tokens x hidden size) per prompt: every token's when ``whole``, else
    those the engine computes, past the prefix it found in its prefix cache (vLLM skips reading that cache
    for every-token pooling unless told; a prompt sharing a judge's long instructions with the rows before it
    then pays for its own tokens only)."""
    import numpy as np
    from vllm import PoolingParams
    from vllm.inputs import TokensPrompt

    outputs = llm.encode(
        [TokensPrompt(prompt_token_ids=ids) for ids in prompts],
        pooling_params=PoolingParams(use_activation=False, skip_reading_prefix_cache=whole),
        pooling_task="token_embed",
        use_tqdm=False,
    )
    return [np.asarray(o.outputs.data.float().cpu().numpy(), dtype=np.float32) for o in outputs]
