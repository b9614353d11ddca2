"""Judge configs: pydantic models compatible with Oumi's judge YAML, loading, built-ins and overrides.

A config has three sections, as in Oumi:

* ``judge_params`` (:class:`JudgeParams`): prompt template, system instruction, response format, judgment
  type and scores, explanation, few-shot examples, guided decoding.
* ``rubric_judge_params`` (:class:`RubricJudgeParams`, optional): several criteria judged in one call, and
  how their scores aggregate. Its presence makes the judge a rubric judge.
* ``inference_config`` (:class:`InferenceConfig`): the judge model, the engine that runs it and the
  generation parameters.

Every model rejects unknown keys. :func:`load_judge_config` turns any validation failure into a
:class:`~jurist.errors.ConfigError` that names the file, the dotted key, the value and, for an unknown
key, the keys that are allowed there. YAML is read with ``yaml.safe_load``: a config can never run code.
"""

from __future__ import annotations

import copy
import enum
import logging
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from jurist.errors import ConfigError
from jurist.templates import Template, build_namespace, lookup, placeholders_in

logger = logging.getLogger("jurist")

IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
BUILTIN_PREFIX = "jurist://"


class _UpperEnum(str, enum.Enum):
    """A string enum that accepts its values in any letter case (``json`` == ``JSON``)."""

    @classmethod
    def _missing_(cls, value: object) -> Any:
        if isinstance(value, str):
            for member in cls:
                if member.value == value.strip().upper():
                    return member
        return None


class ResponseFormat(_UpperEnum):
    """How the judge writes its answer."""

    JSON = "JSON"
    XML = "XML"
    RAW = "RAW"


class JudgmentType(_UpperEnum):
    """The type of a judgment field."""

    BOOL = "BOOL"
    INT = "INT"
    FLOAT = "FLOAT"
    TEXT = "TEXT"
    ENUM = "ENUM"


class Aggregation(_UpperEnum):
    """How a rubric judge combines its criteria's scores into ``aggregate_score``."""

    WEIGHTED_MEAN = "WEIGHTED_MEAN"
    MIN = "MIN"
    ALL = "ALL"
    NONE = "NONE"


class InferenceEngine(_UpperEnum):
    """Which backend runs the judge model.

    ``VLLM``: vLLM's offline engine in this process. ``NATIVE``: transformers with outlines constraints.
    ``REMOTE_VLLM`` / ``OPENAI``: an OpenAI-compatible HTTP server.
    """

    VLLM = "VLLM"
    NATIVE = "NATIVE"
    REMOTE_VLLM = "REMOTE_VLLM"
    OPENAI = "OPENAI"


class ScoringMode(_UpperEnum):
    """``GENERATE``: decode the answer. ``LOGPROBS``: read label probabilities after one prefill."""

    GENERATE = "GENERATE"
    LOGPROBS = "LOGPROBS"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True, use_enum_values=False)


def _check_scores(judgment_type: JudgmentType, scores: Mapping[str, float | None] | None, where: str) -> None:
    """Apply Oumi's rules on ``judgment_scores`` for one judgment."""
    if scores is None:
        if judgment_type is JudgmentType.ENUM:
            raise ValueError(f"{where}: an ENUM judgment needs judgment_scores (its labels and their scores)")
        return
    if not scores:
        raise ValueError(f"{where}: judgment_scores is empty")
    if judgment_type is JudgmentType.BOOL:
        raise ValueError(
            f"{where}: BOOL judgments score 1.0 / 0.0 automatically; judgment_scores is for ENUM, INT, "
            "FLOAT and TEXT"
        )
    for label, score in scores.items():
        if not str(label).strip():
            raise ValueError(f"{where}: judgment_scores has an empty label")
        if score is None:
            if judgment_type is not JudgmentType.ENUM:
                raise ValueError(
                    f"{where}: label {label!r} maps to null; null (N/A) scores are allowed only for ENUM "
                    f"judgments, not {judgment_type.value}"
                )
            continue
        if not math.isfinite(score):
            raise ValueError(f"{where}: label {label!r} has a non-finite score {score!r}")
    if judgment_type is JudgmentType.INT:
        for label in scores:
            if not re.fullmatch(r"-?\d+", str(label).strip()):
                raise ValueError(f"{where}: INT judgment_scores label {label!r} is not an integer")
    if judgment_type is JudgmentType.FLOAT:
        for label in scores:
            try:
                float(label)
            except ValueError:
                raise ValueError(f"{where}: FLOAT judgment_scores label {label!r} is not a number") from None


