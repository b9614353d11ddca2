"""``jurist filter`` and ``jurist pairs``: training data from judge results."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from jurist.analysis.filtering import FilterRules, filter_file
from jurist.analysis.pairs import PairRules, pairs_file
from jurist.cli.common import fail
from jurist.cli.options import ResultsArg
from jurist.errors import JuristError

OutputOpt = Annotated[Path, typer.Option("--output", "-o", help="Where to write: .parquet, .arrow, .jsonl")]


def filter_command(
    results: ResultsArg,
    output: OutputOpt,
    where: Annotated[
        list[str] | None,
        typer.Option(help="A SQL predicate over result columns, e.g. 'truthfulness.score >= 0.75'."),
    ] = None,
    top_k: Annotated[
        int | None, typer.Option(help="Keep the K rows with the highest --by value (per --group-by).")
    ] = None,
    quantile: Annotated[
        float | None, typer.Option(help="Keep rows whose --by value is at least this quantile.")
    ] = None,
    by: Annotated[str | None, typer.Option(help="The column --top-k and --quantile rank by.")] = None,
    group_by: Annotated[
        str | None, typer.Option(help="Apply --top-k / --quantile within each group (e.g. a prompt).")
    ] = None,
    require_ok: Annotated[bool, typer.Option(help="Drop rows whose judge status is not ok.")] = True,
    require_consistent: Annotated[
        bool, typer.Option(help="Drop pairwise rows whose two orders disagree.")
    ] = True,
    require_panel: Annotated[
        bool, typer.Option(help="Drop rows where the panel is below its quorum.")
    ] = True,
    min_confidence: Annotated[
        float | None, typer.Option(help="Drop rows with a *_confidence column below this.")
    ] = None,
    int_score: Annotated[
        str | None, typer.Option(help="Add int_score: this column rounded (FineWeb-Edu style).")
    ] = None,
    int_score_scale: Annotated[
        float, typer.Option(help="Multiply --int-score's column by this first.")
    ] = 1.0,
    judge_columns: Annotated[bool, typer.Option(help="Keep the judge columns in the output.")] = False,
    report: Annotated[Path | None, typer.Option(help="Also write the report as JSON here.")] = None,
) -> None:
    """Keep the rows of a result table that pass gates, predicates, a quantile or a top-k; report what
    each rule dropped."""
    rules = FilterRules(
        where=tuple(where or ()),
        top_k=top_k,
        quantile=quantile,
        by=by,
        group_by=group_by,
        require_ok=require_ok,
        require_consistent=require_consistent,
        require_panel=require_panel,
        min_confidence=min_confidence,
        int_score=int_score,
        int_score_scale=int_score_scale,
        keep_judge_columns=judge_columns,
    )
    try:
        outcome = filter_file(results, output, rules)
    except JuristError as exc:
        fail(exc)
    typer.echo("\n".join([f"{output}:", *outcome.lines()]))
    if report is not None:
        report.write_text(json.dumps(asdict(outcome), indent=2) + "\n")


def pairs_command(
    results: ResultsArg,
    output: OutputOpt,
    judge: Annotated[
        str | None, typer.Option(help="The judge (or 'panel') whose verdicts make the pairs.")
    ] = None,
    group_by: Annotated[
        str | None, typer.Option(help="Pointwise results: the column that groups responses to one prompt.")
    ] = None,
    prompt_column: Annotated[
        str | None, typer.Option(help="The prompt column (default: prompt, question, request, input).")
    ] = None,
    response_column: Annotated[
        str | None, typer.Option(help="Pointwise results: the response column.")
    ] = None,
    by: Annotated[
        str | None, typer.Option(help="Pointwise results: the score column (default <judge>.score).")
    ] = None,
    all_pairs: Annotated[
        bool, typer.Option(help="Every pair with --min-margin, not only best vs worst.")
    ] = False,
    min_margin: Annotated[float, typer.Option(help="The smallest score margin of a pair.")] = 0.0,
    min_p: Annotated[
        float | None, typer.Option(help="LOGPROBS pairwise results: the P(A wins) a winner needs.")
    ] = None,
    chat: Annotated[bool, typer.Option(help="Prompt, chosen and rejected as chat-message lists.")] = False,
) -> None:
    """Preference pairs in TRL's DPO format from pointwise scores, pairwise verdicts or a panel."""
    rules = PairRules(
        judge=judge,
        group_by=group_by,
        prompt_column=prompt_column,
        response_column=response_column,
        by=by,
        all_pairs=all_pairs,
        min_margin=min_margin,
        min_p=min_p,
        chat=chat,
    )
    try:
        outcome = pairs_file(results, output, rules)
    except JuristError as exc:
        fail(exc)
    typer.echo(f"{output}: {outcome.line()}")
