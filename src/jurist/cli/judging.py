"""``jurist judge dataset``, ``validate``, ``render`` and ``list``: judging datasets and looking at judges."""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

import typer

from jurist.analysis.filtering import FilterRules, filter_file
from jurist.backends import check_engine_params
from jurist.cli.cascade import (
    CALIBRATION,
    AbstainOpt,
    CascadeOpt,
    DeltaOpt,
    OptionalConfigOpt,
    TargetOpt,
    ThresholdOpt,
    cascade_from_cli,
    confidence_line,
)
from jurist.cli.common import (
    EXIT_BAD_SHARDS,
    EXIT_OK,
    EXIT_USAGE,
    ConfigOpt,
    InputOpt,
    fail,
    failure_verdict,
    overrides,
    reasoning_verdict,
    run_report,
)
from jurist.cli.harness import Ended, Guard
from jurist.cli.options import (
    BadShardOpt,
    CalibrationOpt,
    CarryOpt,
    ChunkSizeOpt,
    CriteriaOpt,
    DataParallelOpt,
    DatasetOpt,
    EmitBatchOpt,
    EngineOpt,
    FromBatchResultsOpt,
    IdColumnOpt,
    InputFormatOpt,
    KeepOpt,
    KeptOpt,
    LimitOpt,
    MaxFailureRateOpt,
    MaxReasoningCutRateOpt,
    MaxRuntimeOpt,
    ModelOpt,
    OverwriteOpt,
    PanelOpt,
    QuietOpt,
    QuorumOpt,
    RawOpt,
    RayOpt,
    RepairOpt,
    ResultsOpt,
    RetryFailedOpt,
    SampleOpt,
    SeedOpt,
    SummaryJsonOpt,
    UnitMbOpt,
    VerboseOpt,
    WorkerDeathOpt,
    label_options,
)
from jurist.config.cascade import CascadeSettings, stage_configs
from jurist.config.loading import OUMI_ALIASES, list_builtin_judges, load_judge_config, parse_cli_overrides
from jurist.conversation.dataset import conversation_source
from jurist.engine.core import Engine, check_capabilities
from jurist.engine.corpus import is_dataset_output, merge
from jurist.engine.interrupt import parse_duration
from jurist.engine.plan import plan_chunk
from jurist.engine.preflight import check_constraints
from jurist.engine.run_text import results_table
from jurist.engine.spec import RunOptions, RunSpec, Selection
from jurist.engine.summary import RunSummary
from jurist.errors import JuristError
from jurist.io.dataset import MANIFEST, ResultsDataset, dataset_metadata, is_results_dataset
from jurist.io.location import Place, is_url
from jurist.io.lock import OutputLock
from jurist.io.readers import read_input
from jurist.judges.judge import Judge
from jurist.judges.outputs import JudgeOutput
from jurist.labels.source import LabelSource
from jurist.launch import Launch, Placement, emit, launch
from jurist.models.resolve import prepare_models
from jurist.records import ALL_CONSTRAINT_KINDS
from jurist.stats.calibration import Calibration

logger = logging.getLogger("jurist")
T = TypeVar("T", bound=str)


