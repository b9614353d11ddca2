"""What ``jurist bench`` writes: ``bench.json``, ``bench.md`` (a Markdown table) and two PNG plots.

``rows_per_s.png``: warm rows/s per model, one bar per judge and mode; ``tokens_per_s.png``: prompt and
output tokens/s per (model, judge, mode); with prices (:mod:`jurist.bench.cost`), ``cost_per_million.png``:
dollars per million judgments per (model, judge, mode), and a ``$/M judgments`` column beside rows/s.
With labels (:mod:`jurist.bench.quality`), the accuracy with its 95 % interval, the majority and
longer-answer baselines on the same rows ("not beaten" where the judge does not beat one), the order
consistency and the first-shown rate follow, and the terminal lines list every baseline with its
interval. Every bar carries its number. matplotlib is imported
inside :func:`plot` (the ``bench`` extra), with its file-only backend.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from jurist.analysis.text import format_baselines, interval_text
from jurist.analysis.text import percent_text as _pct

COLUMNS = (
    ("model", "model"),
    ("judge", "judge"),
    ("mode", "mode"),
    ("rows/s", "warm.rows_per_s"),
    ("valid rows/s", "warm.valid_rows_per_s"),
    ("parse rate", "warm.parse_rate"),
    ("prompt tok/s", "warm.prompt_tokens_per_s"),
    ("output tok/s", "warm.output_tokens_per_s"),
    ("prefix-cache hits", "warm.prefix_cache_hit_rate"),
    ("p50 s", "warm.latency_p50_s"),
    ("p95 s", "warm.latency_p95_s"),
    ("load s", "load_seconds"),
    ("cold s", "cold.seconds"),
    ("peak RSS MB", "warm.peak_rss_mb"),
    ("peak GPU MB", "warm.peak_gpu_mb"),
    ("batched / one-row", "batched_over_one_row"),
)


def lookup(entry: Mapping[str, Any], dotted: str) -> Any:
    value: Any = entry
    for key in dotted.split("."):
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


QUALITY_COLUMNS = (
    ("accuracy [95 % CI]", "quality.accuracy"),
    ("majority baseline", "quality.baselines.majority"),
    ("longer-answer baseline", "quality.baselines.longer answer"),
    ("order consistency", "quality.order_consistency"),
    ("first shown", "quality.first_shown_rate"),
)


REASONING_COLUMNS = (
    ("reasoning tok/judgment", "warm.reasoning_tokens_per_judgment"),
    ("reasoning cut", "warm.reasoning_cut_share"),
)


def _cell(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, Mapping) and "beaten" in value:  # a baseline (jurist.stats.baselines)
        return baseline_cell(value)
    if isinstance(value, Mapping) and "estimate" in value:  # a share with its interval (bench/quality)
        return interval_text(value) if value.get("estimate") is not None else "–"
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1000 else f"{value:.0f}"
    return str(value).replace("|", "\\|")


def baseline_cell(entry: Mapping[str, Any]) -> str:
    """A baseline's accuracy, and "not beaten" where the judge does not beat it."""
    accuracy = entry.get("estimate")
    if accuracy is None:
        return "–"
    return _pct(accuracy) + (" (not beaten)" if entry.get("beaten") == "no" else "")


