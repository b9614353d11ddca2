"""The examples of the README and the documentation pages, read and run as the tests see them.

Conventions (also in docs/development.md, for page writers):

* Every fenced ```` ```bash ```` and ```` ```python ```` block runs, in page order, in one scratch folder per
  page that links the repository's ``examples/``, ``configs/``, ``benchmarks/`` and ``scripts/``; Python
  blocks of a page share one namespace, as in a notebook, and may ``await`` at top level.
* ``<!-- engine -->`` on the line before a block: it loads the default model (SmolLM2). The page then runs
  only in the engine tests, which share one engine across all pages.
* ``<!-- no-run: why -->`` before a block: it needs a GPU, a network or a big model. It is only checked:
  Python compiles and its ``from jurist... import`` names exist; shell commands name scripts that exist, and
  ``jurist`` commands name real commands, options, dotted config keys and built-in judges.
* A block with ``title="NAME"`` in its info string (```` ```yaml title="my_judge.yaml" ````) is a file: it is
  written to NAME before the blocks after it run. Every YAML block that holds ``judge_params`` must load as a
  judge config.
* A ```` ```text ```` block right after a runnable block is that block's output. Lines are compared without
  trailing spaces; ``...`` alone on a line stands for any lines, ``...`` inside a line for any text.
* In Python, ``expression  # -> text`` checks that ``repr(expression)`` reads ``text`` (``...`` allowed).

``JURIST_DOCS_SHOW=1`` prints what every block printed, and how long it took, to the terminal.

``jurist`` commands run in this process through the typer app (``jurist.cli.app``, what the ``jurist``
script calls), so that the engine tests can hand every command the same loaded model; other shell commands
run in ``bash``.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
import tokenize
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
LINKED = ("examples", "configs", "benchmarks", "scripts")
RUNNABLE = ("bash", "python")
_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,})(?P<info>[^`]*)$")
_NOTE = re.compile(r"^\s*<!--\s*(?P<kind>engine|no-run)\s*(?::\s*(?P<why>.*?))?\s*-->\s*$")
_TITLE = re.compile(r'title="(?P<title>[^"]+)"')
_ARROW = "# ->"


class ExampleError(AssertionError):
    """An example that failed, named by its page and line."""


@dataclass(frozen=True)
class Block:
    """One fenced block of a page."""

    page: Path
    line: int  # of the opening fence, 1-based
    lang: str
    code: str
    note: str = ""  # "engine", "no-run" or ""
    why: str = ""
    title: str | None = None
    expected: str | None = None  # the text block that follows a runnable block

    @property
    def where(self) -> str:
        try:
            name = self.page.relative_to(ROOT)
        except ValueError:
            name = self.page
        return f"{name}:{self.line}"

    @property
    def runs(self) -> bool:
        return self.lang in RUNNABLE and self.note != "no-run" and self.title is None


def read_blocks(page: Path) -> list[Block]:
    """The fenced blocks of a Markdown page, each with its note, its title and (when runnable) its output."""
    lines = page.read_text(encoding="utf-8").splitlines()
    raw: list[tuple[int, str, str, str, str, str | None]] = []  # line, lang, code, note, why, title
    index = 0
    while index < len(lines):
        match = _FENCE.match(lines[index])
        if not match:
            index += 1
            continue
        indent, fence = len(match["indent"]), match["fence"]
        info = match["info"].strip()
        body: list[str] = []
        end = index + 1
        while end < len(lines) and lines[end].strip() != fence:
            body.append(lines[end][indent:] if lines[end][:indent].strip() == "" else lines[end])
            end += 1
        before = index - 1
        while before >= 0 and not lines[before].strip():
            before -= 1
        note = _NOTE.match(lines[before]) if before >= 0 else None
        title = _TITLE.search(info)
        raw.append(
            (
                index + 1,
                info.split()[0].lower() if info else "",
                "\n".join(body) + "\n",
                note["kind"] if note else "",
                (note["why"] or "") if note else "",
                title["title"] if title else None,
            )
        )
        index = end + 1
    blocks: list[Block] = []
    for number, (line, lang, code, note, why, title) in enumerate(raw):
        expected = None
        following = raw[number + 1] if number + 1 < len(raw) else None
        if lang in RUNNABLE and following is not None and following[1] == "text" and following[5] is None:
            gap = lines[line + code.count("\n") + 1 : following[0] - 1]
            if all(not text.strip() for text in gap):
                expected = following[2]
        blocks.append(Block(page, line, lang, code, note, why, title, expected))
    return blocks


def pages() -> list[Path]:
    """README.md and every page under docs/."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def needs_engine(blocks: list[Block]) -> bool:
    return any(block.note == "engine" for block in blocks)