@label_options(CALIBRATION)
def judge_dataset(
    ctx: typer.Context,
    input: DatasetOpt,
    config: OptionalConfigOpt = None,
    output: ResultsOpt = None,
    model: ModelOpt = None,
    engine: EngineOpt = None,
    raw: RawOpt = False,
    input_format: InputFormatOpt = None,
    criteria: CriteriaOpt = None,
    limit: LimitOpt = None,
    sample: SampleOpt = None,
    seed: SeedOpt = 0,
    chunk_size: ChunkSizeOpt = None,
    id_column: IdColumnOpt = None,
    carry: CarryOpt = True,
    panel: PanelOpt = False,
    quorum: QuorumOpt = None,
    calibration: CalibrationOpt = None,
    overwrite: OverwriteOpt = False,
    retry_failed: RetryFailedOpt = False,
    repair: RepairOpt = False,
    max_failure_rate: MaxFailureRateOpt = 1.0,
    max_reasoning_cut_rate: MaxReasoningCutRateOpt = 1.0,
    summary_json: SummaryJsonOpt = None,
    keep: KeepOpt = None,
    kept: KeptOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    data_parallel: DataParallelOpt = None,
    ray: RayOpt = None,
    cascade: CascadeOpt = None,
    threshold: ThresholdOpt = None,
    abstain: AbstainOpt = False,
    target_agreement: TargetOpt = None,
    delta: DeltaOpt = None,
    calibration_labels: LabelSource | None = None,
    on_worker_death: WorkerDeathOpt = "stop",
    max_runtime: MaxRuntimeOpt = None,
    emit_batch: EmitBatchOpt = None,
    from_batch_results: FromBatchResultsOpt = None,
    on_bad_shard: BadShardOpt = "fail",
    unit_mb: UnitMbOpt = None,
) -> None:
    """Judge every row of a dataset and write one result row per input row.

    Results are committed per chunk (over a dataset of files, per unit: a shard or a slice of one): rerun
    the same command to resume after a crash. Exit codes: 0 done; 1 an unexpected error; 2 a bad config,
    input, output path or option (before any model loads); 3 judged, but no output is ok, or more than
    --max-failure-rate are not; 4 some shards of a dataset could not be read (named; the others judged);
    130 interrupted, 143 SIGTERM, 129 SIGHUP, 124 --max-runtime reached (each keeps what was committed:
    rerun to resume). Without --output the results are printed as a table (as `oumi judge dataset` does)
    and not kept.
    """
    if output is None and (keep or kept or retry_failed):
        fail(JuristError("--keep, --kept and --retry-failed need --output"))
    scratch = Path(tempfile.mkdtemp(prefix="jurist-")) if output is None else None
    target = output or str(Path(str(scratch)) / "results.parquet")
    lock = None if is_dataset_output(target) else OutputLock(Path(target))  # a dataset: its run's lease
    try:
        runtime = parse_duration(max_runtime) if max_runtime is not None else None
        placement = Placement(
            data_parallel,
            ray,
            choice("--on-worker-death", on_worker_death, ("stop", "continue")),
            retry_failed,
            repair,
            choice("--on-bad-shard", on_bad_shard, ("fail", "skip")),
        )
        options = RunOptions(chunk_size, carry, id_column if criteria is None else None, panel, quorum)
        options = replace(options, calibrations=tuple(Calibration.load(p) for p in calibration or []))
        if unit_mb is not None:
            options = replace(options, unit_bytes=unit_mb * 2**20)
        cascading = cascade_from_cli(cascade, threshold, abstain, target_agreement, delta, calibration_labels)
        data: Any = input[0] if len(input) == 1 else tuple(input)
        if criteria is not None:
            if len(input) != 1:
                raise JuristError("--criteria reads one file of conversations: give one --input")
            data = conversations(input[0], criteria, input_format, id_column)
        rows = Selection(data, input_format, limit, sample, seed)
        settings = overrides(ctx, model, engine)
        spec = dataset_spec(settings, config, cascading, rows, options, from_batch_results)
        if emit_batch is not None:  # the requests as a batch file (jurist.openai_batch.emit), nothing judged
            emit_and_exit(spec, emit_batch, placement, scratch)
        launched = start_dataset(spec, placement, target, lock)
    except JuristError as exc:
        if lock is not None:
            lock.release()
        fail(exc)
    guard = Guard(target, lock, verbose=verbose, quiet=quiet, kept=scratch is None)
    ended = guard.run(launched, overwrite=overwrite, runtime=runtime, runtime_label=max_runtime)
    shown = [*launched.spec.names, *(["cascade"] if cascade else [])]
    gates = (max_failure_rate, max_reasoning_cut_rate)
    skip_bad = on_bad_shard == "skip"
    code = finish_dataset(ended, target, scratch, shown, raw, summary_json, gates, keep, kept, skip_bad)
    raise typer.Exit(code)


