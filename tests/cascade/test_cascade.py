"""Cascades on LLMBar rows with scripted stages: calibration, columns, metadata, what each stage judged,
bad input, and a kill -9 during stage 2 followed by a rerun."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
import yaml
from cascade_stages import Stage, factory, row_key, stage_config, truth_of
from typer.testing import CliRunner

from jurist.analysis.human import agreement_report
from jurist.cascade.engine import CascadeEngine
from jurist.cli import app
from jurist.config.cascade import CalibrationSettings, CascadeSettings, stage_configs
from jurist.engine.spec import RunOptions, RunSpec, Selection
from jurist.engine.summary import RunSummary
from jurist.errors import JuristError
from jurist.io.parts import OutputError, parts_dir
from jurist.io.results import ResultTable
from jurist.labels.source import LabelSource
from jurist.launch import Launch, Placement, launch

LLMBAR = Path("/work/shared/data/llmbar/Natural.json")
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "llmbar" / "Natural.json"
JOB = Path(__file__).with_name("cascade_job.py")


@pytest.fixture
def llmbar(tmp_path: Path) -> Path:
    source = LLMBAR if LLMBAR.is_file() else EXAMPLE
    target = tmp_path / "natural.json"
    shutil.copy(source, target)
    return target


@dataclass
class CascadeResult:
    """A finished cascade run: its launch (spec, engine, notes) and summary."""

    launched: Launch
    summary: RunSummary

    @property
    def engine(self) -> CascadeEngine:
        assert isinstance(self.launched.engine, CascadeEngine)
        return self.launched.engine

    @property
    def notes(self) -> list[str]:
        return self.launched.notes


def run_cascade(
    data: Path, output: Path, settings: CascadeSettings, stages: dict[str, Stage], *, repair: bool = False
) -> CascadeResult:
    configs = stage_configs([stage_config("small"), stage_config("big")])
    options = RunOptions(chunk_size=10, max_open_chunks=3)
    spec = RunSpec(tuple(configs), Selection(str(data)), options, cascade=settings)
    launched = launch(spec, Placement(repair=repair), output=output, backend_factory=factory(stages))
    return CascadeResult(launched, launched.run(output))


def test_a_calibrated_cascade_on_llmbar(llmbar: Path, tmp_path: Path) -> None:
    rows = json.loads(llmbar.read_text())
    truth = truth_of(rows)
    log = tmp_path / "requests.jsonl"
    stages = {
        "small": Stage("small", truth, lambda c: 0.2 + 0.8 * c, log),
        "big": Stage("big", truth, lambda c: 0.95, log),
    }
    output = tmp_path / "out.parquet"
    settings = CascadeSettings(calibration=CalibrationSettings(LabelSource(llmbar), target=0.8, delta=0.1))
    run = run_cascade(llmbar, output, settings, stages)
    table = ResultTable.open(output)
    assert table.num_rows == len(rows)
    cascade = table.judge("cascade")
    assert cascade.kind == "pairwise" and cascade.verdict == "cascade.winner"
    meta = table.metadata["cascade"]
    threshold = meta["stages"][0]["threshold"]
    assert meta["calibration"]["labelled_rows"] == len(rows)
    assert meta["stages"][0]["confidence"] == "order_averaged_probability"
    data = table.table.to_pylist()
    for (
        row
    ) in data:  # stage 1 judged every row; a row went on exactly when its confidence was below threshold
        assert row["cascade.confidence_1"] is not None
        went_on = threshold is None or row["cascade.confidence_1"] < threshold
        assert row["cascade.stage"] == (2 if went_on else 1)
        assert (row["pref_2.status"] is not None) == went_on
        assert row["cascade.winner"] == row[f"pref_{row['cascade.stage']}.winner"]
    # requests: calibration (both stages on every labelled row), then stage 1 on all, stage 2 on the rest
    logged = Counter(json.loads(line)["model"] for line in log.read_text().splitlines())
    escalated = sum(r["cascade.stage"] == 2 for r in data)
    assert logged == {"small": 2 * len(rows) * 2, "big": 2 * len(rows) + 2 * escalated}
    report = run.summary.cascade
    assert [s["decided"] for s in report["stages"]] == [len(rows) - escalated, escalated]
    assert report["stages"][1]["requests"] == 2 * escalated
    # the final columns feed `agree` like any judge's
    agree = agreement_report(table, LabelSource(column="label").for_results(table).labels)
    right = sum(r["cascade.winner"] == ("a" if r["label"] == 1 else "b") for r in data)
    assert agree["cascade"]["accuracy"]["estimate"] == pytest.approx(right / len(rows))
    # a rerun finds the run complete and judges nothing, not even the labelled rows
    before = log.read_text()
    again = run_cascade(llmbar, output, settings, stages)
    assert again.summary.complete and log.read_text() == before


def test_hand_thresholds_and_abstaining(llmbar: Path, tmp_path: Path) -> None:
    truth = truth_of(json.loads(llmbar.read_text()))
    stages = {"small": Stage("small", truth, lambda c: c), "big": Stage("big", truth, lambda c: c)}
    output = tmp_path / "out.parquet"
    run_cascade(llmbar, output, CascadeSettings(thresholds=(0.9, 0.7), abstain=True), stages)
    data = ResultTable.open(output).table.to_pylist()
    for row in data:
        c1, c2 = row["cascade.confidence_1"], row["cascade.confidence_2"]
        if c1 >= 0.9:
            assert row["cascade.stage"] == 1 and c2 is None
        elif c2 >= 0.7:
            assert row["cascade.stage"] == 2
        else:
            assert row["cascade.status"] == "abstained" and row["cascade.stage"] is None
            assert row["cascade.winner"] is None
    assert any(r["cascade.status"] == "abstained" for r in data)


def test_info_pairs_and_filter_read_the_cascade(llmbar: Path, tmp_path: Path) -> None:
    truth = truth_of(json.loads(llmbar.read_text()))
    stages = {"small": Stage("small", truth, lambda c: c), "big": Stage("big", truth, lambda c: 1.0)}
    output = tmp_path / "out.parquet"
    run_cascade(llmbar, output, CascadeSettings(thresholds=(0.85,)), stages)
    data = ResultTable.open(output).table.to_pylist()
    first = sum(r["cascade.stage"] == 1 for r in data)
    info = CliRunner().invoke(app, ["info", str(output)])
    assert info.exit_code == 0, info.output
    assert "judge cascade: a cascade" in info.output and "threshold 0.85" in info.output
    assert f"decided {first} ({100 * first / len(data):.1f} %)" in info.output
    pairs = CliRunner().invoke(
        app, ["pairs", str(output), "-o", str(tmp_path / "pairs.jsonl"), "--judge", "cascade"]
    )
    assert pairs.exit_code == 0, pairs.output
    written = [json.loads(line) for line in (tmp_path / "pairs.jsonl").read_text().splitlines()]
    assert len(written) == sum(r["cascade.status"] == "ok" and r["cascade.position_consistent"] for r in data)
    kept = tmp_path / "kept.parquet"
    result = CliRunner().invoke(
        app, ["filter", str(output), "-o", str(kept), "--where", '"cascade.stage" = 1']
    )
    assert result.exit_code == 0, result.output
    assert ResultTable.open(kept).num_rows == first


def test_bench_times_a_cascade(llmbar: Path, tmp_path: Path) -> None:
    """`jurist bench --cascade`: the cascade and its last stage alone as two bench entries, whose figures
    agree with the cascade's parquet and with the requests each scripted stage saw."""
    from jurist.bench.cascade_bench import CascadeBench, bench_cascade
    from jurist.bench.cost import Prices, add_costs
    from jurist.bench.report import write

    truth = truth_of(json.loads(llmbar.read_text()))
    log = tmp_path / "requests.jsonl"
    stages = {
        "small": Stage("small", truth, lambda c: c, log),
        "big": Stage("big", truth, lambda c: 1.0, log),
    }
    refs = [str(write_yaml(tmp_path / f"{m}.yaml", stage_config(m))) for m in ("small", "big")]
    job = CascadeBench(
        refs, str(llmbar), tmp_path / "bench", CascadeSettings(thresholds=(0.8,)), rows=40, repeat=2
    )
    bench = add_costs(bench_cascade(job, factory(stages), progress=None), Prices(2.0))
    files = write(bench, tmp_path / "bench")
    cascade, alone = bench["results"]
    assert (cascade["judge"], cascade["model"], cascade["mode"]) == (
        "cascade: pref_1 -> pref_2",
        "small -> big",
        "logprobs",
    )
    assert (alone["judge"], alone["model"], alone["mode"]) == ("pref_2", "big", "logprobs")
    for entry in (cascade, alone):  # the same shape as any measurement
        assert {"cold", "warm", "runs", "load_seconds", "load_peak_rss_mb", "cost", "engine"} <= set(entry)
        assert set(alone["warm"]) <= set(entry["warm"]) and entry["warm"]["rows"] == 40
    data = ResultTable.open(tmp_path / "bench" / "cascade.parquet").table.to_pylist()
    reached = [sum(r[f"pref_{k}.status"] is not None for r in data) for k in (1, 2)]
    decided = Counter(r["cascade.stage"] for r in data)
    figures = cascade["cascade"]
    assert [s["decided"] for s in figures["stages"]] == [decided[1], decided[2]] and sum(
        decided.values()
    ) == 40
    assert [s["judged"] for s in figures["stages"]] == reached == [40, decided[2]]
    assert figures["requests"] == cascade["warm"]["requests"] == 2 * reached[0] + 2 * reached[1]
    assert cascade["warm"]["judged"] == sum(reached) and cascade["warm"]["valid_rows"] == 40
    assert cascade["warm"]["prompt_tokens"] == sum(
        r[f"pref_{k}.prompt_tokens"] or 0 for r in data for k in (1, 2)
    )
    # every request each stage got: the cold runs (8 rows), two warm runs, and the last stage alone
    cold_escalated = sum(r["cascade.stage"] == 2 for r in data[:8])
    logged = Counter(json.loads(line)["model"] for line in log.read_text().splitlines())
    assert logged == {
        "small": 2 * 8 + 2 * 2 * 40,
        "big": 2 * cold_escalated + 2 * 2 * decided[2] + 2 * 8 + 2 * 2 * 40,
    }
    versus = figures["vs_last_stage"]
    assert versus["rows_per_s_ratio"] == round(cascade["warm"]["rows_per_s"] / alone["warm"]["rows_per_s"], 3)
    assert (
        versus["saved_measured"]["prompt_tokens"]["saved"]
        == alone["warm"]["prompt_tokens"] - cascade["warm"]["prompt_tokens"]
    )
    assert versus["estimated_from"] == "the last stage's rows in this run"
    markdown = files["markdown"].read_text()
    assert "| small -> big | cascade: pref_1 -> pref_2 | logprobs |" in markdown
    assert "| big | pref_2 | logprobs |" in markdown
    assert f"{versus['rows_per_s_ratio']}x" in markdown and f"stage 1 (pref_1) {decided[1]}" in markdown
    from PIL import Image

    for name in ("rows_per_s", "tokens_per_s", "cost_per_million"):
        assert files[name].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        with Image.open(files[name]) as image:
            image.verify()