# ------------------------------------------------------------------------------------------ comparing
def matches(expected: str, actual: str) -> bool:
    """Whether ``actual`` reads as ``expected``, where ``...`` stands for any lines (alone on a line) or any
    text (inside a line); trailing spaces and blank edges do not count."""
    pattern = []
    for line in expected.strip("\n").splitlines():
        text = line.rstrip()
        if text.strip() == "...":
            pattern.append(r"(?:[^\n]*\n)*?")
        else:
            pattern.append(".*?".join(re.escape(part) for part in text.split("...")) + r"\n")
    cleaned = "".join(line.rstrip() + "\n" for line in actual.strip("\n").splitlines())
    return re.fullmatch("".join(pattern), cleaned) is not None


def _check_output(block: Block, actual: str) -> None:
    if block.expected is not None and not matches(block.expected, actual):
        raise ExampleError(
            f"{block.where}: the output differs from the page.\n"
            f"--- page:\n{block.expected}--- printed:\n{actual}"
        )


# ----------------------------------------------------------------------------------------- running
@dataclass
class PageRun:
    """One page's blocks, run in order in ``folder`` (which links the repository's example folders), its
    Python blocks sharing ``namespace``. Which model a block may load is the caller's business (the tests
    put the shared engine, or a refusal, where backends are built)."""

    folder: Path
    namespace: dict[str, Any] = field(default_factory=dict)

    def prepare(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        for name in LINKED:
            link = self.folder / name
            if not link.exists():
                link.symlink_to(ROOT / name, target_is_directory=True)

    def run(self, blocks: list[Block]) -> None:
        self.prepare()
        with _chdir(self.folder):
            for block in blocks:
                if block.title is not None:
                    target = self.folder / block.title
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_text(block.code, encoding="utf-8")
                if block.lang == "yaml":
                    check_yaml(block)
                if not block.runs:
                    continue
                started = time.perf_counter()
                output = self._bash(block) if block.lang == "bash" else self._python(block)
                if os.environ.get("JURIST_DOCS_SHOW"):  # for page writers: what each block prints
                    seconds = time.perf_counter() - started
                    print(f"\n=== {block.where} ({seconds:.1f} s)\n{output}", file=sys.__stderr__, flush=True)
                _check_output(block, output)

    # -------------------------------------------------------------------------------- shell
    def _bash(self, block: Block) -> str:
        printed = []
        for line, command in shell_commands(block.code):
            printed.append(self._command(block, line, command))
        return "".join(printed)

    def _command(self, block: Block, line: int, command: str) -> str:
        where = f"{block.where} (line {block.line + line})"
        words = shlex.split(command, comments=True)
        if not words:
            return ""
        feed = None
        if "|" in words and words[words.index("|") + 1 :][:1] == ["jurist"]:
            left = command[: command.index("|")]
            feed = _sh(left, where).stdout
            words = words[words.index("|") + 1 :]
        env: dict[str, str] = {}
        while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0]):
            key, _, value = words.pop(0).partition("=")
            env[key] = value
        if words[:1] != ["jurist"] or any(w in (">", ">>", "|", "&&", ";") for w in words):
            return _sh(command, where).stdout
        code, printed = run_jurist(words[1:], feed, env)
        if code != 0:
            raise ExampleError(f"{where}: `{command.strip()}` exited {code}\n{printed}")
        return printed

    # ------------------------------------------------------------------------------- python
    def _python(self, block: Block) -> str:
        tree = _with_arrow_checks(block)
        flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        code = compile(tree, block.where, "exec", flags=flags)
        self.namespace.setdefault("__name__", "__docs__")
        self.namespace["__arrow_check__"] = _arrow_check(block)
        buffer = io.StringIO()
        try:
            with contextlib.redirect_stdout(buffer):
                result = eval(code, self.namespace)
                if asyncio.iscoroutine(result):
                    asyncio.run(result)
        except ExampleError:
            raise
        except BaseException as exc:
            raise ExampleError(f"{block.where}: {type(exc).__name__}: {exc}") from exc
        return buffer.getvalue()


def _parse(block: Block) -> ast.Module:
    """The block's syntax tree; top-level ``await`` is allowed, as in a notebook."""
    flags = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    tree: ast.Module = compile(block.code, block.where, "exec", flags=flags)
    return tree


