"""``jurist judge dataset``, ``validate``, ``render`` and ``list``: judging datasets and looking at judges."""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer

from jurist.analysis.calibration import Calibration
from jurist.analysis.filtering import FilterRules, filter_file
from jurist.backends import check_engine_params
from jurist.cascade.launch import stage_configs
from jurist.cli import batch as batch_cli
from jurist.cli.cascade import (
    AbstainOpt,
    CascadeOpt,
    DeltaOpt,
    LabelsOpt,
    OptionalConfigOpt,
    TargetOpt,
    ThresholdOpt,
    cascade_from_cli,
    confidence_line,
    start_cascade,
)
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
from jurist.config.loading import OUMI_ALIASES, list_builtin_judges, load_judge_config, parse_cli_overrides
from jurist.config.templates import MissingValue
from jurist.conversation.dataset import conversation_source
from jurist.engine.core import Engine
from jurist.engine.interrupt import (
    EXIT_INTERRUPTED,
    Stopped,
    parse_duration,
    stop_on_signals,
    stopped_message,
)
from jurist.engine.launch import Placement, start
from jurist.engine.preflight import check_constraints, worker_death
from jurist.engine.run import Run
from jurist.engine.spec import RunOptions, RunSpec, Selection
from jurist.errors import JuristError
from jurist.io.lock import OutputLock
from jurist.io.readers import read_input
from jurist.io.results import ResultTable
from jurist.judges.judge import Judge, missing_message
from jurist.judges.outputs import JudgeOutput
from jurist.models.resolve import prepare_models

logger = logging.getLogger("jurist")


