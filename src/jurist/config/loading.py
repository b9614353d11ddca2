"""Loading judge configs: built-in names, YAML files, dotted overrides, and readable errors.

:func:`load_judge_config` turns any validation failure into a :class:`~jurist.errors.ConfigError` that names
the file, the dotted key, the value and, for an unknown key, the keys that are allowed there. YAML is read
with a safe loader (YAML 1.2 booleans): a config can never run code. Legal but suspicious settings become
the config's ``warnings`` (and are logged).
"""

from __future__ import annotations

import copy
import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from jurist.config.inference import oumi_ignored
from jurist.config.models import JudgeConfig
from jurist.config.templates import placeholders_in
from jurist.config.types import Aggregation, JudgmentType
from jurist.errors import ConfigError

logger = logging.getLogger("jurist")

BUILTIN_PREFIX = "jurist://"
OUMI_PREFIX = "oumi://"
OUMI_JUDGES_DIR = "configs/projects/judges/"
OUMI_ALIASES = {
    "format-compliance": "generic/format_compliance",
    "instruction-following": "generic/instruction_following",
    "topic-adherence": "generic/topic_adherence",
    "truthfulness": "generic/truthfulness",
    "safety": "generic/safety",
    "regex-match-phone": "rule_based/regex_match_phone",
    "regex-no-error-keywords": "rule_based/regex_no_error_keywords",
}
"""Oumi's judge aliases (``oumi judge dataset -c safety``) and the built-in each names."""


def builtin_judges_dir() -> Path:
    """The folder of built-in judge configs (``configs/judges`` in a checkout, packaged in a wheel)."""
    package = Path(__file__).resolve().parents[1]
    packaged = package / "_builtin_judges"
    if packaged.is_dir():
        return packaged
    return package.parents[1] / "configs" / "judges"


def list_builtin_judges() -> list[str]:
    """Names of the built-in judges, such as ``generic/truthfulness``."""
    root = builtin_judges_dir()
    names = [p.relative_to(root).with_suffix("").as_posix() for p in root.rglob("*.yaml")]
    return sorted(names)


def _resolve_reference(ref: str | Path) -> Path:
    text = str(ref)
    if text.startswith(OUMI_PREFIX):  # oumi://configs/projects/judges/generic/safety.yaml: Oumi's own judges
        inside = text[len(OUMI_PREFIX) :]
        if not inside.startswith(OUMI_JUDGES_DIR):
            raise ConfigError(
                f"jurist's built-ins hold Oumi's judge configs only ({OUMI_PREFIX}{OUMI_JUDGES_DIR}...)",
                source=text,
            )
        text = inside[len(OUMI_JUDGES_DIR) :]
    elif text.startswith(BUILTIN_PREFIX):
        text = text[len(BUILTIN_PREFIX) :]
        path = None
    else:
        path = Path(text).expanduser()
        if path.is_file():
            return path
        if path.is_dir():
            raise ConfigError("is a folder, not a judge config file", source=text)
        text = OUMI_ALIASES.get(text, text)
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


def read_yaml(path: Path, what: str = "judge_params") -> dict[str, Any]:
    """A YAML file's top-level mapping (a :class:`ConfigError` naming the file: unreadable, not UTF-8,
    empty, malformed, or not a mapping with ``what``)."""
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
        raise ConfigError(f"must be a mapping with {what}, got {type(data).__name__}", source=source)
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


def format_validation_error(
    exc: ValidationError, source: str, model: type[BaseModel] = JudgeConfig
) -> ConfigError:
    """One readable :class:`ConfigError` from a pydantic error of ``model``: file, dotted key, value, allowed
    keys."""
    lines = []
    first_field = None
    for err in exc.errors():
        loc = [p for p in err["loc"]]
        dotted = ".".join(f"[{p}]" if isinstance(p, int) else str(p) for p in loc).replace(".[", "[")
        first_field = first_field or dotted
        kind = err["type"]
        if kind == "extra_forbidden":
            allowed = _allowed_keys(model, loc)
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
    """What is legal but suspicious in a config, one sentence each (what needs the answer formats or the
    renderer to see is checked when the judge is compiled: :mod:`jurist.judges.checks`)."""
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
    ``jurist://generic/truthfulness``; Oumi's ``oumi://configs/projects/judges/generic/truthfulness.yaml``
    and aliases such as ``truthfulness`` too), a :class:`JudgeConfig`, or a mapping with the YAML's
    structure.
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
        data = read_yaml(path)
        default_name = path.stem
    if overrides:
        data = apply_overrides(data, overrides, source)
    ignored = _oumi_warnings(data, source)
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
    config._warnings = [*ignored, *_collect_warnings(config)]
    for warning in config._warnings[len(ignored) :]:
        logger.warning("%s: %s", source, warning)
    return config


def _oumi_warnings(data: Mapping[str, Any], source: str) -> list[str]:
    """One sentence per Oumi key that jurist accepts and does not use, each logged once per load."""
    section = data.get("inference_config")
    if not isinstance(section, Mapping):
        return []
    out = []
    for key, note in oumi_ignored(section):
        out.append(f"inference_config.{key} is an Oumi setting jurist does not use, ignored ({note})")
        logger.warning("%s: %s", source, out[-1])
    return out


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
