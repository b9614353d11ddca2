"""A cascade's results through `estimate`, `audit`, `report`, `agree`, `filter` and `pairs`, for a pointwise
and a pairwise cascade that abstain, each figure checked against a computation from the Parquet file
(pyarrow and the statistics module), and abstained rows left out, never a verdict, and counted."""

from __future__ import annotations

import hashlib
import json
import math
import random
import shutil
import statistics
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from cascade_stages import Stage, factory, stage_config, truth_of
from typer.testing import CliRunner

from jurist.backends.scripted import ScriptedBackend
from jurist.cli import app
from jurist.config.cascade import CascadeSettings, stage_configs
from jurist.engine.spec import RunOptions, RunSpec, Selection
from jurist.launch import launch
from jurist.records import LabelRequest

LLMBAR = Path("/work/shared/data/llmbar/Natural.json")
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "llmbar" / "Natural.json"
POINT_PROMPT = "Question: {prompt}\nAnswer: {response}"


class Cascade:
    """A finished cascade run: its output, labels (``options`` name them to the commands) and per row the
    label's value as the verdict it should equal (None where unlabelled)."""

    def __init__(self, output: Path, options: list[str], truth: list[Any], kind: str) -> None:
        self.output, self.options, self.truth, self.kind = output, options, truth, kind
        self.table = pq.read_table(output)
        self.verdict = "cascade.winner" if kind == "pairwise" else "cascade.judgment"

    def column(self, name: str) -> list[Any]:
        return self.table.column(name).to_pylist()

    def count(self, status: str) -> int:
        return int(pc.sum(pc.equal(self.table.column("cascade.status"), status)).as_py() or 0)

    def labelled_rows(self, status: str | None = None) -> list[int]:
        statuses = self.column("cascade.status")
        return [i for i, t in enumerate(self.truth) if t is not None and status in (None, statuses[i])]


def _uniform(*parts: str) -> float:
    return int.from_bytes(hashlib.sha256("\x1f".join(parts).encode()).digest()[:8], "big") / 2**64


def yes_no_stage(model: str, truth: dict[str, bool], accuracy: Any) -> ScriptedBackend:
    """A yes/no LOGPROBS stage: per answer, a confidence c in [0.5, 1) and a right verdict with chance
    accuracy(c); the label it picks gets probability c."""

    def labels(request: LabelRequest) -> dict[str, float]:
        answer = request.messages[-1].content.split("\nAnswer: ", 1)[1]
        c = 0.5 + 0.49 * _uniform(model, answer, "confidence")
        says_yes = truth[answer] if _uniform(model, answer, "right") < accuracy(c) else not truth[answer]
        p_yes = c if says_yes else 1 - c
        return dict(zip(request.labels, (math.log(p_yes), math.log(1 - p_yes)), strict=True))

    return ScriptedBackend([], model_id=model, labels=labels)


def run(spec: RunSpec, settings: CascadeSettings, output: Path, backends: Any) -> None:
    launch(replace(spec, cascade=settings), output=output, backend_factory=backends).run(output)


@pytest.fixture(scope="module")
def pointwise(tmp_path_factory: pytest.TempPathFactory) -> Cascade:
    """90 answers to 30 prompts, yes/no stages with thresholds 0.85 then 0.75 and --abstain; half the
    rows carry a human yes/no in the column ``human``."""
    tmp = tmp_path_factory.mktemp("pointwise")
    rng = random.Random(11)
    labelled = set(rng.sample(range(90), 50))
    rows, truth = [], {}
    for i in range(90):
        answer = f"answer {i} to prompt {i // 3}"
        truth[answer] = rng.random() < 0.6
        human = ("yes" if truth[answer] else "no") if i in labelled else None
        rows.append({"id": f"r{i}", "prompt": f"prompt {i // 3}", "response": answer, "human": human})
    data = tmp / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))

    def config(model: str) -> dict[str, object]:
        judge = {"prompt_template": POINT_PROMPT, "scoring": "LOGPROBS", "response_format": "JSON"}
        return {"name": "right", "judge_params": judge, "inference_config": {"model": {"model_name": model}}}

    stages = {
        "small": yes_no_stage("small", truth, lambda c: c),
        "big": yes_no_stage("big", truth, lambda c: 0.4 + 0.6 * c),
    }
    spec = RunSpec(
        tuple(stage_configs([config("small"), config("big")])),
        Selection(str(data)),
        RunOptions(chunk_size=16),
    )
    output = tmp / "out.parquet"
    run(
        spec,
        CascadeSettings(thresholds=(0.85, 0.75), abstain=True),
        output,
        lambda c: stages[c.model.model_name],
    )
    human = [r["human"] for r in rows]
    return Cascade(
        output, ["--label-column", "human"], [None if h is None else h == "yes" for h in human], "pointwise"
    )


