"""A progress line for long runs: rows done of the total, rows per second, ETA, and counts by status.

Drawn with tqdm on a stream of the caller's choice (the CLI gives it the terminal's stderr, even while
library logs go to a file). On a terminal the line is redrawn in place about twice a second; elsewhere (a
pipe, a CI log) a line is written about every 30 seconds, so logs stay short.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import IO, Any

from jurist.judges.outputs import JudgeOutput


class Progress:
    """Counts rows and statuses as chunks finish. ``total``: rows expected (None: unknown)."""

    def __init__(self, total: int | None, *, stream: IO[str] | None = None, initial: int = 0) -> None:
        from tqdm import tqdm

        interactive = bool(stream is not None and getattr(stream, "isatty", lambda: False)())
        self.statuses: Counter[str] = Counter()
        self._bar: Any = tqdm(
            total=total,
            initial=initial,
            unit="rows",
            file=stream,
            mininterval=0.5 if interactive else 30.0,
            dynamic_ncols=interactive,
            disable=stream is None,
            smoothing=0.1,
            bar_format="{desc}{n_fmt}/{total_fmt} rows [{elapsed}<{remaining}, {rate_fmt}]{postfix}"
            if total
            else "{desc}{n_fmt} rows [{elapsed}, {rate_fmt}]{postfix}",
        )

    def update(self, outputs: Mapping[str, Sequence[JudgeOutput]]) -> None:
        """One chunk done: its rows, and every judge's statuses."""
        statuses: Counter[str] = Counter()
        for outs in outputs.values():
            statuses.update(o.status for o in outs)
        self.add(len(next(iter(outputs.values()), ())), statuses)

    def add(self, rows: int, statuses: Mapping[str, int]) -> None:
        """``rows`` done, with every judge's statuses counted (a chunk judged in another process)."""
        self.statuses.update(statuses)
        self._show(rows)

    def advance(self, statuses: Iterable[str]) -> None:
        """Rows done, one status each (runs that are not judge runs: ``jurist batch``)."""
        counted = Counter(statuses)
        self.statuses.update(counted)
        self._show(sum(counted.values()))

    def _show(self, rows: int) -> None:
        self._bar.set_postfix_str(" ".join(f"{k}={v}" for k, v in self.statuses.most_common()), refresh=False)
        self._bar.update(rows)

    def close(self) -> None:
        self._bar.close()
