"""The generated reference pages are current, and the config reference names exactly the keys the models
accept: every field of every config section, each engine's settings, and Oumi's keys read under other
names (each of those checked by loading a config that uses it)."""

from __future__ import annotations

import importlib.util
import re
import sys
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from jurist.backends.hf.params import NativeEngineParams
from jurist.backends.parallel.pool import DATA_PARALLEL_KEY
from jurist.backends.vllm.params import VLLMEngineParams
from jurist.config.inference import InferenceConfig
from jurist.config.models import JudgeConfig
from jurist.config.rules import RULE_TYPES

ROOT = Path(__file__).resolve().parents[2]
CONFIG_PAGE = ROOT / "docs" / "reference" / "config.md"
CLI_PAGE = ROOT / "docs" / "reference" / "cli.md"


def _generator() -> Any:
    spec = importlib.util.spec_from_file_location("docs_reference", ROOT / "scripts" / "docs_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _models_in(annotation: Any) -> Iterator[type[BaseModel]]:
    """The config sections a field holds (directly, optionally, or as a list)."""
    stack = [annotation]
    while stack:
        item = stack.pop()
        if isinstance(item, type) and issubclass(item, BaseModel):
            yield item
        elif typing.get_origin(item) in (typing.Union, types.UnionType, list):
            stack.extend(typing.get_args(item))


def _fields(model: type[BaseModel], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for name, info in model.model_fields.items():
        if info.exclude:  # set by jurist (inference_config.use), refused in a config
            continue
        yield f"{prefix}{name}", info
        for sub in _models_in(info.annotation):
            yield from _fields(sub, f"{prefix}{name}.")


def _accepted_fields() -> dict[str, Any]:
    fields = dict(_fields(JudgeConfig))
    fields.update(_fields(VLLMEngineParams, "inference_config.engine_params."))
    fields.update(_fields(NativeEngineParams, "inference_config.engine_params."))
    for model in RULE_TYPES.values():
        fields.update(_fields(model, "rule_judge_params.rule_config."))
    return fields


def _reference_keys() -> tuple[set[str], set[str]]:
    """(keys of the field tables, keys of the Oumi table) as the committed page lists them."""
    text = CONFIG_PAGE.read_text(encoding="utf-8")
    oumi_at = text.index("## Oumi's keys under other names")
    pattern = re.compile(r"^\| `([^`]+)` \|", flags=re.MULTILINE)
    fields = {m[1].replace("[]", "") for m in pattern.finditer(text[:oumi_at])}
    oumi = {m[1] for m in pattern.finditer(text[oumi_at:])}
    return fields, oumi


def test_generated_pages_are_current() -> None:
    stale = _generator().stale()
    assert not stale, f"stale: {[str(p) for p in stale]}; run python scripts/docs_reference.py"


def test_config_reference_lists_every_key_the_models_accept() -> None:
    listed, _ = _reference_keys()
    expected = set(_accepted_fields()) | {f"inference_config.engine_params.{DATA_PARALLEL_KEY}"}
    assert listed - expected == set(), "the reference lists keys no model has"
    assert expected - listed == set(), "the reference misses keys the models accept"


def test_every_key_is_described() -> None:
    """A new config field needs a description (a docstring under it, or Field(description=...)), which
    the reference shows."""
    missing = [key for key, info in _accepted_fields().items() if not (info.description or "").strip()]
    assert missing == []


def _nested(dotted: str, value: Any) -> dict[str, Any]:
    data: dict[str, Any] = {}
    node = data
    *parents, last = dotted.split(".")
    for part in parents:
        node = node.setdefault(part, {})
    node[last] = value
    return data


OUMI_VALUES = {
    "model_revision": "main",
    "api_key_env_varname": "MY_KEY",
    "connection_timeout": 5.0,
    "request_timeout": 5.0,
}


def test_the_oumi_keys_listed_are_accepted_and_others_refused() -> None:
    _, oumi = _reference_keys()
    assert {"inference_config.model.model_revision", "inference_config.generation.num_beams"} <= oumi
    for key in sorted(oumi):
        inner = key.removeprefix("inference_config.")
        last = inner.rsplit(".", 1)[-1]
        value = True if last == "load_pretrained_weights" else OUMI_VALUES.get(last)
        config = InferenceConfig.model_validate(_nested(inner, value))  # accepted, or this raises
        dumped = config.model_dump()
        assert last not in (dumped.get(inner.split(".")[0]) or {}) if "." in inner else last not in dumped
    for section in ("model", "generation", "remote_params", ""):
        bogus = f"{section}.not_an_oumi_key" if section else "not_an_oumi_key"
        with pytest.raises(ValueError, match="not_an_oumi_key"):
            InferenceConfig.model_validate(_nested(bogus, None))


def test_cli_reference_lists_every_command_and_option() -> None:
    from typer.main import get_command

    from jurist.cli import app

    text = CLI_PAGE.read_text(encoding="utf-8")
    root: Any = get_command(app)
    stack = [(["jurist"], root)]
    while stack:
        path, command = stack.pop()
        if getattr(command, "commands", None):
            stack.extend(([*path, name], sub) for name, sub in command.commands.items())
            continue
        section = text.split(f"## {' '.join(path)}\n", 1)[1].split("\n## ", 1)[0]
        for param in command.params:
            if param.param_type_name == "option" and param.name != "help":
                assert f"`{param.opts[0]}`" in section, f"{' '.join(path)} {param.opts[0]}"