def judge_dataset(
    ctx: typer.Context,
    input: Annotated[
        str,
        typer.Option(
            "--input",
            "-i",
            help="Dataset: .jsonl (also .gz/.zst/.bz2), .json, .csv/.tsv, .parquet, .arrow, a Hugging Face "
            "dataset folder, or - for JSONL on stdin.",
        ),
    ],
    config: OptionalConfigOpt = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="Results: .parquet, .arrow/.feather, .jsonl (none: print them as a table)"
        ),
    ] = None,
    model: Annotated[str | None, typer.Option(help="Model for every judge (HF id or local folder).")] = None,
    engine: Annotated[
        str | None,
        typer.Option(help="VLLM, NATIVE, REMOTE_VLLM or OPENAI (or an Oumi engine name: ANTHROPIC, ...)."),
    ] = None,
    raw: Annotated[
        bool, typer.Option("--raw", help="Without --output: show each judge's raw answer in the table too.")
    ] = False,
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
    repair: Annotated[
        bool,
        typer.Option(help="On resume, judge again only the rows of damaged committed parts (see the error)."),
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
    data_parallel: Annotated[
        int | None,
        typer.Option(
            min=1, help="Engine processes, one per GPU (or share of the cores); with --ray, actors."
        ),
    ] = None,
    ray: Annotated[
        str | None,
        typer.Option(
            help="Run on Ray: 'local' starts a local instance, 'auto' joins this machine's cluster, or a "
            "cluster address (needs the ray extra)."
        ),
    ] = None,
    cascade: CascadeOpt = None,
    threshold: ThresholdOpt = None,
    abstain: AbstainOpt = False,
    target_agreement: TargetOpt = None,
    delta: DeltaOpt = None,
    calibration_labels: LabelsOpt = None,
    on_worker_death: Annotated[
        str,
        typer.Option(
            help="With --data-parallel: 'stop' the run when an engine process dies (committed chunks kept), "
            "or 'continue' with the engines left."
        ),
    ] = "stop",
    max_runtime: Annotated[
        str | None,
        typer.Option(
            help="Stop after this long (3h30m, 90m, 45s), keeping the committed chunks, and exit 124; a "
            "rerun resumes. Set it under a scheduler's time limit."
        ),
    ] = None,
    emit_batch: Annotated[
        Path | None,
        typer.Option(help="Write the requests as an OpenAI batch file (.jsonl) instead of judging."),
    ] = None,
    from_batch_results: Annotated[
        Path | None, typer.Option(help="Answer from an OpenAI batch output file instead of a model.")
    ] = None,
) -> None:
    """Judge every row of a dataset and write one result row per input row.

    Results are committed per chunk: rerun the same command to resume after a crash. Exit codes: 0 done; 1
    an unexpected error; 2 a bad config, input, output path or option (before any model loads); 3 judged, but
    no output is ok, or more than --max-failure-rate are not; 130 interrupted, 143 SIGTERM, 129 SIGHUP, 124
    --max-runtime reached (each keeps the committed chunks: rerun to resume). Without --output the results
    are printed as a table (as `oumi judge dataset` does) and not kept.
    """
    scratch = None
    if output is None:
        if keep or kept or retry_failed:
            fail(JuristError("--keep, --kept and --retry-failed need --output"))
        scratch = Path(tempfile.mkdtemp(prefix="jurist-"))
        output = scratch / "results.parquet"
    lock = OutputLock(output)
    try:
        runtime = parse_duration(max_runtime) if max_runtime is not None else None
        on_death = worker_death(on_worker_death)
        settings = overrides(ctx, model, engine)
        if not config and not cascade:
            raise JuristError("give a judge: --config (or --cascade per stage)")
        refs = config or []
        if cascade:
            stages, cascading = cascade_from_cli(
                cascade, threshold, abstain, target_agreement, delta, calibration_labels
            )
            configs = stage_configs(stages, settings)
        else:
            configs = [load_judge_config(r, settings) for r in refs]
        for cfg in configs:
            check_engine_params(cfg.inference_config)
        calibrations = [Calibration.load(path) for path in calibration or []]
        data: object = input
        if criteria is not None:  # conversations x criteria: one row per pair
            data = conversation_source(input, criteria, input_format=input_format, id_column=id_column)
        spec = RunSpec(
            tuple(configs),
            Selection(data, input_format, limit, sample, seed),
            RunOptions(
                chunk_size=chunk_size,
                carry_input=carry,
                id_column=id_column if criteria is None else None,
                panel=panel,
                quorum=quorum,
                calibrations=tuple(calibrations),
            ),
        )
        if emit_batch is not None:  # the requests as a batch file (jurist.batch.emit), nothing judged
            batch_cli.emit_command(spec, emit_batch, scratch)
        if from_batch_results is None:  # GGUF files converted now, their progress on the terminal
            prepare_models(c.inference_config.model.model_name for c in configs)
        lock.acquire()  # one writer per output, from here until the run ends: before any model loads
        run_type = Run
        if cascade:  # a cascade calibrates its stages here, so its constraints are checked first
            check_constraints([Judge(c) for c in configs])
            local_only = {"--data-parallel": data_parallel, "--ray": ray, "--retry-failed": retry_failed}
            runner, batches, run_type = start_cascade(spec, cascading, output, placement=local_only)
        else:
            runner, batches = start(spec, Placement(data_parallel, ray, retry_failed, on_death))
            if from_batch_results is not None:  # answers from a batch results file (jurist.batch.results)
                runner = Engine.from_spec(spec, batch_cli.results_backend(from_batch_results))
    except JuristError as exc:
        lock.release()
        fail(exc)
    log = output.with_name(output.name + ".log") if output.parent.is_dir() and scratch is None else None
    summary, problem, code = None, None, EXIT_OK
    with run_console(log, verbose=verbose) as console:
        try:
            progress = None if quiet else console.err
            run = run_type(
                spec, runner, output, overwrite=overwrite, progress=progress, repair=repair, lock=lock
            )
            with stop_on_signals(runtime, label=max_runtime):  # SIGTERM, SIGHUP, --max-runtime: as Ctrl-C
                summary = run.execute(batches)
        except JuristError as exc:
            problem, code = f"error: {exc}", EXIT_USAGE
        except Stopped as exc:
            problem, code = stopped_message(exc.reason, None if scratch else output), exc.exit_code
        except KeyboardInterrupt:
            problem, code = stopped_message("interrupted", None if scratch else output), EXIT_INTERRUPTED
        except Exception as exc:
            logger.exception("the run failed")
            where = f" (details in {log})" if log is not None else ""
            problem, code = f"error: {type(exc).__name__}: {exc}{where}", EXIT_CRASH
        finally:
            runner.close()
            lock.release()
    if summary is not None and scratch is not None:
        shown = [j.name for j in runner.judges] + (["cascade"] if cascade else [])
        typer.echo(results_table(output, shown, raw=raw))
        summary.output = "the table above (no --output: not saved)"
    if scratch is not None:
        shutil.rmtree(scratch, ignore_errors=True)
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
        check_constraints([judge])
    except JuristError as exc:
        fail(exc)
    cfg = judge.config
    typer.echo(f"{judge.name}: {judge.kind.label} judge from {cfg.source} -- OK")
    if cfg.description:
        typer.echo(f"  {cfg.description}")
    typer.echo(f"  reads fields: {', '.join(sorted(judge.required_fields)) or '(none)'}")
    for line in judge.kind.describe():
        typer.echo(f"  {line}")
    typer.echo(f"  {confidence_line(judge)}")
    model = cfg.inference_config.model.model_name or "(embedded default: SmolLM2-135M-Instruct)"
    typer.echo(f"  model {model} on {cfg.inference_config.engine.value}")
    for warning in judge.warnings:
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
    rows = data.rows(limit)
    for judge in engine.judges:
        typer.echo(f"=== judge {judge.name} ({judge.config.source}): {judge.kind.label}")
        for line in judge.kind.describe():
            typer.echo(line)
        if not judge.needs_model:
            _render_rule(judge, rows, data.row_errors)
            continue
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
                    pairwise = judge.kind.label == "pairwise"
                    typer.echo(
                        f"--- order {('ab', 'ba')[number]}" if pairwise else f"--- request {number + 1}"
                    )
                for message in request.messages:
                    typer.echo(f"[{message.role}]\n{message.content}\n")


