"""One engine at a time on two test workers: pytest-xdist's ``loadscope`` with every module that may load a
model in one scope, ``engine``, which one worker runs in collection order while the others share the rest.

xdist's controller collects nothing, so it tells such a module by its text (:func:`may_load_a_model`); each
worker checks that rule against the tests it collected (``tests/conftest.py``), so a module whose engine
tests the rule misses fails the run instead of running its engine beside another.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from xdist.scheduler import LoadScopeScheduling

# what a module that loads a model names: a model fixture, or the mark of a test that starts one itself
MODEL_NAMES = ("tiny_model_dir", "smollm2_dir", "mark.engine")


def may_load_a_model(module: Path) -> bool:
    """Whether a test module names a model fixture or the ``engine`` mark."""
    text = module.read_text(encoding="utf-8")
    return any(name in text for name in MODEL_NAMES)


class OneEngineScheduling(LoadScopeScheduling):
    """``loadscope`` (one module or class per unit of work) with the modules that may load a model merged
    into one unit, ``engine``."""

    def __init__(self, config: Any, log: Any = None) -> None:
        super().__init__(config, log)
        self._root = Path(config.rootpath)
        self._engine: dict[str, bool] = {}

    def _split_scope(self, nodeid: str) -> str:
        module = nodeid.split("::", 1)[0]
        if module not in self._engine:
            path = self._root / module
            self._engine[module] = path.is_file() and may_load_a_model(path)
        return "engine" if self._engine[module] else super()._split_scope(nodeid)