def write_yaml(path: Path, data: dict[str, object]) -> Path:
    path.write_text(yaml.safe_dump(data))
    return path


def test_stages_that_judge_differently_exit_2(llmbar: Path, tmp_path: Path) -> None:
    pointwise = {
        "name": "p",
        "judge_params": {"prompt_template": "{input}", "scoring": "LOGPROBS", "response_format": "JSON"},
    }
    tie = stage_config("small")
    tie["pairwise_judge_params"] = {"allow_tie": True}
    for other, named in ((pointwise, "kind"), (tie, "ties allowed")):
        args = [
            "judge", "dataset", "-i", str(llmbar), "-o", str(tmp_path / "o.parquet"),
            "--cascade", str(write_yaml(tmp_path / "a.yaml", stage_config("small"))),
            "--cascade", str(write_yaml(tmp_path / "b.yaml", other)), "--threshold", "0.8",
        ]  # fmt: skip
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2, result.output
        assert "does not judge like stage 1" in result.output and named in result.output


def test_calibration_labels_matching_no_row_exit_2(llmbar: Path, tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps({"id": f"x{i}", "label": 1}) + "\n" for i in range(30)))
    stage = str(write_yaml(tmp_path / "a.yaml", stage_config("small")))
    args = ["judge", "dataset", "-i", str(llmbar), "-o", str(tmp_path / "o.parquet"), "--cascade", stage,
            "--cascade", stage, "--calibration-labels", str(labels)]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert f"no label of {labels} matches a row of the input {llmbar}" in result.output