def _with_arrow_checks(block: Block) -> ast.Module:
    """The block's code, where ``expression  # -> text`` becomes a check of ``repr(expression)``."""
    arrows: dict[int, str] = {}
    for token in tokenize.generate_tokens(io.StringIO(block.code).readline):
        if token.type == tokenize.COMMENT and token.string.startswith(_ARROW):
            arrows[token.start[0]] = token.string[len(_ARROW) :].strip()
    try:
        tree = _parse(block)
    except SyntaxError as exc:
        raise ExampleError(f"{block.where}: {exc}") from exc
    body: list[ast.stmt] = []
    for stmt in tree.body:
        if isinstance(stmt, ast.Expr) and stmt.end_lineno in arrows:
            check = ast.Expr(
                ast.Call(
                    ast.Name("__arrow_check__", ast.Load()),
                    [stmt.value, ast.Constant(arrows.pop(stmt.end_lineno)), ast.Constant(stmt.lineno)],
                    [],
                )
            )
            body.append(ast.copy_location(check, stmt))
        else:
            body.append(stmt)
    if arrows:
        line = min(arrows)
        raise ExampleError(
            f"{block.where} (line {block.line + line}): `# ->` follows a statement, not a value"
        )
    tree.body = body
    return ast.fix_missing_locations(tree)


def _arrow_check(block: Block) -> Callable[[Any, str, int], None]:
    def check(value: Any, expected: str, line: int) -> None:
        if not matches(expected, repr(value)):
            raise ExampleError(
                f"{block.where} (line {block.line + line}): expected {expected}, got {value!r}"
            )

    return check


def run_jurist(
    args: list[str], stdin: str | None = None, env: dict[str, str] | None = None
) -> tuple[int, str]:
    """Run ``jurist ARGS`` in this process as the ``jurist`` script does (``jurist.cli.app``), with file
    descriptors 1 and 2 and ``sys.stdout`` / ``sys.stderr`` on one file, as a terminal would show them;
    (exit code, what it printed)."""
    from jurist.cli import app

    saved_env = {key: os.environ.get(key) for key in env or {}}
    os.environ.update(env or {})
    old = sys.stdin, sys.stdout, sys.stderr
    sys.stdout.flush()
    sys.stderr.flush()
    with tempfile.TemporaryFile() as sink:
        saved = os.dup(1), os.dup(2)
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
        sys.stdout = io.TextIOWrapper(os.fdopen(os.dup(1), "wb"), encoding="utf-8", line_buffering=True)
        sys.stderr = io.TextIOWrapper(os.fdopen(os.dup(2), "wb"), encoding="utf-8", line_buffering=True)
        sys.stdin = io.TextIOWrapper(io.BytesIO((stdin or "").encode("utf-8")), encoding="utf-8")
        code = 0
        try:
            app(args, prog_name="jurist")
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        finally:
            for stream in (sys.stdout, sys.stderr):
                stream.flush()
                stream.close()
            for stream in (sys.__stdout__, sys.__stderr__):  # what libraries wrote past sys.stdout
                if stream is not None:
                    stream.flush()
            sys.stdin, sys.stdout, sys.stderr = old
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)
            for key, value in saved_env.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
        sink.seek(0)
        printed = sink.read().decode("utf-8", errors="replace")
    return code, printed


def shell_commands(code: str) -> Iterator[tuple[int, str]]:
    """(line within the block, command) for each command of a shell block (continuations joined)."""
    pending = ""
    start = 0
    for number, text in enumerate(code.splitlines(), start=1):
        if not pending:
            start = number
        if text.rstrip().endswith("\\"):
            pending += text.rstrip()[:-1] + " "
            continue
        command = pending + text
        pending = ""
        if command.strip() and not command.strip().startswith("#"):
            yield start, command
    if pending.strip():
        yield start, pending


