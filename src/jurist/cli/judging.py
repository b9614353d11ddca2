"""``jurist judge dataset``, ``validate``, ``render`` and ``list``: judging datasets and looking at judges."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Annotated

import typer

from jurist.analysis.calibration import Calibration
from jurist.analysis.filtering import FilterRules, filter_file
from jurist.backends import check_engine_params
from jurist.cli.common import (
    EXIT_CRASH,
    EXIT_OK,
    EXIT_USAGE,
    ConfigOpt,
    InputOpt,
    fail,
    failure_verdict,
    overrides,
    run_report,
)
from jurist.cli.console import run_console
from jurist.config.loading import list_builtin_judges, load_judge_config, parse_cli_overrides
from jurist.conversation.dataset import conversation_source
from jurist.engine.core import Engine
from jurist.errors import JuristError
from jurist.io.readers import read_input
from jurist.judges.judge import Judge, missing_message
from jurist.render.templates import MissingValue

logger = logging.getLogger("jurist")


def judge_dataset(
    ctx: typer.Context,
    config: ConfigOpt,
    input: Annotated[
        str,
        typer.Option(
            "--input",
            "-i",
            help="Dataset: .jsonl (also .gz/.zst/.bz2), .json, .csv/.tsv, .parquet, .arrow, a Hugging Face "
            "dataset folder, or - for JSONL on stdin.",
        ),
    ],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Results: .parquet, .arrow/.feather, .jsonl")
    ],
    model: Annotated[str | None, typer.Option(help="Model for every judge (HF id or local folder).")] = None,
    engine: Annotated[str | None, typer.Option(help="VLLM, NATIVE, REMOTE_VLLM or OPENAI.")] = None,
    input_format: Annotated[
        str | None, typer.Option(help="The input's format, when its name does not say.")
    ] = None,
    criteria: Annotated[
        Path | None,
        typer.Option(
            help="Criteria (one per line, or a JSON/YAML list): judge each conversation of the input's "
            "messages column against each, one output row per pair (judge conversation/criterion)."
        ),
    ] = None,
    limit: Annotated[int | None, typer.Option(help="Judge only the first N rows.")] = None,
    sample: Annotated[int | None, typer.Option(help="Judge a uniform random sample of N rows.")] = None,
    seed: Annotated[int, typer.Option(help="Seed of --sample.")] = 0,
    chunk_size: Annotated[
        int | None, typer.Option(help="Rows per chunk (planned, written and resumed together).")
    ] = None,
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
    overwrite: Annotated[
        bool, typer.Option(help="Replace an output that holds another run's results.")
    ] = False,
    retry_failed: Annotated[
        bool, typer.Option(help="Re-judge only the rows whose status is not ok, in a finished output.")
    ] = False,
    max_failure_rate: Annotated[
        float,
        typer.Option(
            help="Exit 3 when more than this share of outputs is not ok (default: only when none is)."
        ),
    ] = 1.0,
    summary_json: Annotated[
        Path | None, typer.Option(help="Also write the run summary as JSON here.")
    ] = None,
    keep: Annotated[
        list[str] | None,
        typer.Option(help="Also write the rows that pass this predicate (and the gates of `jurist filter`)."),
    ] = None,
    kept: Annotated[
        Path | None, typer.Option(help="Where --keep writes (default <output>.kept.<ext>).")
    ] = None,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress line (the summary stays).")
    ] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Libraries' logs on the terminal too.")
    ] = False,
) -> None:
    """Judge every row of a dataset and write one result row per input row.

    Results are committed per chunk: rerun the same command to resume after a crash. Exit codes: 0 done; 1
    an unexpected error; 2 a bad config, input, output path or option (before any model loads); 3 judged, but
    no output is ok, or more than --max-failure-rate are not; 130 interrupted (rerun to resume).
    """
    try:
        settings = overrides(ctx, model, engine)
        configs = [load_judge_config(ref, settings) for ref in config]
        for cfg in configs:
            check_engine_params(cfg.inference_config)
        calibrations = [Calibration.load(path) for path in calibration or []]
        data: object = input
        if criteria is not None:  # conversations x criteria: one row per pair
            data = conversation_source(input, criteria, input_format=input_format, id_column=id_column)
        runner = Engine(
            configs,
            chunk_size=chunk_size,
            carry_input=carry,
            id_column=id_column if criteria is None else None,
            panel=panel,
            quorum=quorum,
            calibrations=calibrations,
        )
    except JuristError as exc:
        fail(exc)
    log = output.with_name(output.name + ".log") if output.parent.is_dir() else None
    summary, problem, code = None, None, EXIT_OK
    with run_console(log, verbose=verbose) as console:
        try:
            summary = runner.run_file(
                data,
                output,
                input_format=input_format,
                limit=limit,
                sample=sample,
                seed=seed,
                overwrite=overwrite,
                retry_failed=retry_failed,
                progress=None if quiet else console.err,
            )
        except JuristError as exc:
            problem, code = f"error: {exc}", EXIT_USAGE
        except KeyboardInterrupt:
            problem, code = (
                "interrupted: the chunks done so far are kept; rerun the same command to resume",
                130,
            )
        except Exception as exc:
            logger.exception("the run failed")
            where = f" (details in {log})" if log is not None else ""
            problem, code = f"error: {type(exc).__name__}: {exc}{where}", EXIT_CRASH
        finally:
            runner.close()
    if summary is not None:
        typer.echo(run_report(summary, log))
        if summary_json is not None:
            summary_json.write_text(json.dumps(summary.as_dict(), indent=2) + "\n")
        problem, code = failure_verdict(summary, max_failure_rate)
        if keep and code == EXIT_OK:
            target = kept or output.with_name(f"{output.stem}.kept{output.suffix}")
            try:
                typer.echo(
                    "\n".join(
                        [f"{target}:", *filter_file(output, target, FilterRules(where=tuple(keep))).lines()]
                    )
                )
            except JuristError as exc:
                problem, code = f"error: {exc}", EXIT_USAGE
    if problem:
        typer.echo(problem, err=True)
    raise typer.Exit(code)


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
