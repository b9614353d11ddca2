"""What a run did: rows, statuses and score statistics per judge, time, throughput, panel agreement.

:class:`RunSummary` is filled chunk by chunk while a run goes on; :meth:`RunSummary.as_dict` is what
``--summary-json`` writes and :func:`format_summary` what the command line prints.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from jurist.judges.outputs import JudgeOutput
from jurist.judges.reasoning import REASONING_CUT, REASONING_TOKENS


@dataclass
class JudgeSummary:
    """Per-judge counts, running score statistics and the first error of each status (constant memory)."""

    statuses: Counter[str] = field(default_factory=Counter)
    first_errors: dict[str, str] = field(default_factory=dict)
    scored: int = 0
    score_sum: float = 0.0
    score_min: float | None = None
    score_max: float | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_rows: int = 0  # rows of a judge with a reasoning phase
    reasoning_cut_rows: int = 0  # ... whose reasoning the budget cut (in at least one request)
    reasoning_tokens: int = 0

    def add(self, output: JudgeOutput) -> None:
        self.count(output.status, output.error, output.score)
        self.prompt_tokens += output.prompt_tokens or 0
        self.completion_tokens += output.completion_tokens or 0
        tokens = output.extras.get(REASONING_TOKENS)
        if tokens is not None:
            self.count_reasoning(tokens, output.extras.get(REASONING_CUT))

    def count_reasoning(self, tokens: int | None, cut: int | None) -> None:
        """Count one row's reasoning: its tokens, and whether the budget cut it."""
        self.reasoning_rows += 1
        self.reasoning_tokens += tokens or 0
        self.reasoning_cut_rows += bool(cut)

    def reasoning(self) -> dict[str, Any] | None:
        """Rows with a reasoning phase, those the budget cut (and their share), and its tokens per row."""
        if not self.reasoning_rows:
            return None
        return {
            "rows": self.reasoning_rows,
            "cut_rows": self.reasoning_cut_rows,
            "cut_share": self.reasoning_cut_rows / self.reasoning_rows,
            "tokens": self.reasoning_tokens,
            "tokens_per_row": self.reasoning_tokens / self.reasoning_rows,
        }

    def count(self, status: str, error: str | None, score: float | None) -> None:
        self.statuses[status] += 1
        if error and status not in self.first_errors:
            self.first_errors[status] = error
        if score is not None:
            self.scored += 1
            self.score_sum += score
            self.score_min = score if self.score_min is None else min(self.score_min, score)
            self.score_max = score if self.score_max is None else max(self.score_max, score)

    def merge(self, other: JudgeSummary) -> None:
        """Add another part of the same run's counts (a data-parallel worker's chunk): statuses, scores,
        tokens and reasoning; a status keeps the first error seen."""
        self.statuses.update(other.statuses)
        for status, error in other.first_errors.items():
            self.first_errors.setdefault(status, error)
        self.scored += other.scored
        self.score_sum += other.score_sum
        low, high = other.score_min, other.score_max
        if low is not None:
            self.score_min = low if self.score_min is None else min(self.score_min, low)
        if high is not None:
            self.score_max = high if self.score_max is None else max(self.score_max, high)
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.reasoning_rows += other.reasoning_rows
        self.reasoning_cut_rows += other.reasoning_cut_rows
        self.reasoning_tokens += other.reasoning_tokens

    def score_stats(self) -> dict[str, float | int | None]:
        if not self.scored:
            return {"n": 0, "mean": None, "min": None, "max": None}
        return {
            "n": self.scored,
            "mean": self.score_sum / self.scored,
            "min": self.score_min,
            "max": self.score_max,
        }


