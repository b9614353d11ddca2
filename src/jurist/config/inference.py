"""The ``inference_config`` section: the judge model, the engine that runs it, and sampling.

``engine_params`` is a mapping that this package does not interpret: each engine's backend validates its
own keys (vLLM's are in :mod:`jurist.backends.vllm.backend`), so that an engine's argument names live in that
engine's module only.

Oumi's keys are accepted too (its ``InferenceConfig``, ``ModelParams``, ``GenerationParams`` and
``RemoteParams``): the ones that mean something here are mapped (``model_revision`` -> ``revision``,
``api_key_env_varname`` -> ``api_key_env``, ``connection_timeout`` -> ``timeout_s``, ``device_map`` on
NATIVE -> ``engine_params.device``, Oumi's engine names -> jurist's engines, see :data:`OUMI_ENGINES`);
the others are dropped, and :func:`oumi_ignored` lists them so that loading can warn, naming each key.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import Field, SecretStr, field_validator, model_validator

from jurist.config.providers import PROVIDERS
from jurist.config.types import InferenceEngine, StrictModel
from jurist.records import EngineUse

RETIRED_ENGINE_PARAMS = {
    "probe": "a probe head is judge_params.probe, read with judge_params.scoring PROBE (the judge loads the "
    "head and tells the engine its layer)",
}
"""``engine_params`` keys jurist no longer reads, and what took their place."""


def _note(
    text: str, harmless: Callable[[Any], bool] = lambda v: v is None
) -> tuple[str, Callable[[Any], bool]]:
    return text, harmless


# Oumi keys jurist accepts and does not use, by section: (what jurist does instead, values that change
# nothing here). A key whose value is harmless is dropped silently; any other value is dropped with a
# warning (see :func:`oumi_ignored`).
_IGNORED: dict[str, dict[str, tuple[str, Callable[[Any], bool]]]] = {
    "": {
        "input_path": _note("jurist reads the dataset given to `jurist judge dataset --input`"),
        "output_path": _note("jurist writes where `--output` says"),
        "progress_path": _note("jurist shows progress on stderr and records it in the output's metadata"),
    },
    "model": {
        "device_map": _note(
            "only engine NATIVE places the model on a device (engine_params.device); other engines place "
            "it themselves",
            lambda v: v in (None, "auto"),
        ),
        "tokenizer_pad_token": _note("jurist pads with the tokenizer's own pad or end token"),
        "tokenizer_kwargs": _note("the tokenizer loads with its defaults", lambda v: not v),
        "processor_kwargs": _note("jurist judges text only", lambda v: not v),
        "compile": _note(
            "compilation is the engine's choice (VLLM: engine_params.enforce_eager)",
            lambda v: v in (None, False),
        ),
        "chat_template": _note(
            "jurist applies the tokenizer's own chat template", lambda v: v in (None, "auto")
        ),
        "attn_implementation": _note("each engine picks its own attention kernels"),
        "enable_liger_kernel": _note("a training option", lambda v: v in (None, False)),
        "shard_for_eval": _note("a training option", lambda v: v in (None, False)),
        "freeze_layers": _note("a training option", lambda v: not v),
        "tool_call_parser": _note("judges call no tools"),
    },
    "generation": {
        "exclude_prompt_from_response": _note(
            "answers never include the prompt", lambda v: v in (None, True)
        ),
        "stop_token_ids": _note("use stop_strings", lambda v: not v),
        "logit_bias": _note("the answer's constraint decides which tokens are allowed", lambda v: not v),
        "use_cache": _note("the engines always keep a KV cache", lambda v: True),
        "num_beams": _note("jurist decodes one sequence per prompt", lambda v: v in (None, 1)),
        "use_sampling": _note("jurist samples exactly when temperature > 0", lambda v: v in (None, True)),
        "guided_decoding": _note("jurist builds the constraint from the judge's output fields"),
        "skip_special_tokens": _note(
            "special tokens are always left out of answers", lambda v: v in (None, True)
        ),
        "tool_choice": _note("judges call no tools"),
        "parallel_tool_calls": _note("judges call no tools", lambda v: v in (None, True)),
    },
    "remote_params": {
        "input_tokens_per_minute": _note("use requests_per_minute"),
        "output_tokens_per_minute": _note("use requests_per_minute"),
        "batch_completion_window": _note("jurist does not use batch APIs", lambda v: True),
        "use_adaptive_concurrency": _note(
            "jurist keeps num_workers requests in flight", lambda v: v in (None, False)
        ),
    },
}

# Oumi keys jurist reads under its own name, by section: Oumi's name -> jurist's.
_RENAMED: dict[str, dict[str, str]] = {
    "model": {"model_revision": "revision"},
    "remote_params": {"api_key_env_varname": "api_key_env", "connection_timeout": "timeout_s"},
}
# jurist's own other names for a key, by section: other name -> the key.
_ALIASES: dict[str, dict[str, str]] = {"remote_params": {"request_timeout": "timeout_s"}}
# Oumi keys accepted with the one value that keeps the judge the model asked for, by section.
# (the one value accepted, why), a key left out meaning that value.
_CHECKED: dict[str, dict[str, tuple[Any, str]]] = {
    "model": {
        "adapter_model": (
            None,
            "null only: jurist loads no adapters; merge the adapter into the model (or serve it with "
            "`vllm serve --lora-modules` and use engine REMOTE_VLLM)",
        ),
        "load_pretrained_weights": (True, "true only: a judge needs its trained weights"),
    },
}
# Oumi keys whose null means the default, by section: a null is left out.
_NULL_IS_DEFAULT: dict[str, tuple[str, ...]] = {"generation": ("top_p", "stop_strings")}


def oumi_keys() -> list[tuple[str, str]]:
    """(dotted key under ``inference_config``, what jurist does with it) for every key that is not a field of
    jurist's models: Oumi's names and jurist's other names of a field, Oumi's keys accepted with one value,
    and Oumi's keys accepted and not used."""
    found = [
        (f"{section}.{old}", f"read as {section}.{new}")
        for section, names in _RENAMED.items()
        for old, new in names.items()
    ]
    found += [
        (f"{section}.{old}", f"another name of {section}.{new}")
        for section, names in _ALIASES.items()
        for old, new in names.items()
    ]
    found += [
        (f"{section}.{key}", note) for section, keys in _CHECKED.items() for key, (_, note) in keys.items()
    ]
    for section, ignored in _IGNORED.items():
        for key, (note, _harmless) in ignored.items():
            found.append((f"{section}.{key}" if section else key, f"accepted and ignored ({note})"))
    return found


