"""Guards that keep the layout as docs/ARCHITECTURE.md describes it: small modules, no import cycles, one
owner for the response format and for vLLM's argument names, and an ``import jurist`` that loads no engine.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "jurist"
MAX_LINES = 500
HEAVY = ("torch", "vllm", "transformers", "scipy")


def modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name, for its ``__init__``)."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def imported(name: str, path: Path, known: set[str]) -> Iterator[str]:
    """The jurist modules a module imports, at module level or inside functions alike."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names
            ]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                yield target
            # importing jurist.a.b first runs jurist/a/__init__.py: an edge too (the root package, which
            # re-exports everything for users, is left out: no module inside jurist imports it)
            parent = target.rpartition(".")[0]
            while parent.count(".") >= 1:
                if parent in known and parent != name and not name.startswith(parent + "."):
                    yield parent
                parent = parent.rpartition(".")[0]


def test_no_module_is_over_500_lines() -> None:
    long = {
        name: n for name, path in modules().items() if (n := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}


def test_no_module_imports_another_in_a_cycle() -> None:
    found = modules()
    known = set(found)
    graph = {name: set(imported(name, path, known)) for name, path in found.items()}
    # Tarjan's strongly connected components: any component of more than one module is a cycle
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in graph[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for name in graph:
        if name not in index:
            visit(name)
    assert cycles == []


# The layers, lowest first: a package may import its own modules and packages of lower layers only.
# Packages of one layer are independent of each other.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "_version", "records"),
    ("io",),
    ("labels", "stats"),  # labels: the labels file, label sources and joining, sampling; stats: the numbers
    ("analysis",),
    ("config",),
    ("models",),
    ("answer",),
    ("render", "scoring"),  # scoring: one object per scoring mode (GENERATE, LOGPROBS, PROBE)
    ("judges",),
    ("backends",),
    ("engine",),
    ("cascade", "scikitplots", "conversation", "api", "jury", "report", "openai_batch", "labelling", "probe"),
    ("launch",),  # the front door: a run spec and its placement -> engine and batch source
    ("bench",),  # measurements: runs through the front door, timed
    ("cli",),
    ("__main__",),  # python -m jurist: runs the command line
)


def package_of(module: str) -> str:
    """``jurist.engine.core`` -> ``engine``; ``jurist.api`` -> ``api``; ``jurist`` -> ``jurist``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def layer_of(package: str) -> int:
    for index, members in enumerate(LAYERS):
        if package in members:
            return index
    raise AssertionError(f"package {package!r} is in no layer: add it to LAYERS and docs/ARCHITECTURE.md")


def upward_imports() -> list[str]:
    found = modules()
    known = set(found)
    wrong = []
    for name, path in found.items():
        source = package_of(name)
        if source == "jurist":  # the root package re-exports the public names for users
            continue
        for target in set(imported(name, path, known)):
            other = package_of(target)
            if other != source and layer_of(other) >= layer_of(source):
                wrong.append(f"{name} -> {target}")
    return sorted(wrong)


def test_every_import_goes_down_a_layer() -> None:
    assert upward_imports() == []


def test_every_package_has_a_layer_named_in_the_architecture_doc() -> None:
    doc = (SRC.parent / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    packages = {package_of(name) for name in modules()} - {"jurist"}
    for package in packages:
        layer_of(package)
        assert f"`{package}" in doc, f"docs/ARCHITECTURE.md does not name {package}"


def test_the_layer_check_sees_package_init_edges(tmp_path: Path) -> None:
    code = "from jurist.answer.formats import answer_format\n"
    path = tmp_path / "m.py"
    path.write_text(code)
    known = {"jurist.config.loading", "jurist.answer", "jurist.answer.formats"}
    assert set(imported("jurist.config.loading", path, known)) == {"jurist.answer.formats", "jurist.answer"}


def test_each_module_imports_alone_without_the_root_package() -> None:
    """Import every module with an empty ``jurist`` package in place of the root one, which imports
    everything in an order that can hide a cycle. The modules are split between two interpreters that run
    at once (each module's own imports dominate the time)."""
    names = sorted(set(modules()) - {"jurist", "jurist.__main__"})
    probe = (
        "import sys, types\n"
        "names = sys.argv[1:]\n"
        "failed = []\n"
        "for name in names:\n"
        "    for loaded in [m for m in sys.modules if m == 'jurist' or m.startswith('jurist.')]:\n"
        "        del sys.modules[loaded]\n"
        "    root = types.ModuleType('jurist')\n"
        f"    root.__path__ = [{str(PACKAGE)!r}]\n"
        "    sys.modules['jurist'] = root\n"
        "    try:\n"
        "        __import__(name)\n"
        "    except Exception as exc:\n"
        "        failed.append(f'{name}: {type(exc).__name__}: {exc}')\n"
        "print(failed)\n"
    )
    halves = [names[0::2], names[1::2]]
    running = [
        subprocess.Popen(
            [sys.executable, "-c", probe, *half], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for half in halves
    ]
    for process in running:
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err[-2000:]
        assert out.strip().splitlines()[-1] == "[]"


def test_the_cycle_check_sees_imports_inside_functions(tmp_path: Path) -> None:
    code = "def f():\n    from jurist.engine.core import Engine\n"
    path = tmp_path / "m.py"
    path.write_text(code)
    assert list(imported("jurist.x", path, {"jurist.x", "jurist.engine.core"})) == ["jurist.engine.core"]


def _format_comparisons(path: Path) -> list[int]:
    """Lines where a response format is compared (``ResponseFormat.X`` or ``.response_format`` in a test)."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Compare | ast.match_case):
            continue
        for sub in ast.walk(node):
            names_format = isinstance(sub, ast.Attribute) and (
                sub.attr == "response_format"
                or (isinstance(sub.value, ast.Name) and sub.value.id == "ResponseFormat")
            )
            if names_format:
                lines.append(getattr(node, "lineno", 0))
                break
    return lines


def test_response_format_is_compared_in_the_answer_package_only() -> None:
    outside = {
        name: lines
        for name, path in modules().items()
        if not name.startswith("jurist.answer") and (lines := _format_comparisons(path))
    }
    assert outside == {}


def test_the_format_check_finds_a_comparison(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text("def f(spec):\n    return spec.response_format is ResponseFormat.RAW\n")
    assert _format_comparisons(path) == [2]


_VLLM_ARGUMENTS = (
    "gpu_memory_utilization|tensor_parallel_size|enable_prefix_caching|enforce_eager|max_num_seqs|"
    "max_num_batched_tokens|kv_cache_memory_bytes|structured_outputs|logprob_token_ids|"
    "distributed_executor_backend|prompt_token_ids|use_activation|pooling_params|output_kind"
)
# a vLLM argument passed by keyword or as a dict key, or one of vLLM's parameter classes
VLLM_NAMES = re.compile(
    rf"\b(?:{_VLLM_ARGUMENTS})\s*=(?!=)|[\"'](?:{_VLLM_ARGUMENTS})[\"']\s*:"
    r"|\b(?:StructuredOutputsParams|SamplingParams|TokensPrompt|PoolingParams|RequestOutputKind)\b"
)


def test_the_vllm_name_check_finds_arguments_not_attributes() -> None:
    assert VLLM_NAMES.search("LLM(gpu_memory_utilization=0.2)")
    assert VLLM_NAMES.search('{"structured_outputs": x}')
    assert VLLM_NAMES.search("from vllm import SamplingParams")
    assert not VLLM_NAMES.search("len(output.prompt_token_ids or ())")
    assert not VLLM_NAMES.search("if ep.gpu_memory_utilization == 1:")


def test_vllm_argument_names_live_in_the_vllm_backend_only() -> None:
    owners = {"jurist.backends.vllm.backend", "jurist.backends.vllm.states"}  # the engine, its pooling runner
    users = sorted(
        name
        for name, path in modules().items()
        if name not in owners and VLLM_NAMES.search(path.read_text(encoding="utf-8"))
    )
    assert users == []


@pytest.mark.parametrize(
    "code",
    [
        "import jurist",
        "import jurist.cli, jurist.engine, jurist.backends",
        "import sys\nfrom jurist.cli import app\nsys.argv = ['jurist', '--help']\n"
        "try:\n    app()\nexcept SystemExit:\n    pass",
    ],
    ids=["import-jurist", "import-modules", "jurist-help"],
)
def test_importing_jurist_loads_no_engine(code: str) -> None:
    probe = f"{code}\nimport sys\nprint(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_test_modules_have_unique_names_and_import_no_conftest() -> None:
    """The test folders have no ``__init__.py``: pytest imports every test module and helper by its bare
    name, so two files of one name in two folders, or an ``import conftest`` (which gets whichever
    folder's conftest loaded last), fail to collect on a clean clone."""
    tests = Path(__file__).parent
    names: dict[str, list[str]] = {}
    for path in tests.rglob("*.py"):
        if path.name != "conftest.py":
            names.setdefault(path.name, []).append(str(path.relative_to(tests)))
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"^\s*(from conftest import|import conftest)", text, re.M), path
    assert {n: p for n, p in names.items() if len(p) > 1} == {}
