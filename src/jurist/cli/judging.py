"""``jurist judge dataset``, ``validate``, ``render`` and ``list``: judging datasets and looking at judges."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from jurist.analysis.calibration import Calibration
from jurist.backends import check_engine_params
from jurist.cli.common import ConfigOpt, InputOpt, fail, overrides, setup_logging
from jurist.config.loading import list_builtin_judges, load_judge_config, parse_cli_overrides
from jurist.engine.core import Engine
from jurist.engine.summary import format_summary
from jurist.errors import JuristError
from jurist.io.readers import read_input
from jurist.judges.judge import Judge, missing_message
from jurist.render.templates import MissingValue


def judge_dataset(
    ctx: typer.Context,
    config: ConfigOpt,
    input: InputOpt,
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Results: .parquet, .arrow/.feather, .jsonl")
    ],
    model: Annotated[str | None, typer.Option(help="Model for every judge (HF id or local folder).")] = None,
    engine: Annotated[str | None, typer.Option(help="VLLM, NATIVE, REMOTE_VLLM or OPENAI.")] = None,
    chunk_size: Annotated[int | None, typer.Option(help="Rows per batched inference call.")] = None,
    id_column: Annotated[str | None, typer.Option(help="Input column that identifies rows.")] = None,
    carry: Annotated[bool, typer.Option(help="Copy the input columns into the output.")] = True,
    panel: Annotated[
        bool, typer.Option(help="Combine the judges as a panel (plurality, mean, agreement).")
    ] = False,
    quorum: Annotated[int | None, typer.Option(help="Fewest usable verdicts for a panel row.")] = None,
    calibration: Annotated[
        list[Path] | None,
        typer.Option(help="A calibration file from `jurist calibrate` (adds <judge>.calibrated)."),
    ] = None,
    summary_json: Annotated[
        Path | None, typer.Option(help="Also write the run summary as JSON here.")
    ] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v")] = False,
) -> None:
    """Judge every row of a dataset and write one result row per input row."""
    setup_logging(verbose)
    try:
        settings = overrides(ctx, model, engine)
        configs = [load_judge_config(ref, settings) for ref in config]
        for cfg in configs:
            check_engine_params(cfg.inference_config)
        calibrations = [Calibration.load(path) for path in calibration or []]
        with Engine(
            configs,
            chunk_size=chunk_size,
            carry_input=carry,
            id_column=id_column,
            panel=panel,
            quorum=quorum,
            calibrations=calibrations,
        ) as eng:
            summary = eng.run_file(input, output)
    except JuristError as exc:
        fail(exc)
    typer.echo(format_summary(summary.as_dict()))
    if summary_json is not None:
        summary_json.write_text(json.dumps(summary.as_dict(), indent=2) + "\n")


def validate(
    ctx: typer.Context,
    config: Annotated[str, typer.Argument(help="A YAML path or a built-in name.")],
) -> None:
    """Load a config and explain it: kind, fields, output constraint, token bound, warnings."""
    try:
        judge = Judge(load_judge_config(config, parse_cli_overrides(ctx.args)))
        check_engine_params(judge.config.inference_config)
    except JuristError as exc:
        fail(exc)
    cfg = judge.config
    kind = "rubric judge" if cfg.is_rubric else "pairwise judge" if cfg.is_pairwise else "simple judge"
    typer.echo(f"{judge.name}: {kind} from {cfg.source} -- OK")
    if cfg.description:
        typer.echo(f"  {cfg.description}")
    jp = cfg.judge_params
    guided = "on" if judge.spec.guided else "off"
    typer.echo(f"  response format {jp.response_format.value}, guided decoding {guided}")
    typer.echo(f"  reads fields: {', '.join(sorted(judge.required_fields)) or '(none)'}")
    typer.echo("  output fields:")
    for f in judge.spec.fields:
        labels = f" {list(f.labels)}" if f.labels else ""
        scores = f" scores {dict(f.scores)}" if f.scores else ""
        typer.echo(
            f"    {f.name}: {f.judgment_type.value if f.is_judgment else 'explanation'}{labels}{scores}"
        )
    if cfg.rubric_judge_params is not None:
        rubric = cfg.rubric_judge_params
        weights = ", ".join(f"{c.id}={c.weight:g}" for c in rubric.criteria)
        typer.echo(f"  aggregation {rubric.aggregation.value}; weights {weights}")
    model = cfg.inference_config.model.model_name or "(embedded default: SmolLM2-135M-Instruct)"
    typer.echo(
        f"  model {model} on {cfg.inference_config.engine.value}; max tokens per answer {judge.max_tokens}"
    )
    if judge.constraint is not None:
        typer.echo(f"  constraint (regex): {judge.constraint.regex}")
    for warning in cfg.warnings:
        typer.echo(f"  warning: {warning}")


def render(
    ctx: typer.Context,
    config: ConfigOpt,
    input: InputOpt,
    limit: Annotated[int, typer.Option(help="Rows to render.")] = 3,
) -> None:
    """Print the prompts a model would be sent for the first rows, and each judge's output schema."""
    try:
        configs = [load_judge_config(ref, parse_cli_overrides(ctx.args)) for ref in config]
        engine = Engine(configs)
        data = read_input(input)
        engine.check_columns(data)
    except JuristError as exc:
        fail(exc)
    rows = data.table.slice(0, limit).to_pylist()
    for judge in engine.judges:
        typer.echo(f"=== judge {judge.name} ({judge.config.source})")
        typer.echo("output schema: " + json.dumps(judge.spec.json_schema()))
        if judge.constraint is not None:
            typer.echo(f"constraint (regex): {judge.constraint.regex}")
        typer.echo(f"max tokens per answer: {judge.max_tokens}")
        for index, row in enumerate(rows):
            typer.echo(f"--- row {index}")
            if index in data.row_errors:
                typer.echo(f"[bad_input] {data.row_errors[index]}")
                continue
            target_error = judge.target_error(row)
            if target_error is not None:
                typer.echo(f"[target_error] {target_error} (not judged)")
                continue
            try:
                requests = judge.start(row).requests
            except MissingValue as exc:
                typer.echo(f"[missing_input] {missing_message(exc)}")
                continue
            for number, request in enumerate(requests):
                if len(requests) > 1:
                    typer.echo(f"--- order {'ab' if number == 0 else 'ba'}")
                for message in request.messages:
                    typer.echo(f"[{message.role}]\n{message.content}\n")


def list_judges() -> None:
    """List the built-in judges."""
    for name in list_builtin_judges():
        try:
            config = load_judge_config(name)
        except JuristError as exc:
            typer.echo(f"{name}: (invalid: {exc})")
            continue
        if config.is_rubric:
            kind = "rubric"
        elif config.is_pairwise:
            kind = "pairwise"
        else:
            kind = config.judge_params.judgment_type.value
        typer.echo(f"{name:34s} {kind:8s} {config.description or ''}")