# Oumi engine -> (jurist engine, default API URL, default API key variable). Every hosted provider Oumi
# knows that speaks OpenAI's chat-completions protocol runs on jurist's OpenAI backend; REMOTE and SGLANG
# are servers of your own (api_url required; SGLANG's native `/generate` URL becomes its OpenAI `/v1`).
OUMI_ENGINES: dict[str, tuple[InferenceEngine, str | None, str | None]] = {
    **{
        name.upper(): (InferenceEngine.OPENAI, p.url, p.api_key_env)
        for name, p in PROVIDERS.items()
        if name not in ("openai", "groq", "ollama")  # OPENAI is an engine itself; Oumi names no other two
    },
    "REMOTE": (InferenceEngine.OPENAI, None, None),
    "SGLANG": (InferenceEngine.OPENAI, None, None),
}
_ENGINE_ALIASES = {"GOOGLE_GEMINI": "GEMINI"}
_UNSUPPORTED_ENGINES = {
    "LLAMACPP": "llama.cpp (GGUF files) does not run in jurist; run the model's Hugging Face weights on "
    "VLLM or NATIVE, or serve the GGUF file with `vllm serve` and use REMOTE_VLLM",
    "GOOGLE_VERTEX": "Vertex AI signs requests with Google Cloud credentials, which jurist does not do; use "
    "GEMINI (an API key) or an OpenAI-compatible endpoint (REMOTE with remote_params.api_url)",
    "BEDROCK": "AWS Bedrock signs requests with AWS credentials, which jurist does not do; use an "
    "OpenAI-compatible endpoint (REMOTE with remote_params.api_url)",
}
_DEVICE = re.compile(r"^(cpu|mps|cuda(:\d+)?)$")


