"""One engine at a time on two test workers: pytest-xdist's ``loadscope`` with every module that may load a
model in one scope, ``engine``, which one worker runs in collection order while the others share the rest.

xdist's controller collects nothing, so it tells such a module by its text (``may_load_a_model`` in
``tests/conftest.py``, which also checks that rule on each worker against the tests it collected).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from xdist.scheduler import LoadScopeScheduling


class OneEngineScheduling(LoadScopeScheduling):
    """``loadscope`` (one module or class per unit of work) with the modules for which ``may_load_a_model``
    holds merged into one unit, ``engine``."""

    def __init__(self, config: Any, log: Any, may_load_a_model: Callable[[Path], bool]) -> None:
        super().__init__(config, log)
        self._root = Path(config.rootpath)
        self._may_load_a_model = may_load_a_model
        self._engine: dict[str, bool] = {}

    def _split_scope(self, nodeid: str) -> str:
        module = nodeid.split("::", 1)[0]
        if module not in self._engine:
            path = self._root / module
            self._engine[module] = path.is_file() and self._may_load_a_model(path)
        return "engine" if self._engine[module] else super()._split_scope(nodeid)
