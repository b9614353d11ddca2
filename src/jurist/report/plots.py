"""The report's figures, drawn with matplotlib (Agg) and returned as ``data:image/png;base64,...`` URIs."""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from jurist.errors import JuristError

WIDTH, HEIGHT, DPI = 5.2, 3.0, 90
SCATTER_POINTS = 4000


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError as exc:
        raise JuristError("jurist report draws with matplotlib: pip install 'jurist[report]'") from exc
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _encode(fig: Any) -> str:
    plt = _pyplot()
    buffer = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buffer, format="png", dpi=DPI)
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _figure() -> tuple[Any, Any]:
    fig, ax = _pyplot().subplots(figsize=(WIDTH, HEIGHT))
    return fig, ax


def histogram(values: np.ndarray, title: str, xlabel: str) -> str:
    """A histogram of a judge's scores (or confidences)."""
    fig, ax = _figure()
    distinct = np.unique(values)
    bins: Any = 20
    if 0 < len(distinct) <= 20 and np.allclose(distinct, np.round(distinct)):
        bins = np.append(distinct, distinct[-1] + 1) - 0.5  # one bar per whole value
    ax.hist(values, bins=bins, color="#4c72b0", edgecolor="white")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("rows")
    return _encode(fig)


def reliability(table: Sequence[Mapping[str, Any]], title: str) -> str:
    """Accuracy against mean confidence per bin, sized by rows, beside the diagonal of perfect calibration."""
    fig, ax = _figure()
    ax.plot([0, 1], [0, 1], linestyle="--", color="grey", label="calibrated")
    xs = [row["mean_confidence"] for row in table]
    ys = [row["accuracy"] for row in table]
    sizes = [20 + 200 * row["rows"] / max(r["rows"] for r in table) for row in table]
    ax.plot(xs, ys, color="#c44e52")
    ax.scatter(xs, ys, s=sizes, color="#c44e52", label="judge", zorder=3)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("confidence")
    ax.set_ylabel("accuracy against labels")
    ax.set_title(title)
    ax.legend(loc="upper left")
    return _encode(fig)


def length_scatter(
    lengths: np.ndarray,
    scores: np.ndarray,
    fit: Mapping[str, Any] | None,
    unit: str,
    title: str,
    seed: int = 0,
) -> str:
    """Score against length (a sample of at most 4,000 rows) with the OLS line fitted on every row."""
    fig, ax = _figure()
    if len(lengths) > SCATTER_POINTS:
        keep = np.random.default_rng(seed).choice(len(lengths), SCATTER_POINTS, replace=False)
        lengths, scores = lengths[keep], scores[keep]
    ax.scatter(lengths, scores, s=6, alpha=0.4, color="#4c72b0")
    if fit is not None and len(lengths):
        xs = np.linspace(float(lengths.min()), float(lengths.max()), 50)
        ax.plot(xs, fit["intercept"] + fit["slope"] * xs, color="#c44e52", label=f"slope {fit['slope']:.4f}")
        ax.legend(loc="best")
    ax.set_xlabel(f"length ({unit})")
    ax.set_ylabel("score")
    ax.set_title(title)
    return _encode(fig)


def bars(items: Sequence[tuple[str, Mapping[str, Any]]], title: str, reference: float | None = None) -> str:
    """Shares with their intervals as bars (position bias: first-shown wins, order consistency)."""
    fig, ax = _figure()
    names = [name for name, _ in items]
    values = [d["estimate"] or 0.0 for _, d in items]
    errors = [
        [v - (d["low"] if d["low"] is not None else v) for v, (_, d) in zip(values, items, strict=True)],
        [(d["high"] if d["high"] is not None else v) - v for v, (_, d) in zip(values, items, strict=True)],
    ]
    ax.bar(names, values, yerr=errors, capsize=6, color=["#4c72b0", "#55a868", "#8172b2"][: len(items)])
    if reference is not None:
        ax.axhline(reference, linestyle="--", color="grey")
    ax.set_ylim(0, 1)
    ax.set_title(title)
    return _encode(fig)


def intervals(rows: Sequence[tuple[str, Mapping[str, Any]]], title: str) -> str:
    """Estimates with their intervals, one line each (judge only, labels only, PPI++)."""
    fig, ax = _figure()
    for i, (_name, d) in enumerate(rows):
        ax.errorbar(
            d["estimate"],
            i,
            xerr=[[d["estimate"] - d["low"]], [d["high"] - d["estimate"]]],
            fmt="o",
            capsize=5,
        )
        ax.annotate(f"{d['estimate']:.3f}", (d["estimate"], i), textcoords="offset points", xytext=(0, 8))
    ax.set_yticks(range(len(rows)), [name for name, _ in rows])
    ax.set_ylim(-0.6, len(rows) - 0.4)
    ax.set_xlabel("mean label")
    ax.set_title(title)
    return _encode(fig)
