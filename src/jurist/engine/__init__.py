"""The engine: planning (:mod:`.plan`), dispatch (:mod:`.dispatch`), assembly (:mod:`.assemble`), the run
summary (:mod:`.summary`) and the :class:`~jurist.engine.core.Engine` facade over them."""

from jurist.engine.core import Engine
from jurist.engine.summary import RunSummary

__all__ = ["Engine", "RunSummary"]