def test_an_uncertifiable_target_exits_2_with_the_labels_it_needs(llmbar: Path, tmp_path: Path) -> None:
    stage = str(write_yaml(tmp_path / "a.yaml", stage_config("small")))
    args = ["judge", "dataset", "-i", str(llmbar), "-o", str(tmp_path / "o.parquet"), "--cascade", stage,
            "--cascade", stage, "--calibration-labels", str(llmbar),
            "--target-agreement", "0.99"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "it takes at least 230 labelled rows" in result.output


def test_validate_names_the_confidence(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["validate", str(write_yaml(tmp_path / "a.yaml", stage_config("small")))]
    )
    assert result.exit_code == 0
    assert (
        "as a cascade stage: confidence = the winning side's probability averaged over both orders"
        in result.output
    )


def test_kill_during_stage_2_then_rerun_judges_no_stage_1_row_again(llmbar: Path, tmp_path: Path) -> None:
    output, log, marker = tmp_path / "out.parquet", tmp_path / "requests.jsonl", tmp_path / "blocked"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(JOB.parent), *sys.path])}
    command = [sys.executable, str(JOB), str(llmbar), str(output), str(log)]
    with (tmp_path / "first.err").open("w") as err:
        first = subprocess.Popen([*command, "3", str(marker)], env=env, stdout=subprocess.DEVNULL, stderr=err)
        for _ in range(600):
            if marker.exists() or first.poll() is not None:
                break
            time.sleep(0.1)
        assert marker.exists(), (tmp_path / "first.err").read_text()
        first.send_signal(signal.SIGKILL)
        first.wait()
    killed = [json.loads(line) for line in log.read_text().splitlines()]
    assert {r["model"] for r in killed} == {"small", "big"}
    second = subprocess.run(
        [*command, "0", str(marker)], env=env, capture_output=True, text=True, timeout=300
    )
    assert second.returncode == 0, second.stderr
    summary = json.loads(second.stdout.strip().splitlines()[-1])
    assert summary["resumed_from"] == 40  # two windows of 2 chunks of 10 were committed before the kill
    records = [json.loads(line) for line in log.read_text().splitlines()]
    stage1 = Counter((r["row"], r["order"]) for r in records if r["model"] == "small")
    assert max(stage1.values()) == 1  # no stage-1 request was sent twice, across both processes
    assert len(stage1) == 2 * 100
    data = ResultTable.open(output).table.to_pylist()
    assert len(data) == 100 and all(r["cascade.status"] == "ok" for r in data)
    escalated = sum(r["cascade.stage"] == 2 for r in data)
    stage2_rerun = sum(r["model"] == "big" for r in records[len(killed) :])
    assert stage2_rerun <= 2 * escalated  # stage 2 judged again only the window it was killed in