@pytest.fixture(scope="module")
def pairwise(tmp_path_factory: pytest.TempPathFactory) -> Cascade:
    """LLMBar's 100 pairs, the scripted stages with thresholds 0.9 then 0.7 and --abstain; a labels file
    (LLMBar's 1/2) holds 60 of them, matched by row id."""
    tmp = tmp_path_factory.mktemp("pairwise")
    data = tmp / "natural.json"
    shutil.copy(LLMBAR if LLMBAR.is_file() else EXAMPLE, data)
    rows = json.loads(data.read_text())
    truth = truth_of(rows)
    stages = {"small": Stage("small", truth, lambda c: c), "big": Stage("big", truth, lambda c: c)}
    configs = stage_configs([stage_config("small"), stage_config("big")])
    spec = RunSpec(tuple(configs), Selection(str(data)), RunOptions(chunk_size=10, max_open_chunks=3))
    output = tmp / "out.parquet"
    run(spec, CascadeSettings(thresholds=(0.9, 0.7), abstain=True), output, factory(stages))
    labelled = set(random.Random(3).sample(range(len(rows)), 60))
    labels = tmp / "labels.jsonl"
    labels.write_text(
        "".join(json.dumps({"id": str(i), "label": rows[i]["label"]}) + "\n" for i in sorted(labelled))
    )
    sides = [("a" if int(r["label"]) == 1 else "b") if i in labelled else None for i, r in enumerate(rows)]
    return Cascade(output, ["--labels", str(labels), "--labels-id-column", "id"], sides, "pairwise")


@pytest.fixture(params=["pointwise", "pairwise"])
def cascade(request: pytest.FixtureRequest) -> Cascade:
    return request.getfixturevalue(request.param)  # type: ignore[no-any-return]


def jurist(*args: str | Path) -> Any:
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result


def ppi_by_hand(y: list[float], f: list[float], g: list[float]) -> tuple[float, float, float, float]:
    """PPI++'s (lambda, estimate, low, high) at 95 %, written out from Angelopoulos et al.'s formulas."""
    n, big_n = len(y), len(g)
    my, mf = statistics.fmean(y), statistics.fmean(f)
    covariance = sum((a - my) * (b - mf) for a, b in zip(y, f, strict=True)) / n
    lam = min(1.0, max(0.0, covariance / ((1 + n / big_n) * statistics.variance(f + g))))
    residual = [a - lam * b for a, b in zip(y, f, strict=True)]
    theta = lam * statistics.fmean(g) + statistics.fmean(residual)
    se = math.sqrt(statistics.pvariance([lam * x for x in g]) / big_n + statistics.pvariance(residual) / n)
    z = statistics.NormalDist().inv_cdf(0.975)
    return lam, theta, theta - z * se, theta + z * se


def check_ppi(estimate: dict[str, Any], y: list[float], f: list[float], g: list[float]) -> None:
    lam, theta, low, high = ppi_by_hand(y, f, g)
    assert estimate["labelled_rows"] == len(y) and estimate["unlabelled_rows"] == len(g)
    assert estimate["lambda"] == pytest.approx(lam)
    assert estimate["ppi"]["estimate"] == pytest.approx(theta)
    assert (estimate["ppi"]["low"], estimate["ppi"]["high"]) == pytest.approx((low, high))


def test_the_cascades_abstain_on_some_rows_and_decide_at_both_stages(cascade: Cascade) -> None:
    statuses = Counter(cascade.column("cascade.status"))
    assert set(statuses) == {"ok", "abstained"} and statuses["abstained"] >= 10
    assert {1, 2} <= set(cascade.column("cascade.stage"))
    assert len(cascade.labelled_rows("abstained")) >= 5  # labelled rows that must not count as verdicts


def test_estimate_corrects_the_mean_of_the_ok_rows_and_counts_the_abstained(cascade: Cascade) -> None:
    result = jurist("estimate", cascade.output, *cascade.options, "--judge", "cascade", "--json")
    report = json.loads(result.stdout)["cascade"]
    table, ok = cascade.table, pc.equal(cascade.table.column("cascade.status"), "ok")
    assert report["left_out"] == {"abstained": cascade.count("abstained")}
    overall = report["overall"]
    assert overall["judge_only"]["estimate"] == pytest.approx(
        pc.mean(pc.filter(table["cascade.score"], ok)).as_py()
    )
    scores, statuses = cascade.column("cascade.score"), cascade.column("cascade.status")
    target = {"a": 1.0, "b": 0.0, True: 1.0, False: 0.0}
    y = [target[cascade.truth[i]] for i in cascade.labelled_rows("ok")]
    f = [scores[i] for i in cascade.labelled_rows("ok")]
    g = [s for s, t, st in zip(scores, cascade.truth, statuses, strict=True) if t is None and st == "ok"]
    check_ppi(overall, y, f, g)
    assert overall["lambda"] > 0  # the judge's scores carry information: PPI++ used them
    text = jurist("estimate", cascade.output, *cascade.options, "--judge", "cascade").stdout
    assert f"left out {cascade.count('abstained')} rows without a score: abstained" in text


