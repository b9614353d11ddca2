"""``jurist bench``: throughput of judge models on the user's own rows (see :mod:`jurist.bench.runner`)."""

from __future__ import annotations

from jurist.bench.report import markdown, write
from jurist.bench.runner import MODES, BenchSpec, run_bench

__all__ = ["MODES", "BenchSpec", "markdown", "run_bench", "write"]
