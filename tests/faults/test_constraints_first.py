"""A constraint the run's grammar backend cannot compile is a config error naming the judge and the field,
found by ``jurist validate`` and by ``jurist judge dataset`` before any model loads (not a failure of every
row after the model has loaded)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fault_runs import judge_args, jurist, setup

from jurist import load_judge_config
from jurist.backends.grammar_check import guidance_grammar, vllm_problem
from jurist.backends.vllm.backend import structured_outputs
from jurist.config.loading import list_builtin_judges
from jurist.engine.preflight import check_constraints
from jurist.errors import ConfigError
from jurist.judges.judge import Judge
from jurist.records import Constraint

# an XML answer puts a label verbatim into the regex: a NUL in it is refused by vLLM whatever its backend
NUL_LABEL = """\
judge_params:
  prompt_template: "Q: {question}"
  response_format: XML
  judgment_type: ENUM
  judgment_scores: {"good\\0bad": 1.0, "fine": 0.5}
inference_config:
  engine: VLLM
  model: {model_name: /nonexistent/model/that/would/fail/to/load}
"""


def test_validate_names_the_judge_and_field(tmp_path: Path) -> None:
    config, _ = setup(tmp_path, 1, NUL_LABEL)
    done = jurist("validate", str(config), timeout=400)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "judge 'judge'" in done.stderr and "field 'judgment'" in done.stderr
    assert "vLLM's guidance structured-output backend cannot compile" in done.stderr
    assert "NUL character" in done.stderr and "Traceback" not in done.stderr


def test_a_run_stops_before_loading_the_model(tmp_path: Path) -> None:
    config, data = setup(tmp_path, 5, NUL_LABEL)
    out = tmp_path / "out.parquet"
    done = jurist(*judge_args(config, data, out), timeout=400)
    assert done.returncode == 2, done.stderr
    assert "field 'judgment'" in done.stderr and "NUL character" in done.stderr
    assert "/nonexistent" not in done.stderr  # the model was never looked for
    assert not out.exists() and not out.with_name(out.name + ".parts").exists()


@pytest.mark.parametrize("backend", ["xgrammar", "outlines", "auto"])
def test_every_vllm_backend_is_checked(backend: str) -> None:
    config = load_judge_config(
        {
            "name": "nul",
            **{k: v for k, v in _nul_config().items() if k != "inference_config"},
            "inference_config": {"engine": "VLLM", "engine_params": {"structured_outputs_backend": backend}},
        }
    )
    with pytest.raises(ConfigError, match=f"judge 'nul'.*vLLM's {backend} structured-output backend"):
        check_constraints([Judge(config)])


def test_native_compiles_with_outlines_core() -> None:
    native = {**_nul_config(), "inference_config": {"engine": "NATIVE"}}
    check_constraints([Judge(load_judge_config(native))])  # outlines-core takes a NUL byte


def test_every_built_in_judge_compiles_on_vllm_and_native() -> None:
    for name in list_builtin_judges():
        for engine in ("VLLM", "NATIVE"):
            judge = Judge(load_judge_config(name, {"inference_config.engine": engine}))
            check_constraints([judge])


def _nul_config() -> dict[str, object]:
    return {
        "judge_params": {
            "prompt_template": "Q: {question}",
            "response_format": "XML",
            "judgment_type": "ENUM",
            "judgment_scores": {"good\0bad": 1.0, "fine": 0.5},
        }
    }


def _constraints_of_the_built_in_judges() -> list[Constraint]:
    found: list[Constraint] = [Constraint(choices=("Yes", "No", 'a "quoted" label'))]
    for name in list_builtin_judges():
        spec = Judge(load_judge_config(name)).spec
        if spec.guided:
            found += [c for c in (spec.constraint(["regex"]), spec.constraint(["json_schema"])) if c]
    return found


def test_the_guidance_grammar_is_the_one_vllm_builds() -> None:
    """jurist builds the guidance grammar without vLLM's module (which loads torch first); for every
    built-in judge's regex and JSON schema, and a choice, it is the grammar vLLM itself serializes."""
    from vllm.v1.structured_output.backend_guidance import serialize_guidance_grammar
    from vllm.v1.structured_output.request import get_structured_output_key

    constraints = _constraints_of_the_built_in_judges()
    kinds = {("regex" if c.regex else "choice" if c.choices else "json") for c in constraints}
    assert kinds == {"regex", "choice", "json"} and len(constraints) > 20
    for constraint in constraints:
        key = get_structured_output_key(structured_outputs(constraint))
        assert guidance_grammar(constraint) == serialize_guidance_grammar(*key)


def test_guidance_refuses_what_vllm_s_guidance_refuses() -> None:
    from vllm.sampling_params import SamplingParams
    from vllm.v1.structured_output.backend_guidance import validate_guidance_grammar

    bad = Constraint(json_schema={"type": "object", "properties": {"a": {"type": "strin"}}})
    with pytest.raises(Exception, match="Invalid type: strin"):  # vLLM's own check
        validate_guidance_grammar(SamplingParams(structured_outputs=structured_outputs(bad)))
    assert "Invalid type: strin" in (vllm_problem(bad, "guidance") or "")
    assert vllm_problem(Constraint(regex="(Yes|No)"), "guidance") is None