def _coerce_scores(value: Any) -> Any:
    """YAML reads ``1: 0.0`` with an int key; labels are strings."""
    if isinstance(value, Mapping):
        return {str(key): score for key, score in value.items()}
    return value


def _check_example_value(
    value: Any, judgment_type: JudgmentType, scores: Mapping[str, float | None] | None, where: str
) -> None:
    """A few-shot judgment must be a value the judge itself could answer."""
    text = str(value).strip()
    if judgment_type is JudgmentType.BOOL:
        if not isinstance(value, bool) and text.lower() not in ("yes", "no", "true", "false"):
            raise ValueError(f"{where}: {value!r} is not a BOOL judgment (Yes/No/True/False)")
    elif judgment_type is JudgmentType.ENUM:
        labels = list(scores or ())
        if text.casefold() not in {label.casefold() for label in labels}:
            raise ValueError(f"{where}: {value!r} is not one of the labels {', '.join(labels)}")
    elif judgment_type in (JudgmentType.INT, JudgmentType.FLOAT):
        try:
            number = float(text)
        except ValueError:
            raise ValueError(f"{where}: {value!r} is not a number") from None
        if judgment_type is JudgmentType.INT:
            if isinstance(value, bool) or not number.is_integer():
                raise ValueError(f"{where}: {value!r} is not an integer")
            if scores and int(number) not in {int(label) for label in scores}:
                raise ValueError(f"{where}: {value!r} is not one of {', '.join(scores)}")


class JudgeParams(_Strict):
    """What the judge is asked and how it answers (Oumi's ``judge_params``)."""

    prompt_template: str = Field(description="The user prompt; {name} placeholders are filled per row.")
    system_instruction: str | None = Field(default=None, description="Optional system message.")
    template_variables: dict[str, str] = Field(
        default_factory=dict, description="Placeholders replaced once, when the judge is built."
    )
    response_format: ResponseFormat = ResponseFormat.JSON
    judgment_type: JudgmentType = JudgmentType.BOOL
    judgment_scores: dict[str, float | None] | None = None
    include_explanation: bool = False
    examples: list[dict[str, Any]] = Field(default_factory=list, description="Few-shot examples.")
    use_guided_decoding: bool = True
    # jurist extensions (not in Oumi): bounds that make guided decoding terminate, and the scoring mode.
    max_explanation_chars: int = Field(
        default=400, ge=16, le=20000, description="Upper bound on an explanation or TEXT judgment."
    )
    scoring: ScoringMode = ScoringMode.GENERATE
    label_probabilities: bool = Field(
        default=False,
        description="In GENERATE scoring, also read each label field's distribution from token logprobs.",
    )
    target_error_field: str | None = Field(
        default="error",
        description="A row whose value here is non-empty is an errored target: not judged (target_error).",
    )

    @field_validator("judgment_scores", mode="before")
    @classmethod
    def _labels_are_strings(cls, value: Any) -> Any:
        return _coerce_scores(value)

    @field_validator("template_variables", mode="before")
    @classmethod
    def _variables_are_strings(cls, value: Any) -> Any:
        if isinstance(value, Mapping):
            return {str(k): ("" if v is None else str(v)) for k, v in value.items()}
        return value

    @field_validator("prompt_template")
    @classmethod
    def _template_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("prompt_template is empty")
        return value