@dataclass
class RunSummary:
    """What a run did: rows, statuses and scores per judge, time and throughput."""

    rows: int = 0
    seconds: float = 0.0
    load_seconds: float = 0.0
    judges: dict[str, JudgeSummary] = field(default_factory=dict)
    models: dict[str, str] = field(default_factory=dict)
    output: str | None = None
    agreement: dict[str, Any] | None = None
    complete: bool = False  # the output already held this run's finished results: nothing was judged
    resumed_from: int = 0  # rows committed by an earlier, interrupted run of the same command
    retried: dict[str, int] | None = None  # --retry-failed: outputs replaced, by judge
    requests: int = 0  # requests sent to models
    cascade: dict[str, Any] | None = None  # a cascade's shares per stage and compute saved (jurist.cascade)
    units: int | None = None  # a dataset run: the units judged by this run (jurist.engine.corpus)
    bad_shards: dict[str, str] | None = None  # ... and the shards that could not be read, with why

    def add_batch(self, batch: Any, judges: Sequence[str]) -> None:
        """Count one batch of results read back (its statuses and scores; token counts are not known)."""
        self.rows += batch.num_rows
        for name in judges:
            judge = self.judges.setdefault(name, JudgeSummary())
            columns = (
                batch.column(f"{name}.{suffix}").to_pylist() for suffix in ("status", "error", "score")
            )
            for status, error, score in zip(*columns, strict=True):
                judge.count(status, error, score)
            if f"{name}.{REASONING_TOKENS}" in batch.column_names:
                tokens = batch.column(f"{name}.{REASONING_TOKENS}").to_pylist()
                cut = batch.column(f"{name}.{REASONING_CUT}").to_pylist()
                for row_tokens, row_cut in zip(tokens, cut, strict=True):
                    judge.count_reasoning(row_tokens, row_cut)

    def add(self, outputs: Mapping[str, Sequence[JudgeOutput]], models: Mapping[str, str]) -> None:
        """Count one chunk: its rows, and every judge's outputs."""
        self.rows += len(next(iter(outputs.values()), ()))
        self.models.update(models)
        for name, outs in outputs.items():
            judge = self.judges.setdefault(name, JudgeSummary())
            for output in outs:
                judge.add(output)

    def merge(self, other: RunSummary) -> None:
        """Add the counts of another part of this run (a data-parallel worker's chunk): its rows, requests,
        models and every judge's counts."""
        self.rows += other.rows
        self.requests += other.requests
        self.models.update(other.models)
        for name, counts in other.judges.items():
            self.judges.setdefault(name, JudgeSummary()).merge(counts)

    def statuses(self) -> Counter[str]:
        """Every judge's outputs by status, added up (what a progress line counts)."""
        return sum((Counter(j.statuses) for j in self.judges.values()), Counter())

    def counts(self) -> dict[str, Any]:
        """The counts of this part of a run (rows, requests, models, each judge's), as JSON values: what a
        dataset's manifest keeps per unit (:meth:`from_counts` reads them back)."""
        judges = {name: {**asdict(j), "statuses": dict(j.statuses)} for name, j in self.judges.items()}
        return {"rows": self.rows, "requests": self.requests, "models": dict(self.models), "judges": judges}

    @classmethod
    def from_counts(cls, counts: Mapping[str, Any]) -> RunSummary:
        judges = {
            name: JudgeSummary(**{**values, "statuses": Counter(values["statuses"])})
            for name, values in counts.get("judges", {}).items()
        }
        return cls(
            rows=int(counts["rows"]),
            requests=int(counts.get("requests", 0)),
            models=dict(counts.get("models", {})),
            judges=judges,
        )

    @property
    def judge_seconds(self) -> float:
        """Wall time spent judging: the run's time less the time spent loading models."""
        return max(self.seconds - self.load_seconds, 0.0)

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.judge_seconds if self.judge_seconds > 0 else 0.0

    @property
    def completion_tokens(self) -> int:
        return sum(j.completion_tokens for j in self.judges.values())

    @property
    def tokens_per_second(self) -> float:
        return self.completion_tokens / self.judge_seconds if self.judge_seconds > 0 else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "seconds": round(self.seconds, 3),
            "model_load_seconds": round(self.load_seconds, 3),
            "rows_per_second": round(self.rows_per_second, 3),
            "completion_tokens_per_second": round(self.tokens_per_second, 2),
            "output": self.output,
            "judges": {
                name: {
                    "model": self.models.get(name),
                    "statuses": dict(s.statuses),
                    "first_errors": dict(s.first_errors),
                    "score": s.score_stats(),
                    "prompt_tokens": s.prompt_tokens,
                    "completion_tokens": s.completion_tokens,
                    **({"reasoning": s.reasoning()} if s.reasoning_rows else {}),
                }
                for name, s in self.judges.items()
            },
            "panel_agreement": self.agreement,
            "complete": self.complete,
            "resumed_from": self.resumed_from,
            "retried": self.retried,
            "requests": self.requests,
            **({"cascade": self.cascade} if self.cascade is not None else {}),
            **({"units": self.units} if self.units is not None else {}),
            **({"bad_shards": self.bad_shards} if self.bad_shards else {}),
        }

    def failures(self) -> tuple[int, int, str | None, str | None]:
        """(rows judged, rows with some status other than ``ok``... counted per judge: failed outputs, the
        most common failing status and its first error)."""
        total = sum(sum(j.statuses.values()) for j in self.judges.values())
        failing: Counter[str] = Counter()
        errors: dict[str, str] = {}
        for judge in self.judges.values():
            for status, count in judge.statuses.items():
                if status != "ok":
                    failing[status] += count
                    errors.setdefault(status, judge.first_errors.get(status, ""))
        if not failing:
            return total, 0, None, None
        status, count = failing.most_common(1)[0]
        return total, sum(failing.values()), status, errors.get(status)