def columns(bench: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """The table's columns: with a cost in any measurement, ``$/M judgments`` follows rows/s; with labels,
    the quality columns follow that."""
    results = bench.get("results", [])
    head = list(COLUMNS[:4])
    if any("cost" in e for e in results):
        head.append(("$/M judgments", "cost.usd_per_million_judgments"))
    if any("quality" in e for e in results):
        head += QUALITY_COLUMNS
    if any("reasoning_cut_share" in (e.get("warm") or {}) for e in results):
        head += REASONING_COLUMNS
    return (*head, *COLUMNS[4:])


def price_line(bench: Mapping[str, Any]) -> str | None:
    """How the costs were computed, for the table's header."""
    prices = bench.get("settings", {}).get("prices")
    if not prices:
        return None
    parts = []
    if prices.get("gpu_hour") is not None:
        unit = "per machine" if prices.get("per") == "machine" else "per GPU"
        parts.append(f"${prices['gpu_hour']}/h {unit}: $/M judgments = $/h / (rows/s x 3600) x 10^6")
    if prices.get("per_million_in") is not None:
        parts.append(
            f"remote engines ${prices['per_million_in']} / ${prices['per_million_out']} per million input / "
            "output tokens: $/M judgments = tokens in per judgment x $in + tokens out per judgment x $out"
        )
    return "Cost: " + "; ".join(parts) + "."


def markdown(bench: Mapping[str, Any]) -> str:
    """The results as a Markdown table (a refused measurement shows its reason), under the machine."""
    table = columns(bench)
    env = bench.get("environment", {})
    machine = env.get("machine", {})
    gpus = ", ".join(f"{g['name']} ({g['memory_mb']:.0f} MB)" for g in machine.get("gpus", [])) or "no GPU"
    versions = ", ".join(f"{k} {v}" for k, v in env.get("versions", {}).items())
    settings = bench.get("settings", {})
    lines = [
        f"Machine: {machine.get('cpu')}, {machine.get('cores')} cores, "
        f"{machine.get('memory_gb', '?')} GB; {gpus}.",
        f"Versions: {versions}.",
        f"{settings.get('rows')} rows, best of {settings.get('repeat')} warm runs; cold = the first "
        f"{settings.get('cold_rows')} rows on the fresh engine.",
        *([line] if (line := price_line(bench)) else []),
        "",
        "| " + " | ".join(title for title, _ in table) + " |",
        "|" + "---|" * len(table),
    ]
    for entry in bench.get("results", []):
        if "error" in entry:
            lines.append(
                f"| {_cell(entry.get('model'))} | {_cell(entry['judge'])} | {entry['mode']} | "
                f"refused: {_cell(entry['error'])} |" + " |" * (len(table) - 4)
            )
            continue
        lines.append("| " + " | ".join(_cell(lookup(entry, key)) for _, key in table) + " |")
    cascades = cascade_lines(bench)
    if cascades:
        lines += ["", "Cascades:", ""]
        lines += [f"  {line.strip()}" if line.startswith("  ") else f"- {line}" for line in cascades]
    return "\n".join(lines) + "\n"


def cascade_lines(bench: Mapping[str, Any]) -> list[str]:
    """Per cascade measured: rows decided per stage; its rows/s against its last stage's alone over the same
    rows, with the seconds saved as measured and as the cascade's report estimates them; the calibration's
    seconds and the agreement with the labels, when thresholds were calibrated."""
    out: list[str] = []
    for entry in bench.get("results", []):
        figures = entry.get("cascade")
        if "error" in entry or not figures:
            continue
        decided = ", ".join(
            f"stage {s['stage']} ({s['judge']}) {s['decided']} ({_pct(s['share'])})"
            for s in figures["stages"]
        )
        abstained = f", abstained {figures['abstained']}" if figures.get("abstained") else ""
        out.append(f"{entry['judge']}: decided {decided}{abstained}; {figures['requests']} requests")
        versus = figures.get("vs_last_stage")
        if versus:
            measured = versus["saved_measured"]["seconds"]["share"]
            estimated = (versus.get("saved_estimated") or {}).get("seconds", {}).get("share")
            off = (versus.get("estimate_over_measured") or {}).get("seconds")
            out.append(
                f"  {versus['cascade_rows_per_s']} rows/s against {versus['last_stage_rows_per_s']} for the "
                f"last stage alone ({versus['last_stage']}) over the same {versus['rows']} rows: "
                f"{versus['rows_per_s_ratio']}x; seconds saved: measured {_pct(measured)}, estimated "
                f"{_pct(estimated)} (from {versus['estimated_from']}; that estimate of the last stage on "
                f"every row is {off if off is not None else 'n/a'}x its measured seconds)"
            )
        else:
            saved = (figures["report"].get("saved") or {}).get("seconds", {}).get("share")
            out.append(f"  seconds saved against the last stage on every row, estimated: {_pct(saved)}")
        if figures.get("calibration_seconds") is not None:
            out.append(f"  calibration: {figures['calibration_seconds']} s")
        agreement = (figures.get("agreement") or {}).get(figures.get("name"))
        if agreement:
            out.append(
                f"  agreement with the labels: {_pct(agreement['accuracy']['estimate'])} of "
                f"{agreement['labelled_rows']} labelled rows"
            )
    return out


def _label(entry: Mapping[str, Any], several_judges: bool) -> str:
    return f"{entry['judge']}\n{entry['mode']}" if several_judges else str(entry["mode"])


def plot(bench: Mapping[str, Any], folder: Path) -> list[Path]:
    """Write ``rows_per_s.png`` and ``tokens_per_s.png`` into ``folder``; their paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    measured = [e for e in bench.get("results", []) if "error" not in e]
    models = list(dict.fromkeys(str(e["model"]) for e in measured))
    several = len({e["judge"] for e in measured}) > 1
    series = list(dict.fromkeys(_label(e, several) for e in measured))
    paths = []

    figure, axes = plt.subplots(figsize=(max(6.0, 1.6 * len(models) * max(1, len(series))), 4.5))
    width = 0.8 / max(1, len(series))
    for number, name in enumerate(series):
        values = [
            next(
                (
                    lookup(e, "warm.rows_per_s")
                    for e in measured
                    if str(e["model"]) == m and _label(e, several) == name
                ),
                0.0,
            )
            or 0.0
            for m in models
        ]
        positions = [i + (number - (len(series) - 1) / 2) * width for i in range(len(models))]
        bars = axes.bar(positions, values, width, label=name.replace("\n", " / "))
        axes.bar_label(bars, labels=[f"{v:.3g}" for v in values], fontsize=8)
    axes.set_xticks(range(len(models)), [_short(m) for m in models], fontsize=8)
    axes.set_ylabel("rows / s (warm, best run)")
    axes.set_title("jurist bench: rows per second by model and mode")
    axes.legend(fontsize=8)
    figure.tight_layout()
    paths.append(_save(figure, folder / "rows_per_s.png"))
    plt.close(figure)

    labels = [f"{_short(str(e['model']))}\n{_label(e, several)}" for e in measured]
    figure, axes = plt.subplots(figsize=(max(6.0, 1.4 * len(measured)), 4.5))
    for offset, key, title in (
        (-0.2, "prompt_tokens_per_s", "prompt"),
        (0.2, "output_tokens_per_s", "output"),
    ):
        values = [float(lookup(e, f"warm.{key}") or 0.0) for e in measured]
        bars = axes.bar([i + offset for i in range(len(measured))], values, 0.4, label=f"{title} tokens/s")
        axes.bar_label(bars, labels=[f"{v:.0f}" for v in values], fontsize=8)
    axes.set_xticks(range(len(measured)), labels, fontsize=7)
    axes.set_ylabel("tokens / s (warm, best run)")
    axes.set_title("jurist bench: tokens per second")
    axes.legend(fontsize=8)
    figure.tight_layout()
    paths.append(_save(figure, folder / "tokens_per_s.png"))
    plt.close(figure)

    priced = [e for e in measured if "cost" in e]
    if priced:
        labels = [f"{_short(str(e['model']))}\n{_label(e, several)}" for e in priced]
        values = [float(e["cost"]["usd_per_million_judgments"]) for e in priced]
        figure, axes = plt.subplots(figsize=(max(6.0, 1.4 * len(priced)), 4.5))
        bars = axes.bar(range(len(priced)), values, 0.6)
        rates = [lookup(e, "warm.rows_per_s") for e in priced]
        axes.bar_label(
            bars, labels=[f"${v:,.2f}\n{r:.3g} rows/s" for v, r in zip(values, rates, strict=True)]
        )
        axes.set_xticks(range(len(priced)), labels, fontsize=7)
        axes.set_ylabel("$ per million judgments (warm, best run)")
        axes.set_title("jurist bench: what a million judgments cost")
        axes.margins(y=0.2)
        figure.tight_layout()
        paths.append(_save(figure, folder / "cost_per_million.png"))
        plt.close(figure)
    return paths


def _short(model: str) -> str:
    name = model.split(" (")[0].rstrip("/")
    return name.rsplit("/", 1)[-1] if "/" in name and len(name) > 28 else name


def _save(figure: Any, path: Path) -> Path:
    figure.savefig(path, dpi=110)
    return path


def write(bench: Mapping[str, Any], folder: Path) -> dict[str, Path]:
    """``bench.json``, ``bench.md`` and the plots, in ``folder`` (created)."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {"json": folder / "bench.json", "markdown": folder / "bench.md"}
    files["json"].write_text(json.dumps(bench, indent=2, default=str) + "\n")
    files["markdown"].write_text(markdown(bench))
    for path in plot(bench, folder):
        files[path.stem] = path
    return files


def summary_lines(bench: Mapping[str, Any]) -> Sequence[str]:
    """One line per measurement, for the terminal."""
    out = []
    for e in bench.get("results", []):
        if "error" in e:
            out.append(f"{e.get('model')} / {e['judge']} / {e['mode']}: refused: {e['error']}")
        else:
            w = e["warm"]
            cost = e.get("cost")
            priced = f", ${cost['usd_per_million_judgments']:,.2f} per million judgments" if cost else ""
            quality = e.get("quality")
            rated = (
                f", accuracy {interval_text(quality['accuracy'])} on {quality['labelled_rows']} labelled rows"
                if quality
                else ""
            )
            thought = (
                f", reasoning {w['reasoning_tokens_per_judgment']} tokens per judgment "
                f"({_pct(w['reasoning_cut_share'])} cut by the budget)"
                if "reasoning_cut_share" in w
                else ""
            )
            out.append(
                f"{e['model']} / {e['judge']} / {e['mode']}: {w['rows_per_s']} rows/s, "
                f"{w['output_tokens_per_s']} output tok/s, parse rate {w['parse_rate']}"
                f"{priced}{rated}{thought}"
            )
            if quality and quality.get("baselines"):
                out += format_baselines(quality["baselines"])
    return [*out, *cascade_lines(bench)]