class Criterion(_Strict):
    """One criterion of a rubric judge: one output field (plus its explanation)."""

    id: str
    description: str
    judgment_type: JudgmentType = JudgmentType.BOOL
    judgment_scores: dict[str, float | None] | None = None
    include_explanation: bool = True
    weight: float = Field(default=1.0, gt=0.0)

    @field_validator("judgment_scores", mode="before")
    @classmethod
    def _labels_are_strings(cls, value: Any) -> Any:
        return _coerce_scores(value)

    @field_validator("id")
    @classmethod
    def _identifier(cls, value: str) -> str:
        if not IDENTIFIER.fullmatch(value):
            raise ValueError(
                f"criterion id {value!r} must be identifier-like: letters, digits and underscores, "
                "not starting with a digit"
            )
        if value == "explanation" or value.endswith("_explanation"):
            raise ValueError(
                f"criterion id {value!r} is reserved: 'explanation' and '*_explanation' name the "
                "generated explanation fields"
            )
        return value

    @field_validator("weight")
    @classmethod
    def _finite(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError(f"weight must be finite, got {value!r}")
        return value

    @model_validator(mode="after")
    def _scores_fit_type(self) -> Criterion:
        _check_scores(self.judgment_type, self.judgment_scores, f"criterion {self.id!r}")
        return self


class RubricJudgeParams(_Strict):
    """Several criteria judged in one call (Oumi's ``rubric_judge_params``)."""

    aggregation: Aggregation = Aggregation.WEIGHTED_MEAN
    criteria: list[Criterion] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_ids(self) -> RubricJudgeParams:
        seen: set[str] = set()
        for criterion in self.criteria:
            if criterion.id in seen:
                raise ValueError(f"criterion id {criterion.id!r} appears twice")
            seen.add(criterion.id)
        return self


def _field_candidates(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


class PairLabels(_Strict):
    """The labels a pairwise judge answers with: the first shown response, the second, or a tie."""

    first: str = "A"
    second: str = "B"
    tie: str = "tie"

    @model_validator(mode="after")
    def _distinct(self) -> PairLabels:
        labels = [self.first, self.second, self.tie]
        if len({label.strip().casefold() for label in labels}) != 3 or not all(
            label.strip() for label in labels
        ):
            raise ValueError(f"pairwise labels must be distinct and non-empty, got {labels}")
        return self


class PairwiseJudgeParams(_Strict):
    """Judging two responses to one question, in both orders (a jurist extension of Oumi's format).

    Each ``*_field`` lists candidate columns, the first one a row has wins (so LLMBar's ``input``,
    ``output_1``, ``output_2`` work as they are). The prompt reads ``{question}``, ``{response_a}``,
    ``{response_b}`` and ``{reference}`` (or ``{{response_a.output.response}}``...), filled per order.
    """

    question_field: list[str] = Field(default_factory=lambda: ["question", "input", "instruction", "prompt"])
    response_a_field: list[str] = Field(default_factory=lambda: ["response_a", "output_1", "answer_a"])
    response_b_field: list[str] = Field(default_factory=lambda: ["response_b", "output_2", "answer_b"])
    reference_field: list[str] = Field(default_factory=lambda: ["reference", "expected_output"])
    error_a_field: list[str] = Field(default_factory=lambda: ["error_a", "response_a_error"])
    error_b_field: list[str] = Field(default_factory=lambda: ["error_b", "response_b_error"])
    labels: PairLabels = Field(default_factory=PairLabels)
    allow_tie: bool = False

    _coerce = field_validator(
        "question_field",
        "response_a_field",
        "response_b_field",
        "reference_field",
        "error_a_field",
        "error_b_field",
        mode="before",
    )(_field_candidates)

    @property
    def answer_labels(self) -> list[str]:
        """The judgment's labels in order: first, second (and tie when allowed)."""
        labels = [self.labels.first, self.labels.second]
        return [*labels, self.labels.tie] if self.allow_tie else labels


class ModelParams(_Strict):
    """The judge model. ``model_name`` is a Hugging Face id or a local folder; None means the embedded
    default (SmolLM2-135M-Instruct)."""

    model_name: str | None = None
    tokenizer_name: str | None = None
    revision: str | None = None
    model_max_length: int | None = Field(default=None, ge=16, description="vLLM max_model_len.")
    torch_dtype_str: str | None = Field(default=None, description="auto, bfloat16, float16, float32.")
    trust_remote_code: bool = False
    model_kwargs: dict[str, Any] = Field(default_factory=dict)


class GenerationParams(_Strict):
    """Sampling parameters. ``max_new_tokens`` None means: the output schema's bound (guided) or 1024."""

    max_new_tokens: int | None = Field(default=None, ge=1)
    temperature: float = Field(default=0.0, ge=0.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    top_k: int | None = None
    min_p: float = Field(default=0.0, ge=0.0, le=1.0)
    seed: int | None = None
    frequency_penalty: float = 0.0
    presence_penalty: float = 0.0
    stop_strings: list[str] = Field(default_factory=list)
    batch_size: int | None = Field(default=None, ge=1, description="Rows per inference call (a chunk).")


class RemoteParams(_Strict):
    """An OpenAI-compatible server, for engines REMOTE_VLLM and OPENAI."""

    api_url: str | None = None
    api_key_env: str | None = Field(default=None, description="Environment variable that holds the key.")
    num_workers: int = Field(default=8, ge=1)
    timeout_s: float = Field(default=120.0, gt=0)


class EngineParams(_Strict):
    """Settings of the local engine (vLLM or transformers)."""

    gpu_memory_utilization: float | None = Field(
        default=None, gt=0.0, le=1.0, description="Share of GPU memory (on CPU: of RAM) vLLM reserves."
    )
    tensor_parallel_size: int = Field(default=1, ge=1)
    enable_prefix_caching: bool = True
    enforce_eager: bool | None = None
    max_num_seqs: int | None = Field(default=None, ge=1)
    max_num_batched_tokens: int | None = Field(default=None, ge=1)
    block_size: int | None = Field(
        default=None,
        ge=1,
        description="Tokens per KV-cache block, the granularity of prefix caching (vLLM; default: 32 on CPU, "
        "vLLM's own choice on GPU).",
    )
    structured_outputs_backend: str | None = Field(
        default=None, description="vLLM structured-output backend: outlines, xgrammar, guidance, auto."
    )
    extra: dict[str, Any] = Field(default_factory=dict, description="Passed as is to the engine.")


class InferenceConfig(_Strict):
    """Which model judges, on which engine, with which sampling parameters."""

    model: ModelParams = Field(default_factory=ModelParams)
    engine: InferenceEngine = InferenceEngine.VLLM
    generation: GenerationParams = Field(default_factory=GenerationParams)
    remote_params: RemoteParams = Field(default_factory=RemoteParams)
    engine_params: EngineParams = Field(default_factory=EngineParams)


class JudgeConfig(_Strict):
    """A whole judge: Oumi's ``judge_params`` + ``rubric_judge_params`` + ``inference_config``.

    ``name`` (a jurist extension) names the judge's output columns; by default it is the config file's
    stem. ``warnings`` lists what :func:`load_judge_config` found suspicious but legal.
    """

    name: str | None = None
    description: str | None = None
    judge_params: JudgeParams
    rubric_judge_params: RubricJudgeParams | None = None
    pairwise_judge_params: PairwiseJudgeParams | None = None
    inference_config: InferenceConfig = Field(default_factory=InferenceConfig)

    _source: str = PrivateAttr(default="<python>")
    _warnings: list[str] = PrivateAttr(default_factory=list)

    @field_validator("name")
    @classmethod
    def _name_identifier(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_\-]*", value):
            raise ValueError(f"name {value!r} must be letters, digits, '_' or '-', not starting with a digit")
        return value

    @property
    def is_rubric(self) -> bool:
        return self.rubric_judge_params is not None

    @property
    def is_pairwise(self) -> bool:
        return self.pairwise_judge_params is not None

    @property
    def source(self) -> str:
        """Where the config came from: a file path, a built-in name or ``<python>``."""
        return self._source

    @property
    def warnings(self) -> list[str]:
        return list(self._warnings)

    @model_validator(mode="after")
    def _cross_checks(self) -> JudgeConfig:
        jp = self.judge_params
        rubric = self.rubric_judge_params
        if rubric is not None and self.pairwise_judge_params is not None:
            raise ValueError("a judge has either rubric_judge_params or pairwise_judge_params, not both")
        if rubric is not None:
            if jp.response_format is ResponseFormat.RAW:
                raise ValueError(
                    "judge_params.response_format RAW cannot delimit one judgment per criterion; a rubric "
                    "judge needs JSON or XML"
                )
            for key in ("judgment_type", "judgment_scores", "include_explanation"):
                if key in jp.model_fields_set:
                    raise ValueError(
                        f"judge_params.{key} is not allowed in a rubric judge: set it per criterion in "
                        "rubric_judge_params.criteria"
                    )
        elif self.pairwise_judge_params is None:
            _check_scores(jp.judgment_type, jp.judgment_scores, "judge_params")
        if self.pairwise_judge_params is not None:
            for key in ("judgment_type", "judgment_scores"):
                if key in jp.model_fields_set:
                    raise ValueError(
                        f"judge_params.{key} is not allowed in a pairwise judge: its judgment is the label "
                        "of the better response (pairwise_judge_params.labels)"
                    )
        if jp.scoring is ScoringMode.LOGPROBS:
            if rubric is not None:
                raise ValueError(
                    "judge_params.scoring LOGPROBS reads one label distribution after one prefill; a rubric "
                    "judge writes several fields (use label_probabilities in GENERATE scoring instead)"
                )
            if self.pairwise_judge_params is None:
                jt = jp.judgment_type
                if jt not in (JudgmentType.BOOL, JudgmentType.ENUM, JudgmentType.INT):
                    raise ValueError(
                        f"judge_params.scoring LOGPROBS needs a BOOL, ENUM or INT judgment, not {jt.value}"
                    )
                if jt is JudgmentType.INT and not jp.judgment_scores:
                    raise ValueError(
                        "judge_params.scoring LOGPROBS with INT needs judgment_scores (the scale)"
                    )
        self._check_examples()
        return self

    def _check_examples(self) -> None:
        jp = self.judge_params
        rubric = self.rubric_judge_params
        for index, example in enumerate(jp.examples):
            where = f"judge_params.examples[{index}]"
            if rubric is not None:
                needed = []
                for criterion in rubric.criteria:
                    if criterion.include_explanation:
                        needed.append(f"{criterion.id}_explanation")
                    needed.append(criterion.id)
            else:
                needed = ["judgment", *(["explanation"] if jp.include_explanation else [])]
            missing = [key for key in needed if key not in example or example[key] is None]
            if missing:
                raise ValueError(f"{where} lacks {', '.join(missing)} (every output field needs a value)")
            if rubric is not None:
                for c in rubric.criteria:
                    _check_example_value(example[c.id], c.judgment_type, c.judgment_scores, f"{where}.{c.id}")
            elif self.pairwise_judge_params is not None:
                labels = self.pairwise_judge_params.answer_labels
                _check_example_value(
                    example["judgment"], JudgmentType.ENUM, dict.fromkeys(labels, 0.0), f"{where}.judgment"
                )
            else:
                _check_example_value(
                    example["judgment"], jp.judgment_type, jp.judgment_scores, f"{where}.judgment"
                )

    def copy_with(self, **updates: Any) -> JudgeConfig:
        """A validated copy with top-level fields replaced; the source and warnings are kept."""
        data = self.model_dump(mode="python", exclude_unset=True)
        data.update(updates)
        new = JudgeConfig.model_validate(data)
        new._source = self._source
        new._warnings = list(self._warnings)
        return new


# --------------------------------------------------------------------------------------------- loading


def builtin_judges_dir() -> Path:
    """The folder of built-in judge configs (``configs/judges`` in a checkout, packaged in a wheel)."""
    packaged = Path(__file__).parent / "_builtin_judges"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "configs" / "judges"


def list_builtin_judges() -> list[str]:
    """Names of the built-in judges, such as ``generic/truthfulness``."""
    root = builtin_judges_dir()
    names = [p.relative_to(root).with_suffix("").as_posix() for p in root.rglob("*.yaml")]
    return sorted(names)


def _resolve_reference(ref: str | Path) -> Path:
    text = str(ref)
    if text.startswith(BUILTIN_PREFIX):
        text = text[len(BUILTIN_PREFIX) :]
        path = None
    else:
        path = Path(text).expanduser()
        if path.is_file():
            return path
        if path.is_dir():
            raise ConfigError("is a folder, not a judge config file", source=text)
    root = builtin_judges_dir()
    stem = text[:-5] if text.endswith(".yaml") else text
    candidate = root / f"{stem}.yaml"
    if candidate.is_file():
        return candidate
    known = ", ".join(list_builtin_judges()) or "(none)"
    raise ConfigError(f"no such file, and no built-in judge of that name (built-ins: {known})", source=text)


class _YamlLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` with YAML 1.2 booleans: only true/false are booleans, so labels such as
    ``Yes``, ``No``, ``on`` and ``off`` stay strings."""


_YamlLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_YamlLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def _read_yaml(path: Path) -> dict[str, Any]:
    source = str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", source=source) from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"is not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})", source=source
        ) from exc
    if not text.strip():
        raise ConfigError("is empty", source=source)
    try:
        data = yaml.load(text, Loader=_YamlLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"malformed YAML{at}: {problem}", source=source) from exc
    if data is None:
        raise ConfigError("is empty", source=source)
    if not isinstance(data, dict):
        raise ConfigError(f"must be a mapping with judge_params, got {type(data).__name__}", source=source)
    return data


def parse_override_value(text: str) -> Any:
    """Read a CLI override value the way YAML would (``2`` -> int, ``true`` -> bool, ``[a, b]`` -> list).

    Text stays exactly as typed: a value YAML reads as a string (which would lose a ``# comment``) or as
    a mapping that is really a template (``{request}``) is returned unchanged.
    """
    try:
        value = yaml.load(text, Loader=_YamlLoader)
    except yaml.YAMLError:
        return text
    if isinstance(value, str) or (isinstance(value, dict) and placeholders_in(text)):
        return text
    return value


def apply_overrides(data: dict[str, Any], overrides: Mapping[str, Any], source: str) -> dict[str, Any]:
    """Return a copy of ``data`` with dotted keys set, e.g. ``{"judge_params.response_format": "XML"}``."""
    out = copy.deepcopy(data)
    for dotted, value in overrides.items():
        parts = dotted.split(".")
        if not all(parts):
            raise ConfigError(f"override key {dotted!r} is not a dotted path", source=source)
        node: Any = out
        for depth, part in enumerate(parts[:-1]):
            child = node.get(part) if isinstance(node, dict) else None
            if child is None:
                child = {}
                node[part] = child
            elif not isinstance(child, dict):
                raise ConfigError(
                    f"override {dotted!r}: {'.'.join(parts[: depth + 1])} is not a section",
                    source=source,
                )
            node = child
        node[parts[-1]] = value
    return out


def parse_cli_overrides(args: Sequence[str]) -> dict[str, Any]:
    """Turn ``["--judge_params.response_format", "XML", "--a.b=1"]`` into ``{dotted: value}``."""
    out: dict[str, Any] = {}
    items = list(args)
    i = 0
    while i < len(items):
        arg = items[i]
        if not arg.startswith("--") or len(arg) == 2:
            raise ConfigError(f"unexpected argument {arg!r}; overrides look like --section.key VALUE")
        key = arg[2:]
        if "=" in key:
            key, value = key.split("=", 1)
            i += 1
        else:
            if i + 1 >= len(items):
                raise ConfigError(f"override --{key} has no value")
            value = items[i + 1]
            i += 2
        if "." not in key:
            raise ConfigError(f"unknown option --{key}; overrides are dotted, e.g. --judge_params.{key}")
        out[key] = parse_override_value(value)
    return out


def _allowed_keys(model: type[BaseModel], loc: Sequence[Any]) -> list[str] | None:
    """The keys a model accepts at ``loc`` (the location pydantic reports for an unknown key)."""
    current: Any = model
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return None
        field = current.model_fields.get(str(part))
        if field is None:
            return None
        current = _model_in_annotation(field.annotation)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return list(current.model_fields)
    return None


def _model_in_annotation(annotation: Any) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _model_in_annotation(arg)
        if found is not None:
            return found
    return None


def format_validation_error(exc: ValidationError, source: str) -> ConfigError:
    """One readable :class:`ConfigError` from a pydantic error: file, dotted key, value, allowed keys."""
    lines = []
    first_field = None
    for err in exc.errors():
        loc = [p for p in err["loc"]]
        dotted = ".".join(f"[{p}]" if isinstance(p, int) else str(p) for p in loc).replace(".[", "[")
        first_field = first_field or dotted
        kind = err["type"]
        if kind == "extra_forbidden":
            allowed = _allowed_keys(JudgeConfig, loc)
            hint = f"; allowed keys: {', '.join(allowed)}" if allowed else ""
            lines.append(f"{dotted}: unknown key{hint}")
        elif kind == "missing":
            lines.append(f"{dotted}: required key is missing")
        else:
            message = err["msg"]
            if message.startswith("Value error, "):
                message = message[len("Value error, ") :]
            value = err.get("input")
            shown = "" if isinstance(value, dict | list) or kind == "value_error" else f" (got {value!r})"
            lines.append(f"{dotted}: {message}{shown}" if dotted else f"{message}{shown}")
    message = lines[0] if len(lines) == 1 else "invalid config:\n  " + "\n  ".join(lines)
    error = ConfigError(message, source=source)
    error.field = first_field
    return error


def _collect_warnings(config: JudgeConfig) -> list[str]:
    warnings: list[str] = []
    jp = config.judge_params
    rubric = config.rubric_judge_params
    if rubric is not None:
        unscored = [
            c.id
            for c in rubric.criteria
            if c.judgment_type is not JudgmentType.BOOL and not c.judgment_scores
        ]
        if unscored and rubric.aggregation is not Aggregation.NONE:
            warnings.append(
                f"criteria {', '.join(unscored)} carry no score and stay out of aggregate_score "
                "(give them judgment_scores to count them)"
            )
        weighted = [c.id for c in rubric.criteria if "weight" in c.model_fields_set]
        if weighted and rubric.aggregation is not Aggregation.WEIGHTED_MEAN:
            warnings.append(
                f"weights set on {', '.join(weighted)} have no effect under aggregation "
                f"{rubric.aggregation.value} (only WEIGHTED_MEAN reads weight)"
            )
    elif (
        jp.judgment_type in (JudgmentType.INT, JudgmentType.FLOAT, JudgmentType.TEXT)
        and not jp.judgment_scores
    ):
        warnings.append(
            f"the {jp.judgment_type.value} judgment carries no score (give judgment_scores to score it)"
        )
    if jp.response_format is not ResponseFormat.RAW and not jp.use_guided_decoding:
        warnings.append(
            "use_guided_decoding is off: rows the model answers in the wrong shape get parse_error"
        )
    template = Template(jp.prompt_template)
    for index, example in enumerate(jp.examples):
        namespace = build_namespace(example)
        missing = sorted(
            {
                p.text
                for p in template.placeholders
                if not (not p.dotted and p.root in jp.template_variables)
                and lookup(namespace, p.path) is None
            }
        )
        if missing:
            warnings.append(
                f"judge_params.examples[{index}] gives no value for {', '.join(missing)}; "
                "it renders as an empty string in that example"
            )
    unused = sorted(
        set(jp.template_variables)
        - placeholders_in(jp.prompt_template)
        - placeholders_in(jp.system_instruction or "")
    )
    if unused:
        warnings.append(f"template_variables {', '.join(unused)} appear in no template")
    return warnings


def load_judge_config(
    ref: str | Path | JudgeConfig | Mapping[str, Any],
    overrides: Mapping[str, Any] | None = None,
    *,
    name: str | None = None,
) -> JudgeConfig:
    """Load and validate a judge config.

    ``ref`` is a YAML file path, a built-in name (``generic/truthfulness`` or
    ``jurist://generic/truthfulness``), a :class:`JudgeConfig`, or a mapping with the YAML's structure.
    ``overrides`` sets dotted keys before validation (``{"judge_params.response_format": "XML"}``).
    ``name`` sets the judge's name; otherwise the config's own ``name`` or the file's stem is used.

    Raises :class:`~jurist.errors.ConfigError` naming the file, key and value on any problem.
    """
    if isinstance(ref, JudgeConfig):
        source = ref.source
        data = ref.model_dump(mode="python", exclude_unset=True)
        default_name = ref.name
    elif isinstance(ref, Mapping):
        source = "<python>"
        data = copy.deepcopy(dict(ref))
        default_name = None
    else:
        path = _resolve_reference(ref)
        source = str(ref) if not Path(str(ref)).is_file() else str(path)
        data = _read_yaml(path)
        default_name = path.stem
    if overrides:
        data = apply_overrides(data, overrides, source)
    try:
        config = JudgeConfig.model_validate(data)
    except ValidationError as exc:
        raise format_validation_error(exc, source) from None
    if name is not None or config.name is None:
        try:
            config.name = name or _default_name(default_name)
        except ValidationError as exc:
            raise format_validation_error(exc, source) from None
    config._source = source
    config._warnings = _collect_warnings(config)
    for warning in config._warnings:
        logger.warning("%s: %s", source, warning)
    return config


def _default_name(stem: str | None) -> str:
    if not stem:
        return "judge"
    cleaned = re.sub(r"[^A-Za-z0-9_\-]", "_", stem)
    return cleaned if re.match(r"[A-Za-z_]", cleaned) else f"judge_{cleaned}"


def config_to_yaml(config: JudgeConfig) -> str:
    """The config as YAML, enums as their names; unset defaults left out."""
    data = config.model_dump(mode="json", exclude_defaults=True)
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def iter_text_fields(config: JudgeConfig) -> Iterable[tuple[str, str]]:
    """(dotted key, text) for every template-bearing string of a config."""
    yield "judge_params.prompt_template", config.judge_params.prompt_template
    if config.judge_params.system_instruction:
        yield "judge_params.system_instruction", config.judge_params.system_instruction