def start_dataset(spec: RunSpec, placement: Placement, output: str, lock: OutputLock | None) -> Launch:
    """Convert GGUF files (their progress on the terminal), take the output's lock (one writer per output,
    from here until the run ends, before any model loads; a results dataset's run takes its lease itself)
    and launch the run; calibration's notes go to stderr."""
    if not spec.answers:
        prepare_models(c.inference_config.model.model_name for c in spec.judges)
    if lock is not None:
        lock.acquire()
    launched = launch(spec, placement, output=output)
    for note in launched.notes:
        typer.echo(note, err=True)
    return launched


def conversations(data: str, criteria: Path, input_format: str | None, id_column: str | None) -> Any:
    """``--criteria``: each conversation of the input against each criterion, one row per pair."""
    return conversation_source(data, criteria, input_format=input_format, id_column=id_column)


def dataset_spec(
    settings: dict[str, Any],
    refs: list[str] | None,
    cascading: tuple[list[Any], CascadeSettings] | None,
    rows: Selection,
    options: RunOptions,
    answers: list[Path] | None,
) -> RunSpec:
    """The spec of ``judge dataset``: the judges (``--config``, or the stages of ``--cascade``) with their
    overrides, the rows, the options, the cascade's settings, and the batch results files answered from."""
    if not refs and cascading is None:
        raise JuristError("give a judge: --config (or --cascade per stage)")
    if cascading is not None:
        configs = stage_configs(cascading[0], settings)
    else:
        configs = [load_judge_config(r, settings) for r in refs or []]
    cascade = cascading[1] if cascading is not None else None
    return RunSpec(tuple(configs), rows, options, cascade=cascade, answers=tuple(answers or ()))


def emit_and_exit(spec: RunSpec, path: Path, placement: Placement, scratch: Path | None) -> NoReturn:
    """``--emit-batch``: write the requests of a run of ``spec`` as a batch input file, say what was written,
    and exit (0, or 2 for a bad input, path or option)."""
    if scratch is not None:
        shutil.rmtree(scratch, ignore_errors=True)
    try:
        emitted = emit(spec, path, placement)
    except (JuristError, OSError) as exc:
        fail(exc)
    typer.echo(emitted.text())
    raise typer.Exit(EXIT_OK)


def choice(option: str, value: str, choices: tuple[T, ...]) -> T:
    """``value`` of ``option`` when it is one of ``choices``, else a :class:`JuristError` naming them."""
    for allowed in choices:
        if value == allowed:
            return allowed
    raise JuristError(f"{option}: {' or '.join(repr(c) for c in choices)}, not {value!r}")


def finish_dataset(
    ended: Ended[RunSummary],
    output: str,
    scratch: Path | None,
    shown: list[str],
    raw: bool,
    summary_json: Path | None,
    gates: tuple[float, float],
    keep: list[str] | None,
    kept: Path | None,
    skip_bad: bool = False,
) -> int:
    """After ``judge dataset``'s run: the results table (without --output), the summary, ``--summary-json``,
    the gates (``--max-failure-rate``, ``--max-reasoning-cut-rate``), the shards that could not be read
    (exit 4; a warning with ``skip_bad``) and ``--keep``; returns the exit
    code."""
    summary, problem, code = ended.result, ended.problem, ended.code
    if summary is not None and scratch is not None:
        typer.echo(results_table(output, shown, raw=raw))
        summary.output = "the table above (no --output: not saved)"
    if scratch is not None:
        shutil.rmtree(scratch, ignore_errors=True)
    if summary is not None:
        typer.echo(run_report(summary, ended.log))
        if summary_json is not None:
            summary_json.write_text(json.dumps(summary.as_dict(), indent=2) + "\n")
        problem, code = failure_verdict(summary, gates[0])
        if code == EXIT_OK:
            problem, code = reasoning_verdict(summary, gates[1])
        if summary.bad_shards:
            reasons = "; ".join(summary.bad_shards.values())  # each names its shard
            named = f"{len(summary.bad_shards)} shard(s) could not be read ({reasons})"
            if skip_bad:
                typer.echo(f"warning: {named}; skipped", err=True)
            else:
                problem = f"error: {named}; the others are judged. Rerun the same command to try them again, "
                problem += "or pass --on-bad-shard skip"
                code = EXIT_BAD_SHARDS if code == EXIT_OK else code
        if keep and code == EXIT_OK:
            target = kept or kept_path(output)
            try:
                lines = filter_file(output, target, FilterRules(where=tuple(keep))).lines()
                typer.echo("\n".join([f"{target}:", *lines]))
            except JuristError as exc:
                problem, code = f"error: {exc}", EXIT_USAGE
    if problem:
        typer.echo(problem, err=True)
    return code