def supported_engines() -> str:
    """Every engine name a config may give, for messages."""
    names = [e.value for e in InferenceEngine] + sorted(set(OUMI_ENGINES) | set(_ENGINE_ALIASES))
    return ", ".join(names)


def oumi_ignored(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(dotted key under ``inference_config``, what jurist does instead) for every Oumi key in ``data`` (a
    raw ``inference_config`` mapping) that jurist drops and whose value would change something in Oumi."""
    found: list[tuple[str, str]] = []
    for section, keys in _IGNORED.items():
        values = data if not section else data.get(section)
        if not isinstance(values, Mapping):
            continue
        for key, (note, harmless) in keys.items():
            if key not in values or harmless(values[key]):
                continue
            if section == "model" and key == "device_map" and _maps_device(data, values[key]):
                continue
            if section == "generation" and key == "use_sampling" and not _sampling(data):
                continue  # greedy either way
            found.append((f"{section}.{key}" if section else key, note))
    return found


def _drop(values: Any, section: str) -> Any:
    if not isinstance(values, Mapping):
        return values
    return {k: v for k, v in values.items() if k not in _IGNORED[section]}


def _rename(values: dict[str, Any], old: str, new: str, where: str, whose: str = "Oumi's name") -> None:
    if old not in values:
        return
    value = values.pop(old)
    if new in values and values[new] != value:
        raise ValueError(f"{where}.{old} ({whose}) and {where}.{new} disagree: {value!r} vs {values[new]!r}")
    values.setdefault(new, value)


def _oumi_section(data: Any, section: str) -> Any:
    """A section's values with Oumi's keys read the way the tables above say: ignored keys dropped, Oumi's
    and jurist's other names renamed, checked keys refused unless they hold their one value, nulls that
    mean the default left out."""
    if not isinstance(data, Mapping):
        return data
    values = dict(_drop(data, section))
    for old, new in _RENAMED.get(section, {}).items():
        _rename(values, old, new, section)
    for old, new in _ALIASES.get(section, {}).items():
        _rename(values, old, new, section, "another name")
    for key, (allowed, note) in _CHECKED.get(section, {}).items():
        if values.pop(key, allowed) is not allowed:
            raise ValueError(f"{section}.{key}: {note}")
    for key in _NULL_IS_DEFAULT.get(section, ()):
        if key in values and values[key] is None:
            del values[key]
    return values


def _sampling(data: Mapping[str, Any]) -> bool:
    generation = data.get("generation")
    temperature = generation.get("temperature") if isinstance(generation, Mapping) else None
    return isinstance(temperature, int | float) and temperature > 0


def _engine_name(data: Mapping[str, Any]) -> str:
    engine = data.get("engine")
    text = engine.value if isinstance(engine, InferenceEngine) else str(engine or "VLLM")
    return _ENGINE_ALIASES.get(text.strip().upper(), text.strip().upper())


def _maps_device(data: Mapping[str, Any], value: Any) -> bool:
    return _engine_name(data) == "NATIVE" and isinstance(value, str) and bool(_DEVICE.match(value))


class ModelParams(StrictModel):
    """The judge model. ``model_name`` is a Hugging Face id or a local folder; None means the embedded
    default (SmolLM2-135M-Instruct)."""

    model_name: str | None = None
    """A Hugging Face model id or a local folder; unset: the embedded SmolLM2-135M-Instruct."""
    tokenizer_name: str | None = None
    """The tokenizer's id or folder, when it is not the model's."""
    revision: str | None = None
    """The model's revision (a branch, tag or commit); Oumi's model_revision is the same key."""
    model_max_length: int | None = Field(default=None, ge=16, description="vLLM max_model_len.")
    torch_dtype_str: str | None = Field(default=None, description="auto, bfloat16, float16, float32.")
    trust_remote_code: bool = False
    """Let the model's repository run its own code when it loads."""
    model_kwargs: dict[str, Any] = Field(default_factory=dict)
    """Other arguments for the engine's model loading, passed as they are."""
    chat_template_kwargs: dict[str, Any] = Field(default_factory=dict)
    """Variables for the model's chat template (vLLM's chat_template_kwargs), e.g. {enable_thinking: false}
    for Qwen3's non-thinking mode; unset, the template's defaults apply. Judges on one model with different
    values load it once each."""

    @model_validator(mode="before")
    @classmethod
    def _oumi_keys(cls, data: Any) -> Any:
        return _oumi_section(data, "model")


class GenerationParams(StrictModel):
    """Sampling parameters. ``max_new_tokens`` None means: the output schema's bound (guided) or 1024."""

    max_new_tokens: int | None = Field(default=None, ge=1)
    """Longest answer in tokens; unset: the output schema's bound when guided, else 1024."""
    temperature: float = Field(default=0.0, ge=0.0)
    """Sampling temperature; 0 decodes greedily."""
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    """Nucleus sampling: the smallest set of tokens whose probability reaches top_p."""
    top_k: int | None = None
    """Sample from the k most likely tokens only."""
    min_p: float = Field(default=0.0, ge=0.0, le=1.0)
    """Drop tokens less likely than min_p times the most likely one."""
    seed: int | None = None
    """The sampling seed (per row on GPUs, the engine's on CPU)."""
    frequency_penalty: float = 0.0
    """Penalty on tokens by how often they appeared."""
    presence_penalty: float = 0.0
    """Penalty on tokens that appeared at all."""
    stop_strings: list[str] = Field(default_factory=list)
    """Strings that end the answer."""
    batch_size: int | None = Field(default=None, ge=1, description="Rows per inference call (a chunk).")

    @model_validator(mode="before")
    @classmethod
    def _oumi_keys(cls, data: Any) -> Any:
        return _oumi_section(data, "generation")


class RemoteParams(StrictModel):
    """An OpenAI-compatible server, for engines REMOTE_VLLM and OPENAI (and Oumi's hosted engines)."""

    api_url: str | None = None
    """The server's base URL (an Oumi-style URL ending in /chat/completions is cut back to its base)."""
    api_key_env: str | None = Field(default=None, description="Environment variable that holds the key.")
    api_key: SecretStr | None = Field(
        default=None, description="The key itself (kept secret: written to results as asterisks)."
    )
    user_id: str | None = Field(default=None, description="Sent as the request's `user`.")
    num_workers: int = Field(default=8, ge=1)
    """Requests in flight at once."""
    timeout_s: float = Field(
        default=120.0,
        gt=0,
        description="Seconds a request may go without an answer from the server (also `request_timeout`).",
    )
    max_retries: int = Field(
        default=6,
        ge=0,
        description="Retries of a request after a failure (408/5xx, a reset connection, a timeout); waits "
        "a busy server asks for (429, Retry-After) do not count.",
    )
    retry_backoff_base: float = Field(default=1.0, gt=0, description="First wait between retries, seconds.")
    retry_backoff_max: float = Field(default=30.0, gt=0, description="Longest wait between retries, seconds.")
    max_retry_wait_s: float = Field(
        default=300.0,
        gt=0,
        allow_inf_nan=False,
        description="The most one request waits between its retries, in all; and once the server has "
        "answered nothing for this long, requests stop retrying.",
    )
    politeness_policy: float = Field(
        default=0.0, ge=0, allow_inf_nan=False, description="Seconds a worker waits between its requests."
    )
    requests_per_minute: int | None = Field(
        default=None, ge=1, description="At most this many requests a minute."
    )

    @model_validator(mode="before")
    @classmethod
    def _oumi_keys(cls, data: Any) -> Any:
        return _oumi_section(data, "remote_params")


class InferenceConfig(StrictModel):
    """Which model judges, on which engine, with which sampling parameters.

    ``provider``: the Oumi engine name a config gave when jurist runs it through one of its own engines
    (``ANTHROPIC`` runs on ``OPENAI`` against Anthropic's OpenAI-compatible endpoint); set by loading."""

    model: ModelParams = Field(default_factory=ModelParams)
    """The judge model."""
    engine: InferenceEngine = InferenceEngine.VLLM
    """VLLM (default), NATIVE (transformers), REMOTE_VLLM or OPENAI; Oumi's other engine names map onto
    these."""
    provider: str | None = None
    """The Oumi engine name the config gave when it runs on one of jurist's engines (set when the config
    loads)."""
    generation: GenerationParams = Field(default_factory=GenerationParams)
    """Sampling parameters."""
    remote_params: RemoteParams = Field(default_factory=RemoteParams)
    """The server, for REMOTE_VLLM and OPENAI."""
    engine_params: dict[str, Any] = Field(
        default_factory=dict,
        description="Settings of the local engine, validated by that engine's backend (keys: below).",
    )
    use: EngineUse = Field(default_factory=EngineUse, exclude=True)
    """What the judges on the engine ask of it besides generation: set from their scoring modes when the
    engine is made (:meth:`jurist.judges.judge.Judge.engine_config`), never by a config."""

    @field_validator("use", mode="before")
    @classmethod
    def _use_is_derived(cls, value: Any) -> Any:
        if value != EngineUse():
            raise ValueError("inference_config.use is set by the judges' scoring modes, not by a config")
        return value

    @field_validator("engine_params")
    @classmethod
    def _retired_keys(cls, value: dict[str, Any]) -> dict[str, Any]:
        for key, instead in RETIRED_ENGINE_PARAMS.items():
            if key in value:
                raise ValueError(f"engine_params.{key} is no longer read: {instead}")
        return value

    @model_validator(mode="before")
    @classmethod
    def _oumi_keys(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        values: dict[str, Any] = _oumi_section(data, "")
        model = values.get("model")
        if isinstance(model, Mapping) and _maps_device(values, model.get("device_map")):
            params = dict(values.get("engine_params") or {})
            params.setdefault("device", model["device_map"])
            values["engine_params"] = params
        if values.get("remote_params") is None and "remote_params" in values:
            del values["remote_params"]  # Oumi's default: none
        if values.get("engine") is None:
            values.pop("engine", None)  # Oumi's default is NATIVE; jurist's is VLLM (the same model, faster)
            return values
        name = _engine_name(values)
        if name in _UNSUPPORTED_ENGINES:
            raise ValueError(f"engine {name}: {_UNSUPPORTED_ENGINES[name]} (engines: {supported_engines()})")
        if name not in OUMI_ENGINES:
            return values
        engine, url, key_env = OUMI_ENGINES[name]
        remote = dict(values.get("remote_params") or {})
        if url is not None:
            remote.setdefault("api_url", url)
        elif not remote.get("api_url"):
            raise ValueError(
                f"engine {name} needs inference_config.remote_params.api_url (your server's URL)"
            )
        elif name == "SGLANG":
            remote["api_url"] = re.sub(r"/generate/?$", "/v1", str(remote["api_url"]))
        if key_env is not None and not remote.get("api_key_env_varname") and not remote.get("api_key"):
            remote.setdefault("api_key_env", key_env)
        values.update(engine=engine, provider=values.get("provider") or name, remote_params=remote)
        return values
