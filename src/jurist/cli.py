"""The ``jurist`` command line.

    jurist judge dataset --config generic/truthfulness --input rows.jsonl --output out.parquet \
        [--judge_params.response_format XML ...]
    jurist validate CONFIG          load a config and explain it
    jurist render --config C --input F --limit N    print what the model would be sent
    jurist list                     the built-in judges

Dotted options after the named ones override config keys, as in ``oumi judge dataset``.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from jurist.config import list_builtin_judges, load_judge_config, parse_cli_overrides
from jurist.errors import JuristError

app = typer.Typer(
    name="jurist",
    help="Score datasets with local judge models (Oumi-style judge configs, guided decoding, Arrow output).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
judge_app = typer.Typer(help="Judge a dataset.", no_args_is_help=True)
app.add_typer(judge_app, name="judge")

_EXTRA = {"allow_extra_args": True, "ignore_unknown_options": True}

ConfigOpt = Annotated[
    list[str],
    typer.Option("--config", "-c", help="Judge config: a YAML path or a built-in name. Repeat for a panel."),
]
InputOpt = Annotated[
    Path, typer.Option("--input", "-i", help="Dataset: .jsonl, .json, .csv, .parquet, .arrow")
]


def _overrides(ctx: typer.Context, model: str | None, engine: str | None) -> dict[str, Any]:
    overrides = parse_cli_overrides(ctx.args)
    if model is not None:
        overrides["inference_config.model.model_name"] = model
    if engine is not None:
        overrides["inference_config.engine"] = engine
    return overrides


def _fail(exc: Exception) -> None:
    typer.echo(f"error: {exc}", err=True)
    raise typer.Exit(code=2)


def _setup_logging(verbose: bool) -> None:
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )


@judge_app.command("dataset", context_settings=_EXTRA)
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
    from jurist.calibration import Calibration
    from jurist.engine import Engine

    _setup_logging(verbose)
    try:
        overrides = _overrides(ctx, model, engine)
        configs = [load_judge_config(ref, overrides) for ref in config]
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
            agreement = _panel_agreement(eng, output)
    except JuristError as exc:
        _fail(exc)
        return
    print_summary(summary.as_dict())
    if agreement:
        typer.echo(_format_agreement(agreement))
    if summary_json is not None:
        summary_json.write_text(json.dumps(summary.as_dict(), indent=2) + "\n")


def _panel_agreement(engine: Any, output: Path) -> dict[str, Any] | None:
    """The panel's dataset-level agreement, read back from the written results."""
    if engine.panel is None:
        return None
    from jurist.io import read_output

    result: dict[str, Any] = engine.panel.agreement(read_output(output))
    return result


def _format_agreement(report: dict[str, Any]) -> str:
    lines = [f"  panel of {', '.join(report['judges'])} (quorum {report['quorum']}):"]
    for field, stats in report["fields"].items():
        alpha = stats["krippendorff_alpha"]
        text = f"    {field}: Krippendorff's alpha ({stats['alpha_level']}) {_num(alpha)}"
        if stats["cohen_kappa"]:
            text += "; Cohen's kappa " + ", ".join(f"{k} {_num(v)}" for k, v in stats["cohen_kappa"].items())
        lines.append(text)
    for judge, bias in (report.get("position_bias") or {}).items():
        lines.append(
            f"    position bias of {judge}: {_num(bias)} of verdicts picked the first-shown response"
        )
    if "inconclusive_rows" in report:
        lines.append(f"    inconclusive rows (below quorum): {report['inconclusive_rows']}")
    return "\n".join(lines)


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def print_summary(summary: dict[str, Any]) -> None:
    """Print a run summary: rows, statuses and score statistics per judge, throughput."""
    load = summary["model_load_seconds"]
    load_text = f"model load {load:.1f} s; " if load else ""
    typer.echo(
        f"{summary['rows']} rows -> {summary['output']} in {summary['seconds']:.1f} s "
        f"({load_text}{summary['rows_per_second']:.2f} rows/s, "
        f"{summary['completion_tokens_per_second']:.1f} output tokens/s while judging)"
    )
    for name, judge in summary["judges"].items():
        statuses = ", ".join(f"{k} {v}" for k, v in sorted(judge["statuses"].items(), key=lambda kv: -kv[1]))
        score = judge["score"]
        if score["n"]:
            stats = (
                f"score mean {score['mean']:.3f}, min {score['min']:.3f}, "
                f"max {score['max']:.3f} (n={score['n']})"
            )
        else:
            stats = "no scores"
        typer.echo(f"  {name} [{judge['model']}]: {statuses}; {stats}")


@app.command(context_settings=_EXTRA)
def validate(
    ctx: typer.Context,
    config: Annotated[str, typer.Argument(help="A YAML path or a built-in name.")],
) -> None:
    """Load a config and explain it: kind, fields, output constraint, token bound, warnings."""
    from jurist.judge import Judge

    try:
        judge = Judge(load_judge_config(config, parse_cli_overrides(ctx.args)))
    except JuristError as exc:
        _fail(exc)
        return
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


@app.command(context_settings=_EXTRA)
def render(
    ctx: typer.Context,
    config: ConfigOpt,
    input: InputOpt,
    limit: Annotated[int, typer.Option(help="Rows to render.")] = 3,
) -> None:
    """Print the prompts a model would be sent for the first rows, and each judge's output schema."""
    from jurist.engine import Engine
    from jurist.io import read_input
    from jurist.judge import missing_message
    from jurist.templates import MissingValue

    try:
        configs = [load_judge_config(ref, parse_cli_overrides(ctx.args)) for ref in config]
        engine = Engine(configs)
        data = read_input(input)
        engine.check_columns(data)
    except JuristError as exc:
        _fail(exc)
        return
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
                requests = judge.requests_for(row)
            except MissingValue as exc:
                typer.echo(f"[missing_input] {missing_message(exc)}")
                continue
            for number, request in enumerate(requests):
                if len(requests) > 1:
                    typer.echo(f"--- order {'ab' if number == 0 else 'ba'}")
                for message in request.messages:
                    typer.echo(f"[{message.role}]\n{message.content}\n")


