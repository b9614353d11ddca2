"""A finished or interrupted run as text: its metadata (``jurist info``) and its results as a table (``jurist
judge dataset`` without ``--output``, as ``oumi judge dataset`` prints them)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jurist.analysis.text import format_prior
from jurist.io.results import ResultTable


def cascade_info(cascade: Mapping[str, Any]) -> list[str]:
    """A cascade's stages, thresholds and report (``jurist info``)."""
    from jurist.engine.cascade_report import format_cascade

    lines = [
        f"  judge {cascade.get('name')}: a cascade" + (" (abstaining)" if cascade.get("abstain") else "")
    ]
    for stage in cascade.get("stages", []):
        threshold = (
            "decides every row it sees" if stage.get("decides_all_it_sees") else stage.get("threshold")
        )
        lines.append(
            f"    stage {stage['stage']} {stage['judge']}: {stage['confidence']}, threshold {threshold}"
        )
    calibration = cascade.get("calibration") or {}
    if "target_agreement" in calibration:
        lines.append(
            f"    calibrated on {calibration['labelled_rows']} labelled rows of {calibration['labels']}: "
            f"target agreement {calibration['target_agreement']}, delta {calibration['delta']}"
        )
    if cascade.get("report"):
        lines.append(format_cascade(cascade["report"]))
    return lines


def bf16_text(machine: Mapping[str, Any]) -> str:
    """The CPU's bfloat16 instructions as ``jurist info`` shows them ('' where the metadata predates them)."""
    if "bf16_features" not in machine:
        return ""
    found = machine["bf16_features"]
    return f", bfloat16 instructions: {', '.join(found)}" if found else ", no bfloat16 instructions"


def format_info(results: str | Path, metadata: Mapping[str, Any], finished: bool) -> str:
    """A results file's metadata (``jurist info``) as text."""
    if finished:
        state = "finished"
    else:
        committed, parts = metadata.get("committed_rows", 0), metadata.get("parts", 0)
        state = f"in progress or interrupted: {committed} rows committed in {parts} parts"
    env = metadata.get("environment", {})
    versions = "; ".join(f"{k} {v}" for k, v in env.get("versions", {}).items())
    machine = env.get("machine", {})
    cpu, cores, python = machine.get("cpu", "?"), machine.get("cores", "?"), env.get("python", "?")
    options = {k: v for k, v in (metadata.get("options") or {}).items() if v not in (None, [], False)}
    lines = [
        f"{results}: {state}",
        f"  versions: {versions or metadata.get('jurist_version')}",
        f"  machine: {cpu}, {cores} cores{bf16_text(machine)}; python {python}",
        f"  input: {metadata.get('input')} ({metadata.get('rows')} rows)",
        f"  options: {', '.join(f'{k}={v}' for k, v in options.items()) or 'none'}",
        f"  started {metadata.get('started', '?')}, finished {metadata.get('finished', '-')}",
        f"  fingerprint: {metadata.get('fingerprint', '-')}",
    ]
    models = metadata.get("models") or {}
    for judge in metadata.get("judges", []):
        name = judge.get("name")
        if judge.get("cascade"):
            lines += cascade_info(metadata.get("cascade") or {})
            continue
        hashes = f"prompt {judge.get('prompt_hash')}, schema {judge.get('schema_hash')}"
        how = f"scoring {judge.get('scoring')}, seed {judge.get('seed')}"
        lines.append(f"  judge {name} ({judge.get('source')}): {how}, {hashes}")
        model = dict(models.get(name) or {})
        reason = model.pop("dtype_reason", None)
        if model:
            lines.append("    model: " + ", ".join(f"{k} {v}" for k, v in model.items() if v is not None))
        if reason:
            lines.append(f"    computed in {model.get('dtype', '?')}: {reason}")
        prior = (metadata.get("position_prior") or {}).get(name)
        if prior:
            lines.append(f"    {format_prior(prior)}")
    return "\n".join(lines)


def results_table(path: str | Path, judges: list[str], *, raw: bool = False) -> str:
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
