"""``jurist batch``: run an OpenAI batch input file on a local engine and write OpenAI batch output lines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from jurist.cli.common import EXIT_FAILED, fail
from jurist.cli.harness import run_guarded
from jurist.cli.options import EngineOpt, OverwriteOpt, QuietOpt, SummaryJsonOpt, VerboseOpt
from jurist.errors import ConfigError, JuristError
from jurist.io.lock import OutputLock
from jurist.openai_batch.runner import DEFAULT_CHUNK_SIZE
from jurist.openai_batch.setup import local_batch_run


def batch(
    input: Annotated[
        str, typer.Argument(help="OpenAI batch input file (.jsonl, also .gz/.zst/.bz2), or - for stdin.")
    ],
    output: Annotated[Path, typer.Option("--output", "-o", help="Batch output file (.jsonl).")],
    model: Annotated[
        str | None,
        typer.Option(help="Local chat model for every line (HF id or folder; default: the embedded model)."),
    ] = None,
    model_map: Annotated[
        list[str] | None,
        typer.Option(help="body.model=local model, e.g. gpt-4o-mini=./qwen-7b (repeat; one local model)."),
    ] = None,
    engine: EngineOpt = None,
    engine_param: Annotated[
        list[str] | None, typer.Option(help="An engine parameter KEY=VALUE (repeat), as engine_params.")
    ] = None,
    embedding_model: Annotated[
        str | None, typer.Option(help="A model for /v1/embeddings lines (vLLM's pooling runner).")
    ] = None,
    max_tokens: Annotated[
        int, typer.Option(min=1, help="Token bound of lines whose body sets no max_(completion_)tokens.")
    ] = 4096,
    chunk_size: Annotated[
        int, typer.Option(min=1, help="Lines per chunk (committed and resumed together).")
    ] = DEFAULT_CHUNK_SIZE,
    overwrite: OverwriteOpt = False,
    summary_json: SummaryJsonOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Run every line of an OpenAI batch input file on a local engine; write one output line per input line,
    in input order (a line that cannot run gets an OpenAI-shaped error, never a stopped run).

    Lines are committed per chunk: rerun the same command to resume after a crash (no committed line is
    sent again). Exit codes: 0 done; 1 an unexpected error; 2 a bad input, output path or option; 3 no line
    was answered; 130 interrupted (rerun to resume).
    """
    try:
        runner = local_batch_run(
            model=model,
            model_map=_pairs(model_map, "--model-map"),
            engine=engine,
            engine_params=_pairs(engine_param, "--engine-param"),
            embedding_model=embedding_model,
            max_tokens=max_tokens,
            chunk_size=chunk_size,
        )
    except JuristError as exc:
        fail(exc)
    lock = OutputLock(output)  # one writer per output, as for judge runs
    try:
        lock.acquire()
    except JuristError as exc:
        runner.close()
        fail(exc)
    ended = run_guarded(
        lambda progress: runner.run(input, output, overwrite=overwrite, progress=progress),
        output=output,
        lock=lock,
        close=runner.close,
        verbose=verbose,
        quiet=quiet,
    )
    summary, problem, code = ended.result, ended.problem, ended.code
    if summary is not None:
        typer.echo(summary.text())
        if summary_json is not None:
            summary_json.write_text(json.dumps(summary.as_dict(), indent=2) + "\n")
        if not summary.complete and summary.lines and not summary.answered and not summary.resumed_from:
            problem, code = "error: no line was answered", EXIT_FAILED
    if problem:
        typer.echo(problem, err=True)
    raise typer.Exit(code)


def _pairs(values: list[str] | None, option: str) -> dict[str, str]:
    out = {}
    for value in values or []:
        key, sep, target = value.partition("=")
        if not sep or not key or not target:
            raise ConfigError(f"{option} takes NAME=VALUE, got {value!r}")
        out[key] = target
    return out