def test_estimate_agreement_by_stage_is_ppi_on_right_verdicts_from_the_confidence(cascade: Cascade) -> None:
    args = ["estimate", cascade.output, *cascade.options, "--judge", "cascade", "--agreement"]
    report = json.loads(jurist(*args, "--by", "cascade.stage", "--json").stdout)["cascade"]
    assert report["target"] == "agreement" and report["column"] == "cascade.confidence"
    assert report["left_out"] == {"abstained": cascade.count("abstained")}
    verdicts, conf = cascade.column(cascade.verdict), cascade.column("cascade.confidence")
    stage = cascade.column("cascade.stage")

    def by_hand(rows: list[int]) -> tuple[list[float], list[float], list[float]]:
        decided = [i for i in rows if verdicts[i] is not None]
        labelled = [i for i in decided if cascade.truth[i] is not None]
        y = [float(verdicts[i] == cascade.truth[i]) for i in labelled]
        return y, [conf[i] for i in labelled], [conf[i] for i in decided if cascade.truth[i] is None]

    everything = list(range(cascade.table.num_rows))
    check_ppi(report["overall"], *by_hand(everything))
    kept = cascade.labelled_rows("ok")
    assert report["overall"]["labels_only"]["estimate"] == pytest.approx(
        sum(verdicts[i] == cascade.truth[i] for i in kept) / len(kept)
    )
    for number in ("1", "2"):
        check_ppi(
            report["by"]["groups"][number], *by_hand([i for i in everything if str(stage[i]) == number])
        )
    stage_2 = "pref_2" if cascade.kind == "pairwise" else "right_2"
    second = json.loads(jurist(*args[:-3], "--judge", stage_2, "--agreement", "--json").stdout)[stage_2]
    assert second["left_out"] == {"not reached": stage.count(1)}  # rows stage 1 kept: no stage-2 verdict
    text = jurist(*args).stdout
    assert "agreement with the labels, from cascade.confidence" in text and "agreement: PPI++" in text
    assert f"left out {cascade.count('abstained')} rows without a verdict or confidence: abstained" in text


def test_agree_leaves_abstained_rows_undecided_and_says_so(cascade: Cascade, tmp_path: Path) -> None:
    text = jurist("agree", cascade.output, *cascade.options).stdout
    report = json.loads(jurist("agree", cascade.output, *cascade.options, "--json").stdout)
    verdicts, truth = cascade.column(cascade.verdict), cascade.truth
    labelled, decided = cascade.labelled_rows(), cascade.labelled_rows("ok")
    right = sum(verdicts[i] == truth[i] for i in labelled)
    mine = report["cascade"]
    assert mine["labelled_rows"] == len(labelled) and mine["decided_rows"] == len(decided)
    assert mine["accuracy"]["estimate"] == pytest.approx(right / len(labelled))  # an abstention is wrong
    assert (mine["accuracy"]["successes"], mine["accuracy"]["trials"]) == (right, len(labelled))
    assert mine["accuracy_decided"] == pytest.approx(right / len(decided))
    abstained = len(cascade.labelled_rows("abstained"))
    assert mine["undecided"] == {"abstained": abstained}
    assert (
        f"accuracy on the {len(decided)} decided rows" in text
        and f"no verdict: abstained {abstained}" in text
    )
    stage_2 = "pref_2" if cascade.kind == "pairwise" else "right_2"
    not_reached = sum(cascade.column("cascade.stage")[i] == 1 for i in labelled)
    assert report[stage_2]["undecided"] == {"not reached": not_reached}