@app.command()
def agree(
    results: Annotated[Path, typer.Argument(help="A result table written by `jurist judge dataset`.")],
    labels: Annotated[
        Path | None,
        typer.Option(help="A file with human labels (e.g. an LLMBar JSON file), by row id or position."),
    ] = None,
    label_column: Annotated[
        str | None, typer.Option(help="The label column (in the results, or in --labels; default 'label').")
    ] = None,
    labels_id_column: Annotated[str | None, typer.Option(help="Row-id column of the labels file.")] = None,
    label_map: Annotated[str | None, typer.Option(help="Map label values, e.g. '1=a,2=b'.")] = None,
    judge: Annotated[
        list[str] | None, typer.Option(help="Only these judges (default: all in the table).")
    ] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Also write the report as JSON here.")
    ] = None,
) -> None:
    """Agreement of each judge (and the panel) with human labels: accuracy, kappa, order consistency."""
    from jurist.agree import agreement_report, format_report, labels_for_table, parse_label_map
    from jurist.io import read_input, read_output

    try:
        table = read_output(results)
        file_rows = read_input(labels).table if labels is not None else None
        if file_rows is None and label_column is None:
            raise JuristError("give --label-column (a column of the results) or --labels FILE")
        truth = labels_for_table(
            table, column=label_column, file_rows=file_rows, file_id_column=labels_id_column
        )
        report = agreement_report(table, truth, judges=judge, label_map=parse_label_map(label_map))
    except JuristError as exc:
        _fail(exc)
        return
    typer.echo(format_report(report))
    if json_out is not None:
        clean = {j: {k: v for k, v in r.items() if not k.startswith("_")} for j, r in report.items()}
        json_out.write_text(json.dumps(clean, indent=2, default=str) + "\n")


@app.command()
def calibrate(
    results: Annotated[Path, typer.Argument(help="A result table written by `jurist judge dataset`.")],
    column: Annotated[
        str, typer.Option(help="The probability column, e.g. truthfulness.judgment_p.Yes or j.p_a.")
    ],
    labels: Annotated[
        Path | None, typer.Option(help="A file with human labels, by row id or position.")
    ] = None,
    label_column: Annotated[str | None, typer.Option(help="The label column (default 'label').")] = None,
    labels_id_column: Annotated[str | None, typer.Option(help="Row-id column of the labels file.")] = None,
    label_map: Annotated[str | None, typer.Option(help="Map label values, e.g. '1=a,2=b'.")] = None,
    positive: Annotated[
        str | None, typer.Option(help="The label value that counts as positive (default: a / true).")
    ] = None,
    method: Annotated[str, typer.Option(help="isotonic or platt")] = "isotonic",
    fit_fraction: Annotated[
        float, typer.Option(help="Share of labelled rows to fit on; the rest is held out.")
    ] = 0.5,
    out: Annotated[
        Path | None, typer.Option(help="Where to save (default: <results>.calibration.json).")
    ] = None,
) -> None:
    """Fit an isotonic or Platt map from a probability column to human labels; report ECE before/after."""
    from jurist.agree import labels_for_table, normalize_labels, parse_label_map
    from jurist.calibration import fit
    from jurist.io import read_input, read_output

    try:
        table = read_output(results)
        if column not in table.column_names:
            raise JuristError(f"{results} has no column {column!r}")
        judge = column.split(".", 1)[0]
        pairwise = f"{judge}.winner" in table.column_names
        file_rows = read_input(labels).table if labels is not None else None
        if file_rows is None and label_column is None:
            raise JuristError("give --label-column (a column of the results) or --labels FILE")
        raw_labels = labels_for_table(
            table, column=label_column, file_rows=file_rows, file_id_column=labels_id_column
        )
        truth = normalize_labels(raw_labels, pairwise, parse_label_map(label_map))
        wanted: Any = positive if positive is not None else ("a" if pairwise else True)
        if positive is not None and not pairwise and positive.lower() in ("true", "false", "yes", "no"):
            wanted = positive.lower() in ("true", "yes")
        outcomes = [None if t is None else t == wanted for t in truth]
        calibration = fit(
            table.column(column).to_pylist(),
            outcomes,
            method=method,  # type: ignore[arg-type]
            judge=judge,
            column=column,
            positive=str(wanted),
            fit_fraction=fit_fraction,
        )
    except JuristError as exc:
        _fail(exc)
        return
    target = out or results.with_name(results.name + ".calibration.json")
    calibration.save(target)
    for part, stats in calibration.report.items():
        before, after = _num(stats["ece_before"]), _num(stats["ece_after"])
        typer.echo(f"{part}: {stats['rows']} rows, ECE {before} before -> {after} after")
    typer.echo(f"saved {method} calibration of {column} (positive: {wanted}) to {target}")


@app.command("list")
def list_judges() -> None:
    """List the built-in judges."""
    for name in list_builtin_judges():
        try:
            config = load_judge_config(name)
        except JuristError as exc:
            typer.echo(f"{name}: (invalid: {exc})")
            continue
        kind = "rubric" if config.is_rubric else config.judge_params.judgment_type.value
        typer.echo(f"{name:34s} {kind:8s} {config.description or ''}")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
