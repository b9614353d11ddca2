"""What a million judgments cost, from a bench run's throughput and the prices the user gives.

* A local engine is paid by the hour: ``$ per million judgments = hourly price / (rows/s x 3600) x 10^6``,
  where the hourly price is ``--gpu-hour-price`` times the GPUs it pays for (``per="gpu"``: ``gpus``, by
  default the machine's GPUs, at least 1) or the price itself (``per="machine"``).
* A remote engine (an OpenAI-compatible API) is paid by the token: ``$ per million judgments = prompt
  tokens per judgment x $ per million input tokens + output tokens per judgment x $ per million output
  tokens``, the tokens per judgment being the run's totals over its rows.

A judgment is one output row (a pairwise row's two orders are one judgment). The warm run is priced.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal

from jurist.errors import ConfigError

REMOTE_ENGINES = ("openai", "remote_vllm")
MILLION = 1_000_000


@dataclass(frozen=True)
class Prices:
    """What compute costs: ``gpu_hour`` dollars per hour ``per`` GPU (times ``gpus``) or per machine; and
    for remote engines dollars per million input and output tokens."""

    gpu_hour: float | None = None
    per: Literal["gpu", "machine"] = "gpu"
    gpus: int | None = None
    per_million_in: float | None = None
    per_million_out: float | None = None

    def __post_init__(self) -> None:
        for name in ("gpu_hour", "per_million_in", "per_million_out"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise ConfigError(f"{name} must not be negative, got {value}")
        if self.gpus is not None and self.gpus < 1:
            raise ConfigError(f"gpus must be at least 1, got {self.gpus}")

    @property
    def any(self) -> bool:
        return self.gpu_hour is not None or self.per_million_in is not None

    def hourly(self, machine_gpus: int) -> tuple[float, int] | None:
        """The hourly price of the machine as measured, and the GPUs it pays for (None: no hourly price)."""
        if self.gpu_hour is None:
            return None
        units = 1 if self.per == "machine" else self.gpus or max(1, machine_gpus)
        return self.gpu_hour * units, units


def parse_token_prices(text: str) -> tuple[float, float]:
    """``--price-per-million IN,OUT`` as two floats (dollars per million input and output tokens)."""
    parts = [p.strip() for p in text.split(",")]
    try:
        if len(parts) != 2:
            raise ValueError
        prices = float(parts[0]), float(parts[1])
    except ValueError:
        raise ConfigError(
            f"--price-per-million takes IN,OUT (dollars per million tokens), got {text!r}"
        ) from None
    return prices


def per_million_by_time(rows_per_s: float, hourly: float) -> float:
    """Dollars per million judgments on a machine paid ``hourly`` that judges ``rows_per_s``."""
    return hourly / (rows_per_s * 3600.0) * MILLION


def per_million_by_tokens(
    prompt_per_row: float, output_per_row: float, price_in: float, price_out: float
) -> float:
    """Dollars per million judgments at token prices (dollars per million tokens)."""
    return prompt_per_row * price_in + output_per_row * price_out


def cost(entry: Mapping[str, Any], prices: Prices, machine_gpus: int) -> dict[str, Any] | None:
    """The cost of one measurement (None when no price applies, or it judged nothing)."""
    warm = entry.get("warm") or {}
    rows, rate = warm.get("rows") or 0, warm.get("rows_per_s") or 0.0
    if not rows or rate <= 0:
        return None
    remote = entry.get("engine") in REMOTE_ENGINES
    if remote and prices.per_million_in is not None and prices.per_million_out is not None:
        prompt, output = warm["prompt_tokens"] / rows, warm["output_tokens"] / rows
        value = per_million_by_tokens(prompt, output, prices.per_million_in, prices.per_million_out)
        return {
            "usd_per_million_judgments": _significant(value),
            "basis": "tokens",
            "prompt_tokens_per_judgment": round(prompt, 2),
            "output_tokens_per_judgment": round(output, 2),
            "usd_per_million_tokens": [prices.per_million_in, prices.per_million_out],
        }
    hourly = prices.hourly(machine_gpus)
    if hourly is None or remote:
        return None
    price, units = hourly
    return {
        "usd_per_million_judgments": _significant(per_million_by_time(rate, price)),
        "basis": "hourly",
        "usd_per_hour": round(price, 6),
        "priced_units": units,
        "per": prices.per,
    }


def _significant(value: float) -> float:
    """``value`` to eight significant digits (a fast scripted run costs fractions of a cent)."""
    return float(f"{value:.8g}")


def add_costs(bench: dict[str, Any], prices: Prices) -> dict[str, Any]:
    """``bench`` with a ``cost`` in each measurement a price applies to, and the prices in its settings."""
    if not prices.any:
        return bench
    machine_gpus = len(((bench.get("environment") or {}).get("machine") or {}).get("gpus") or [])
    results = []
    for entry in bench.get("results", []):
        priced = cost(entry, prices, machine_gpus) if "error" not in entry else None
        results.append({**entry, "cost": priced} if priced is not None else dict(entry))
    settings = {**bench.get("settings", {}), "prices": asdict(prices)}
    return {**bench, "settings": settings, "results": results}