def test_audit_reads_the_cascade_confidence_and_counts_the_abstained(cascade: Cascade) -> None:
    report = json.loads(
        jurist("audit", cascade.output, *cascade.options, "--judge", "cascade", "--json").stdout
    )
    mine = report["cascade"]
    assert mine["statuses"] == {"ok": cascade.count("ok"), "abstained": cascade.count("abstained")}
    ok = pc.equal(cascade.table.column("cascade.status"), "ok")
    conf = pc.filter(cascade.table.column("cascade.confidence"), ok)
    assert mine["confidence"]["rows"] == len(conf) and mine["confidence"]["mean"] == pytest.approx(
        pc.mean(conf).as_py()
    )
    verdicts = cascade.column(cascade.verdict)
    decided = cascade.labelled_rows("ok")
    agreement = mine["agreement"]
    assert agreement["accuracy_decided"]["estimate"] == pytest.approx(
        sum(verdicts[i] == cascade.truth[i] for i in decided) / len(decided)
    )
    low, high = agreement["accuracy_decided"]["low"], agreement["accuracy_decided"]["high"]
    assert low < agreement["accuracy_decided"]["estimate"] < high
    assert agreement["undecided"] == {"abstained": len(cascade.labelled_rows("abstained"))}


def test_report_shows_the_abstained_rows_and_what_the_estimate_left_out(
    cascade: Cascade, tmp_path: Path
) -> None:
    page = tmp_path / "report.html"
    jurist("report", cascade.output, *cascade.options, "--judge", "cascade", "-o", page)
    html = page.read_text()
    abstained = cascade.count("abstained")
    assert f'<td>abstained</td><td class="num">{abstained}</td>' in html
    assert f"Left out, without a score: abstained {abstained}." in html
    assert f"no verdict: abstained {len(cascade.labelled_rows('abstained'))})" in html


def test_filter_drops_the_abstained_rows_and_keeps_by_the_cascade_verdict(
    cascade: Cascade, tmp_path: Path
) -> None:
    kept, report = tmp_path / "kept.parquet", tmp_path / "filter.json"
    jurist("filter", cascade.output, "-o", kept, "--report", report)
    assert pq.read_table(kept).num_rows == cascade.count("ok")
    assert json.loads(report.read_text())["dropped"] == {
        "cascade.status is not ok": cascade.count("abstained")
    }
    keep = "cascade.winner = 'a'" if cascade.kind == "pairwise" else "cascade.judgment"
    jurist("filter", cascade.output, "-o", kept, "--where", keep, "--judge-columns")
    wanted = "a" if cascade.kind == "pairwise" else True
    statuses, verdicts = cascade.column("cascade.status"), cascade.column(cascade.verdict)
    expected = [i for i in range(len(verdicts)) if statuses[i] == "ok" and verdicts[i] == wanted]
    assert pq.read_table(kept).column("row_id").to_pylist() == [cascade.column("row_id")[i] for i in expected]


def test_pairs_leave_out_the_abstained_rows_and_say_so(cascade: Cascade, tmp_path: Path) -> None:
    out = tmp_path / "pairs.jsonl"
    args = ["pairs", cascade.output, "-o", out, "--judge", "cascade"]
    text = jurist(*args, *(["--group-by", "prompt"] if cascade.kind == "pointwise" else [])).stdout
    pairs = [json.loads(line) for line in out.read_text().splitlines()]
    statuses, scores = cascade.column("cascade.status"), cascade.column("cascade.score")
    abstained = cascade.count("abstained")
    assert f"left out {abstained} rows: abstained {abstained}" in text
    if cascade.kind == "pairwise":
        winners, consistent = cascade.column("cascade.winner"), cascade.column("cascade.position_consistent")
        a_texts, b_texts = cascade.column("output_1"), cascade.column("output_2")
        expected = [
            (a_texts[i], b_texts[i]) if winners[i] == "a" else (b_texts[i], a_texts[i])
            for i in range(len(winners))
            if statuses[i] == "ok" and consistent[i]
        ]
    else:  # best against worst of each prompt's ok answers, ties dropped
        groups: dict[str, list[int]] = {}
        for i, prompt in enumerate(cascade.column("prompt")):
            if statuses[i] == "ok":
                groups.setdefault(prompt, []).append(i)
        responses = cascade.column("response")
        expected = []
        for members in groups.values():
            best = max(members, key=lambda i: (scores[i], -i))
            worst = min(members, key=lambda i: (scores[i], i))
            if scores[best] > scores[worst]:
                expected.append((responses[best], responses[worst]))
        assert len(expected) >= 5
    assert sorted((p["chosen"], p["rejected"]) for p in pairs) == sorted(expected)


def test_estimate_agreement_without_a_confidence_column_exits_2(tmp_path: Path) -> None:
    results = tmp_path / "plain.parquet"
    rows = [
        {"q.judgment": i % 2 == 0, "q.score": 0.5, "q.status": "ok", "label": i % 3 == 0} for i in range(8)
    ]
    pq.write_table(pa.Table.from_pylist(rows), results)
    args = ["estimate", str(results), "--label-column", "label", "--agreement"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "judge 'q' has no confidence column" in result.output and "--column" in result.output
