"""Which optional packages this machine has, for tests that skip (saying why) where one is missing.

A plain module, not part of ``conftest.py``: the test folders have no ``__init__.py``, so pytest puts each
folder's ``conftest.py`` on the path under the one name ``conftest``, and an import of it would get
whichever was loaded last.
"""

from __future__ import annotations

import importlib.util


def have(*modules: str) -> bool:
    """Whether every module named can be imported here (found, not imported)."""
    return all(importlib.util.find_spec(m) is not None for m in modules)
