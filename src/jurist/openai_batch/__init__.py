"""OpenAI batch files on local engines (``jurist batch``), and judge runs through hosted batch APIs.

:class:`BatchRun` runs a batch input file resumably; :mod:`jurist.openai_batch.shapes` holds OpenAI's line
shapes; :mod:`jurist.openai_batch.emit` writes a judge run's requests as a batch file and
:mod:`jurist.openai_batch.results` answers a judge run from a batch results file.
"""

from __future__ import annotations

from jurist.openai_batch.requests import Served
from jurist.openai_batch.runner import BatchRun, BatchSummary

__all__ = ["BatchRun", "BatchSummary", "Served"]