def list_judges() -> None:
    """List the built-in judges."""
    for name in list_builtin_judges():
        try:
            judge = Judge(load_judge_config(name))
        except JuristError as exc:
            typer.echo(f"{name}: (invalid: {exc})")
            continue
        typer.echo(f"{name:34s} {judge.kind.label:8s} {judge.config.description or ''}")
    aliases = ", ".join(f"{alias} ({target})" for alias, target in OUMI_ALIASES.items())
    typer.echo(f"Oumi's aliases: {aliases}")


def _render_rule(judge: Judge, rows: list[Mapping[str, Any]], row_errors: Mapping[int, str]) -> None:
    """A rule judge sends no prompt: show each row's verdict."""
    for index, row in enumerate(rows):
        typer.echo(f"--- row {index}")
        if index in row_errors:
            typer.echo(f"[bad_input] {row_errors[index]}")
            continue
        try:
            step = judge.start(row)
        except MissingValue as exc:
            typer.echo(f"[missing_input] {missing_message(exc)}")
            continue
        result = step.finish(())
        typer.echo(result.raw if isinstance(result, JudgeOutput) else "")


def results_table(path: Path, judges: list[str], *, raw: bool = False) -> str:
    """The results as text, one block per judge, as `oumi judge dataset` prints them without --output: the
    overall score (the mean of the rows' scores, when every row has one), then per row its judgment, score,
    explanation and status (and the raw answer with ``raw``)."""
    results = ResultTable.open(path)
    ids = [str(v) for v in results.values("row_id")]
    blocks = []
    for name in judges:
        judge = results.judge(name)
        values = {
            suffix: results.values(column) if (column := judge.get(suffix)) else [None] * results.num_rows
            for suffix in ("judgment", "score", "explanation", "status", "raw")
        }
        scores = values["score"]
        overall = (
            f"overall score {sum(scores) / len(scores):.2%}"
            if scores and all(v is not None for v in scores)
            else "overall score: n/a (not every row has a score)"
        )
        headers = ["row", "judgment", "score", "explanation", "status", *(["raw"] if raw else [])]
        cells = [ids, *(values[k] for k in ("judgment", "score", "explanation", "status"))]
        if raw:
            cells.append(values["raw"])
        lines = [[_cell(v) for v in row] for row in zip(*cells, strict=True)]
        widths = [max([len(h), *(len(line[i]) for line in lines)]) for i, h in enumerate(headers)]
        rule = "  ".join("-" * w for w in widths)
        header = "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()
        text = [f"== {name}: {overall}", header]
        text.append(rule)
        text += ["  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in lines]
        blocks.append("\n".join(text))
    return "\n\n".join(blocks)


def _cell(value: Any, limit: int = 80) -> str:
    text = "N/A" if value is None else str(round(value, 4)) if isinstance(value, float) else str(value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
