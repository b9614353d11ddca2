"""Hidden states of prompts' last tokens with transformers (probe heads: :mod:`jurist.models.probe_head`).

For each prompt and each asked layer L (1 = the first transformer layer's output): ``norm(hidden_states[L])``
at the last position, where ``norm`` is the model's final norm, as vLLM's pooling runner returns it for a
model cut after L layers. One batched forward pass gives every layer; prompts are sorted by length and
left-padded with positions counted from each prompt's own start, as label scoring does
(:mod:`jurist.backends.hf.labels`). The model runs only up to the highest asked layer when it keeps its layers
in ``model.layers`` (Llama, Qwen, Mistral, ...): the layers above are left out of the pass. Optionally the
next-token log-probabilities at the last position (the model's own label distribution, from the same pass,
when every layer runs) are returned too. :func:`token_states` gives every token's state at one layer, which
pooled features (the mean over a response's tokens) are taken from.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from jurist.errors import BackendError


def final_norm(model: Any) -> Any:
    """The final norm of a causal LM's decoder (``model.model.norm`` in Llama-style models)."""
    base = model.base_model
    for name in ("norm", "final_layernorm", "ln_f"):
        module = getattr(base, name, None)
        if module is not None:
            return module
    raise BackendError(f"{type(model).__name__}: no final norm found (probe heads need one)")


def last_states(
    model: Any,
    prompts: Sequence[Sequence[int]],
    layers: Sequence[int],
    *,
    pad_id: int,
    batch_size: int,
    device: str = "cpu",
    token_ids: Sequence[int] = (),
) -> tuple[Any, Any]:
    """``(states, logprobs)``: states is a float32 array (prompts x len(layers) x hidden size) of each
    prompt's last-token state at each layer; logprobs (prompts x len(token_ids)) holds the log-probability
    of each of ``token_ids`` as the next token (None when no ids are asked)."""
    import numpy as np
    import torch

    norm = final_norm(model)
    deepest = max(layers)
    cut = _cut_layers(model, deepest if not token_ids else None)
    states = np.zeros((len(prompts), len(layers), _hidden_size(model)), dtype=np.float32)
    logprobs = np.zeros((len(prompts), len(token_ids)), dtype=np.float32) if token_ids else None
    try:
        for batch, inputs in padded_batches(prompts, batch_size, pad_id, device):
            inputs["output_hidden_states"] = True
            with torch.inference_mode():
                if token_ids:
                    out = model(**inputs, logits_to_keep=1)
                    hidden = out.hidden_states
                    lp = torch.log_softmax(out.logits[:, -1, :].float(), dim=-1)[:, list(token_ids)]
                else:
                    hidden = model.base_model(**inputs).hidden_states
                for k, layer in enumerate(layers):
                    normed = (
                        hidden[layer][:, -1, :] if layer == len(hidden) - 1 else norm(hidden[layer][:, -1, :])
                    )
                    picked = normed.float().cpu().numpy()
                    for row, i in enumerate(batch):
                        states[i, k] = picked[row]
            if logprobs is not None:
                values = lp.cpu().numpy()
                for row, i in enumerate(batch):
                    logprobs[i] = values[row]
    finally:
        cut.restore()
    return states, logprobs


def token_states(
    model: Any,
    prompts: Sequence[Sequence[int]],
    layer: int,
    *,
    pad_id: int,
    batch_size: int,
    device: str = "cpu",
) -> list[Any]:
    """Every token's state at ``layer`` (``norm(hidden_states[layer])``, as :func:`last_states` gives the last
    token's), one float32 array (tokens x hidden size) per prompt, in prompt order."""
    import torch

    norm = final_norm(model)
    cut = _cut_layers(model, layer)
    out: list[Any] = [None] * len(prompts)
    try:
        for batch, inputs in padded_batches(prompts, batch_size, pad_id, device):
            inputs["output_hidden_states"] = True
            with torch.inference_mode():
                hidden = model.base_model(**inputs).hidden_states
                normed = hidden[layer] if layer == len(hidden) - 1 else norm(hidden[layer])
                values = normed.float().cpu().numpy()
            for row, i in enumerate(batch):
                out[i] = values[row, values.shape[1] - len(prompts[i]) :]  # left-padded: the prompt's own
    finally:
        cut.restore()
    return out


def padded_batches(
    prompts: Sequence[Sequence[int]], batch_size: int, pad_id: int, device: str
) -> Iterator[tuple[list[int], dict[str, Any]]]:
    """Prompts in batches of ``batch_size``, sorted by length (less padding): each batch's prompt indices and
    its model inputs, left-padded, with positions counted from each prompt's own start."""
    import torch

    order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]))
    for start in range(0, len(order), batch_size):
        batch = order[start : start + batch_size]
        longest = max(len(prompts[i]) for i in batch)
        input_ids = torch.full((len(batch), longest), pad_id, dtype=torch.long)
        attention = torch.zeros((len(batch), longest), dtype=torch.long)
        for row, i in enumerate(batch):
            ids = list(prompts[i])
            input_ids[row, longest - len(ids) :] = torch.tensor(ids, dtype=torch.long)
            attention[row, longest - len(ids) :] = 1
        positions = (attention.cumsum(-1) - 1).clamp(min=0)
        yield (
            batch,
            {
                "input_ids": input_ids.to(device),
                "attention_mask": attention.to(device),
                "position_ids": positions.to(device),
            },
        )


def _hidden_size(model: Any) -> int:
    config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    return int(config.hidden_size)


class _Cut:
    """The decoder's layer list shortened for one pass, and put back afterwards."""

    def __init__(self, base: Any, full: Any) -> None:
        self.base, self.full = base, full

    def restore(self) -> None:
        if self.base is not None:
            self.base.layers = self.full


def _cut_layers(model: Any, deepest: int | None) -> _Cut:
    """Run only the first ``deepest`` layers (None: all), where the decoder keeps them in ``layers``."""
    base = model.base_model
    full = getattr(base, "layers", None)
    if deepest is None or full is None or deepest >= len(full):
        return _Cut(None, None)
    import torch

    base.layers = torch.nn.ModuleList(list(full)[:deepest])
    return _Cut(base, full)