def format_summary(summary: Mapping[str, Any]) -> str:
    """A run summary (:meth:`RunSummary.as_dict`) as text: rows, time and throughput, then per judge its
    statuses and score statistics, then the panel's agreement."""
    load = summary["model_load_seconds"]
    load_text = f"model load {load:.1f} s; " if load else ""
    lines = [
        f"{summary['rows']} rows -> {summary['output']} in {summary['seconds']:.1f} s "
        f"({load_text}{summary['rows_per_second']:.2f} rows/s, "
        f"{summary['completion_tokens_per_second']:.1f} output tokens/s while judging)"
    ]
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
        lines.append(f"  {name} [{judge['model']}]: {statuses}; {stats}")
        thought = judge.get("reasoning")
        if thought:
            lines.append(
                f"    reasoning: {thought['tokens_per_row']:.1f} tokens per row; the budget cut "
                f"{thought['cut_rows']} of {thought['rows']} rows ({100 * thought['cut_share']:.1f} %)"
            )
    if summary.get("panel_agreement"):
        lines.append(format_agreement(summary["panel_agreement"]))
    if summary.get("cascade"):
        from jurist.engine.cascade_report import format_cascade

        lines.append(format_cascade(summary["cascade"]))
    return "\n".join(lines)


def format_agreement(report: Mapping[str, Any]) -> str:
    """A panel's agreement report (:meth:`~jurist.judges.panel.Panel.agreement`) as text."""
    lines = [f"  panel of {', '.join(report['judges'])} (quorum {report['quorum']}):"]
    for name, stats in report["fields"].items():
        text = f"    {name}: Krippendorff's alpha ({stats['alpha_level']}) {num(stats['krippendorff_alpha'])}"
        if stats["cohen_kappa"]:
            text += "; Cohen's kappa " + ", ".join(f"{k} {num(v)}" for k, v in stats["cohen_kappa"].items())
        lines.append(text)
    for judge, bias in (report.get("position_bias") or {}).items():
        lines.append(f"    position bias of {judge}: {num(bias)} of verdicts picked the first-shown response")
    if "inconclusive_rows" in report:
        lines.append(f"    inconclusive rows (below quorum): {report['inconclusive_rows']}")
    return "\n".join(lines)


def num(value: float | None) -> str:
    """A statistic for humans: three decimals, or n/a."""
    return "n/a" if value is None else f"{value:.3f}"