def _sh(command: str, where: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    result = subprocess.run(
        ["bash", "-c", f"set -euo pipefail\n{command}"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    if result.returncode != 0:
        raise ExampleError(f"{where}: `{command.strip()}` exited {result.returncode}\n{result.stderr}")
    return result


@contextlib.contextmanager
def _chdir(folder: Path) -> Iterator[None]:
    old = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(old)


# ------------------------------------------------------------------------------------------ checking
def check_yaml(block: Block) -> None:
    """A YAML block that holds ``judge_params`` must load as a judge config."""
    import yaml

    from jurist.config.loading import load_judge_config
    from jurist.errors import ConfigError

    try:
        data = yaml.safe_load(block.code)
    except yaml.YAMLError as exc:
        raise ExampleError(f"{block.where}: not YAML: {exc}") from exc
    if isinstance(data, dict) and "judge_params" in data:
        try:
            load_judge_config(data)
        except ConfigError as exc:
            raise ExampleError(f"{block.where}: not a valid judge config: {exc}") from exc


def check_block(block: Block, config_keys: set[str], mapping_keys: set[str]) -> None:
    """What can be checked without running a block: it parses, and what it names exists."""
    if block.lang == "python":
        _check_python(block)
    elif block.lang == "bash" and block.title is None:
        _check_bash(block, config_keys, mapping_keys)
    elif block.lang == "yaml":
        check_yaml(block)


def _check_python(block: Block) -> None:
    try:
        tree = _parse(block)
    except SyntaxError as exc:
        raise ExampleError(f"{block.where}: {exc}") from exc
    import importlib

    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "jurist":
            try:
                module = importlib.import_module(node.module)
            except ImportError as exc:
                raise ExampleError(f"{block.where}: cannot import {node.module}: {exc}") from exc
            for alias in node.names:
                if not hasattr(module, alias.name):
                    raise ExampleError(f"{block.where}: {node.module} has no {alias.name}")


def _check_bash(block: Block, config_keys: set[str], mapping_keys: set[str]) -> None:
    syntax = subprocess.run(["bash", "-n"], input=block.code, capture_output=True, text=True, check=False)
    if syntax.returncode != 0:
        raise ExampleError(f"{block.where}: not valid bash: {syntax.stderr.strip()}")
    for line, command in shell_commands(block.code):
        where = f"{block.where} (line {block.line + line})"
        for part in re.split(r"\|\||&&|[|;]", command):
            words = shlex.split(part, comments=True)
            while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0]):
                words.pop(0)
            if not words:
                continue
            if words[0] == "jurist":
                check_jurist_command(words[1:], where, config_keys, mapping_keys)
            elif words[0] in ("python", "bash") and len(words) > 1 and not words[1].startswith("-"):
                _exists(words[1], where)
            elif "/" in words[0]:
                _exists(words[0], where)


def _exists(path: str, where: str) -> None:
    if not (ROOT / path).exists():
        raise ExampleError(f"{where}: {path} does not exist in the repository")


def check_jurist_command(args: list[str], where: str, config_keys: set[str], mapping_keys: set[str]) -> None:
    """The command, its options, its dotted config keys and its built-in judges exist."""
    from typer.main import get_command

    from jurist.cli import app
    from jurist.config.loading import load_judge_config
    from jurist.errors import ConfigError

    command: Any = get_command(app)
    rest = list(args)
    path = ["jurist"]
    while getattr(command, "commands", None) and rest and rest[0] in command.commands:
        path.append(rest[0])
        command = command.commands[rest.pop(0)]
    if getattr(command, "commands", None):
        raise ExampleError(f"{where}: `{' '.join(path)}` has no command {rest[:1]}")
    options = {opt: param for param in command.params for opt in [*param.opts, *param.secondary_opts]}
    extra = bool(command.context_settings.get("allow_extra_args"))
    index = 0
    while index < len(rest):
        word = rest[index]
        name = word.split("=", 1)[0]
        if name == "...":
            pass
        elif name.startswith("--") and "." in name and extra:
            key = name[2:]
            if key not in config_keys and not any(key.startswith(f"{m}.") for m in mapping_keys):
                raise ExampleError(f"{where}: `{name}` is not a config key (see docs/reference/config.md)")
        elif name.startswith("-") and name != "-":
            if name not in options:
                raise ExampleError(f"{where}: `{' '.join(path)}` has no option {name}")
            param = options[name]
            takes_value = not getattr(param, "is_flag", False)
            if takes_value and "=" not in word and index + 1 < len(rest):
                index += 1
                value = rest[index]
                if name in ("-c", "--config") and value != "...":
                    looks_like_file = value.endswith((".yaml", ".yml")) and not value.startswith("oumi://")
                    if not looks_like_file:
                        try:
                            load_judge_config(value)
                        except ConfigError as exc:
                            raise ExampleError(f"{where}: judge {value!r} does not load: {exc}") from exc
        index += 1


def config_key_sets() -> tuple[set[str], set[str]]:
    """Every dotted config key from the generated reference, and those that hold free-form mappings."""
    page = (ROOT / "docs" / "reference" / "config.md").read_text(encoding="utf-8")
    keys: set[str] = set()
    mappings: set[str] = set()
    for match in re.finditer(r"^\| `([^`]+)` \| ([^|]*(?:\\\|[^|]*)*) \|", page, flags=re.MULTILINE):
        key = match[1].replace("[]", "")
        keys.add(key)
        if "mapping[" in match[2]:
            mappings.add(key)
    # a mapping whose keys the reference lists (engine_params) is not free-form
    free = {key for key in mappings if not any(other.startswith(f"{key}.") for other in keys)}
    return keys, free