def test_repair_judges_a_damaged_part_of_a_cascade_again_and_ends_as_an_undisturbed_run(
    llmbar: Path, tmp_path: Path
) -> None:
    rows = json.loads(llmbar.read_text())
    truth = truth_of(rows)
    settings = CascadeSettings(thresholds=(0.8,))

    def stages(log: Path, stop_on_call: int | None = None) -> dict[str, Stage]:
        return {
            "small": Stage("small", truth, lambda c: c, log),
            "big": Stage("big", truth, lambda c: 1.0, log, stop_on_call=stop_on_call),
        }

    alone = tmp_path / "alone.parquet"
    run_cascade(llmbar, alone, settings, stages(tmp_path / "alone.jsonl"))
    output, log = tmp_path / "out.parquet", tmp_path / "requests.jsonl"
    with pytest.raises(KeyboardInterrupt):  # stopped in stage 2 of the second window (chunks 3-5)
        run_cascade(llmbar, output, settings, stages(log, stop_on_call=2))
    part = parts_dir(output) / "part-000001.parquet"
    part.write_bytes(part.read_bytes()[: part.stat().st_size // 2])
    before = len(log.read_text().splitlines())
    with pytest.raises(OutputError, match=r"part-000001\.parquet \(rows 10-19\): truncated or unreadable"):
        run_cascade(llmbar, output, settings, stages(log))
    assert len(log.read_text().splitlines()) == before  # named before anything was judged
    repaired = run_cascade(llmbar, output, settings, stages(log), repair=True)
    assert repaired.summary.resumed_from == 30
    again = [json.loads(line) for line in log.read_text().splitlines()[before:]]
    keys = [row_key(str(r["output_1"]), str(r["output_2"])) for r in rows]
    stage_1 = {r["row"] for r in again if r["model"] == "small"}
    # the damaged part's rows, and the rows not committed whose stage 1 was not kept beside the run
    assert stage_1 == {*keys[10:20], *keys[60:]}
    assert Counter(r["row"] for r in again if r["model"] == "small")[keys[10]] == 2  # both orders, once
    expected, got = ResultTable.open(alone).table, ResultTable.open(output).table
    assert got.num_rows == len(rows) and got.column_names == expected.column_names
    assert got.to_pylist() == expected.to_pylist()  # every column and value of every row


def test_a_cascade_refuses_what_it_cannot_run_with_exit_2(llmbar: Path, tmp_path: Path) -> None:
    configs = stage_configs([stage_config("small"), stage_config("big")])
    spec = RunSpec(tuple(configs), Selection(str(llmbar)), cascade=CascadeSettings(thresholds=(0.8,)))
    for placement, named in (
        (Placement(data_parallel=2), "--data-parallel"),
        (Placement(ray="local"), "--ray"),
        (Placement(retry_failed=True), "--retry-failed"),
    ):
        with pytest.raises(JuristError, match=f"a cascade runs locally, without {named}"):
            launch(spec, placement)
    with pytest.raises(JuristError, match="without --from-batch-results"):
        launch(replace(spec, answers=(llmbar,)))


def test_a_stage_that_thinks_first(llmbar: Path, tmp_path: Path) -> None:
    """Stage 1 reasons before its label scores: each of its rows' two orders thinks, its label requests
    follow the reasoning, the cascade decides on its confidence as without it, and stage 2 never thinks."""
    truth = truth_of(json.loads(llmbar.read_text()))
    log = tmp_path / "requests.jsonl"
    stages = {
        "small": Stage("small", truth, lambda c: c, log),
        "big": Stage("big", truth, lambda c: 1.0, log),
    }
    small = stage_config("small")
    small["judge_params"] = {**small["judge_params"], "reasoning": {"budget_tokens": 24}}  # type: ignore[dict-item]
    configs = stage_configs([small, stage_config("big")])
    spec = RunSpec(
        tuple(configs), Selection(str(llmbar)), RunOptions(chunk_size=10), cascade=CascadeSettings((0.8,))
    )
    output, plain = tmp_path / "out.parquet", tmp_path / "plain.parquet"
    launch(spec, output=output, backend_factory=factory(stages)).run(output)
    thought, answered = stages["small"].answer_prefixes, stages["big"].answer_prefixes
    stages = {"small": Stage("small", truth, lambda c: c), "big": Stage("big", truth, lambda c: 1.0)}
    run_cascade(llmbar, plain, CascadeSettings(thresholds=(0.8,)), stages)
    data, without = ResultTable.open(output).table.to_pylist(), ResultTable.open(plain).table.to_pylist()
    assert [r["cascade.stage"] for r in data] == [r["cascade.stage"] for r in without]
    assert [r["cascade.winner"] for r in data] == [r["cascade.winner"] for r in without]
    for row in data:
        thoughts = row["pref_1.reasoning"]
        assert len(thoughts) == 2 and all(t.startswith("small weighs ") for t in thoughts)
        assert row["pref_1.reasoning_cut"] == 0
        assert "pref_2.reasoning" not in row
    reached = sum(r["pref_2.status"] is not None for r in data)
    assert 0 < reached < len(data)
    assert len(thought) == 2 * len(data) and all(p.startswith("<think>small weighs ") for p in thought)
    assert len(answered) == 2 * reached and not any("<think>" in p for p in answered)


def test_a_pointwise_cascade(tmp_path: Path) -> None:
    """Yes/no LOGPROBS stages: confidence is the top label's probability; the final judgment is a bool."""
    import math

    from jurist.backends.scripted import ScriptedBackend
    from jurist.records import LabelRequest

    rows = [{"id": f"r{i}", "text": f"claim number {i}"} for i in range(30)]
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))

    def stage(p_yes: float) -> ScriptedBackend:
        def labels(request: LabelRequest) -> dict[str, float]:
            number = int(request.messages[-1].content.rsplit(" ", 1)[1])
            p = p_yes if number % 2 else 1 - p_yes
            p = 0.99 if number % 3 == 0 and p_yes < 0.9 else p  # stage 1 is sure on every third row
            return dict(zip(request.labels, (math.log(p), math.log(1 - p)), strict=True))

        return ScriptedBackend([], model_id=f"p{p_yes}", labels=labels)

    def config(model: str) -> dict[str, object]:
        return {
            "name": "claim",
            "judge_params": {"prompt_template": "Is it true? {text}", "scoring": "LOGPROBS"},
            "inference_config": {"model": {"model_name": model}},
        }

    backends = {"small": stage(0.6), "big": stage(0.95)}
    spec = RunSpec(
        tuple(stage_configs([config("small"), config("big")])), Selection(str(data)), RunOptions(chunk_size=8)
    )
    settings = CascadeSettings(thresholds=(0.9,))
    launched = launch(
        replace(spec, cascade=settings), backend_factory=lambda c: backends[c.model.model_name or ""]
    )
    launched.run(tmp_path / "o.parquet")
    table = ResultTable.open(tmp_path / "o.parquet")
    assert table.judge("cascade").kind == "pointwise"
    assert (
        table.table.schema.field("cascade.judgment").type == table.table.schema.field("claim_1.judgment").type
    )
    for row in table.table.to_pylist():
        number = int(row["id"][1:])
        sure = number % 3 == 0
        assert row["cascade.stage"] == (1 if sure else 2)
        assert row["cascade.confidence_1"] == pytest.approx(0.99 if sure else 0.6)
        deciding = f"claim_{row['cascade.stage']}"
        assert row["cascade.judgment"] == row[f"{deciding}.judgment"]
        assert row["cascade.score"] == row[f"{deciding}.score"]
    assert backends["big"].calls == [20]  # stage 2 saw only the 20 unsure rows, in one batch