def kept_path(output: str) -> Path:
    """Where ``--keep`` writes when ``--kept`` is not given: ``results.kept.parquet`` beside a results file
    or a local results dataset (a folder ``out/``: ``out.kept.parquet``)."""
    if is_url(output):
        raise JuristError("--keep with a results dataset at a URL needs --kept (a local file)")
    if is_dataset_output(output):
        folder = Path(output.rstrip("/"))
        return folder.with_name(f"{folder.name}.kept.parquet")
    path = Path(output)
    return path.with_name(f"{path.stem}.kept{path.suffix}")


def merge_command(
    dataset: Annotated[str, typer.Argument(help="A results dataset: a folder or URL prefix.")],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="The results file: .parquet, .arrow/.feather or .jsonl.")
    ],
    overwrite: OverwriteOpt = False,
) -> None:
    """Merge a results dataset's committed shards, in the order of its units, into one results file with the
    run's metadata (what a run with a file --output does at its end)."""
    try:
        if not is_results_dataset(dataset):
            raise JuristError(f"{dataset}: not a results dataset (no {MANIFEST})")
        if output.exists() and not overwrite:
            raise JuristError(f"{output}: already exists; pass --overwrite to replace it")
        finished, metadata = dataset_metadata(dataset)
        rows = merge(ResultsDataset(Place.of(dataset)), output)
    except (JuristError, OSError) as exc:
        fail(exc)
    if not finished:
        statuses = ", ".join(f"{k} {v}" for k, v in metadata["unit_statuses"].items())
        typer.echo(
            f"warning: the run is not complete (units: {statuses}); merged what is committed", err=True
        )
    typer.echo(f"{rows} rows -> {output}")


def validate(
    ctx: typer.Context,
    config: Annotated[str, typer.Argument(help="A YAML path or a built-in name.")],
) -> None:
    """Load a config and explain it: kind, fields, output constraint, token bound, warnings."""
    try:
        judge = Judge(load_judge_config(config, parse_cli_overrides(ctx.args)))
        check_engine_params(judge.config.inference_config)
        check_capabilities([judge])
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
    scoring = judge.scoring.describe()
    if scoring is not None:
        typer.echo(f"  {scoring}")
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
        ids = [str(i) for i in range(len(rows))]
        plan = plan_chunk([judge], rows, ids, data.row_errors, ALL_CONSTRAINT_KINDS)
        steps = {task.index: task.step for task in plan.tasks}
        for index, output in enumerate(plan.outputs[judge.name]):
            typer.echo(f"--- row {index}")
            if output is not None:  # not judged: bad input, an errored target, a missing value
                typer.echo(f"[{output.status}] {output.error}")
            elif not judge.needs_model:  # a rule judge sends no prompt: its verdict
                result = steps[index].finish(())
                typer.echo(result.raw if isinstance(result, JudgeOutput) else "")
            else:
                _echo_requests(judge, steps[index].requests)


def _echo_requests(judge: Judge, requests: Sequence[Any]) -> None:
    for number, request in enumerate(requests):
        if len(requests) > 1:
            pairwise = judge.kind.label == "pairwise"
            typer.echo(f"--- order {('ab', 'ba')[number]}" if pairwise else f"--- request {number + 1}")
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
