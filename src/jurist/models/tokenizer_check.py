"""Checks that a converted model folder's tokenizer is the one its GGUF file describes.

Two checks:

- :func:`verify_tokenizer`: the embedded default model's ChatML tokenizer (cheap: ``tokenizers`` and
  ``jinja2`` only), run on every use of the default model;
- :func:`verify_converted_tokenizer`: any conversion, run once after it, through ``transformers``'
  ``AutoTokenizer`` (what vLLM loads): text with spaces, newlines, tabs and non-ASCII round-trips, encoding
  adds a BOS exactly when the GGUF file says so, eos, pad and the chat template are the file's own, and
  the chat template renders a conversation.
"""

from __future__ import annotations

import json
import pathlib
from typing import Any, Final

from jurist.errors import BackendError
from jurist.models.gguf_meta import GgufInfo

ROUND_TRIP_TEXT: Final = ' hello\n  world\té ü 中文 {"a": 1}'
"""Text :func:`verify_tokenizer` encodes and decodes: a leading space, a double space, a newline, a tab,
accents, CJK and JSON punctuation must all survive."""

ROUND_TRIP_TEXTS: Final = (
    ROUND_TRIP_TEXT,
    "def f(x):\n    return {'a': [1, 2]}\n\n\n",
    "  leading and trailing  \t\n",
    "emoji 🙂, accents àéîõü, Ελληνικά, русский, العربية, 日本語, 2024-12-01 3.14159",
)
"""Texts :func:`verify_converted_tokenizer` round-trips through every converted tokenizer."""

EOS_TOKEN: Final = "<|im_end|>"
"""The end of a ChatML turn: the token the default model's generation stops on."""

CHAT_START_TOKEN: Final = "<|im_start|>"
"""The start of a ChatML turn: every rendered chat message of the default model begins with it."""

_PIP_TOKENIZERS: Final = "pip install torch transformers tokenizers (or jurist's `cpu` / `native` extra)"


def verify_tokenizer(path: pathlib.Path | str) -> None:
    """Check that the tokenizer in an HF folder is the byte-level ChatML tokenizer the model needs.

    A cheap check (about 0.2 s; it imports ``tokenizers`` and ``jinja2``, not torch or transformers):
    ``tokenizer.json`` must encode and decode :data:`ROUND_TRIP_TEXT` to itself and add no special tokens
    when encoding (no BOS); ``tokenizer_config.json`` must name eos :data:`EOS_TOKEN` (a single token), no
    BOS token, no ``add_bos_token`` and no ``clean_up_tokenization_spaces`` (which would change decoded
    text); ``generation_config.json`` must stop on the eos id; and the chat template (``chat_template.jinja``
    or the ``chat_template`` key) must render a system + user conversation in ChatML, each turn starting
    with :data:`CHAT_START_TOKEN`.

    Raises:
        BackendError: ``tokenizers`` is missing, a file is missing or unreadable, or a check fails; the
            message names the folder and what was found.
    """
    folder = pathlib.Path(path)
    try:
        import jinja2.sandbox
        from tokenizers import Tokenizer as RawTokenizer
    except ImportError as exc:
        raise BackendError(f"checking the tokenizer needs tokenizers and jinja2: {_PIP_TOKENIZERS}") from exc
    try:
        tokenizer = RawTokenizer.from_file(str(folder / "tokenizer.json"))
        tokenizer_config = _read_json(folder / "tokenizer_config.json")
        generation_config = _read_json(folder / "generation_config.json")
        template_file = folder / "chat_template.jinja"
        template = (
            template_file.read_text(encoding="utf-8")
            if template_file.is_file()
            else tokenizer_config.get("chat_template")
        )
    except Exception as exc:  # missing or malformed files: tokenizers raises its own exception type
        raise BackendError(f"{folder}: cannot read the tokenizer: {exc}") from exc

    problems: list[str] = []
    plain = tokenizer.encode(ROUND_TRIP_TEXT, add_special_tokens=False).ids
    decoded = tokenizer.decode(plain, skip_special_tokens=False)
    if decoded != ROUND_TRIP_TEXT:
        problems.append(f"text does not round-trip: {ROUND_TRIP_TEXT!r} came back as {decoded!r}")
    with_specials = tokenizer.encode(ROUND_TRIP_TEXT).ids
    if with_specials != plain:
        problems.append(f"encoding adds special tokens: {with_specials[:3]}... instead of {plain[:3]}...")
    eos = _token_content(tokenizer_config.get("eos_token"))
    if eos != EOS_TOKEN:
        problems.append(f"eos token is {eos!r}, expected {EOS_TOKEN!r}")
    eos_id = tokenizer.token_to_id(EOS_TOKEN)
    eos_ids = tokenizer.encode(EOS_TOKEN, add_special_tokens=False).ids
    if eos_id is None or eos_ids != [eos_id]:
        problems.append(f"{EOS_TOKEN!r} is not one token: it encodes as {eos_ids}")
    bos = _token_content(tokenizer_config.get("bos_token"))
    if bos is not None or tokenizer_config.get("add_bos_token"):
        problems.append(
            f"a BOS token is set (bos_token {bos!r}, add_bos_token {tokenizer_config.get('add_bos_token')!r})"
        )
    if tokenizer_config.get("clean_up_tokenization_spaces"):
        problems.append("clean_up_tokenization_spaces is on: decoding would change spaces")
    eos_setting = generation_config.get("eos_token_id")
    if eos_id is not None and eos_id not in (eos_setting if isinstance(eos_setting, list) else [eos_setting]):
        problems.append(
            f"generation_config.json has eos_token_id {eos_setting!r}, expected {eos_id} ({EOS_TOKEN!r})"
        )
    if not isinstance(template, str):
        problems.append("there is no chat template")
    else:
        expected = f"{CHAT_START_TOKEN}system\ns{EOS_TOKEN}\n{CHAT_START_TOKEN}user\nu{EOS_TOKEN}\n"
        try:
            environment = jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
            rendered = environment.from_string(template).render(
                messages=[{"role": "system", "content": "s"}, {"role": "user", "content": "u"}],
                add_generation_prompt=True,
                eos_token=eos,
                bos_token="",
            )
        except jinja2.TemplateError as exc:
            problems.append(f"the chat template does not render: {exc}")
        else:
            if not rendered.startswith(expected):
                problems.append(f"the chat template renders {rendered!r}, expected a start of {expected!r}")
    if problems:
        raise BackendError(f"{folder}: the tokenizer is not usable: " + "; ".join(problems))


def verify_converted_tokenizer(folder: pathlib.Path, info: GgufInfo) -> None:
    """Check the tokenizer of a converted folder, as ``transformers.AutoTokenizer`` (what vLLM uses) loads
    it, against the GGUF file it came from.

    Raises:
        BackendError: naming the folder, the source file and every check that failed.
    """
    from transformers import AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
        generation = _read_json(folder / "generation_config.json")
    except Exception as exc:  # transformers raises many types for a folder it cannot read
        raise BackendError(f"{folder}: transformers cannot load the converted tokenizer: {exc}") from exc
    problems = _round_trip_problems(tokenizer)
    plain = list(tokenizer.encode("hi", add_special_tokens=False))
    encoded = list(tokenizer.encode("hi"))
    expected = [info.bos_id, *plain] if info.add_bos and info.bos_id is not None else plain
    if encoded != expected:
        problems.append(
            f"encoding 'hi' gives {encoded}, expected {expected} "
            f"(the GGUF file says add_bos_token={info.add_bos})"
        )
    if tokenizer.eos_token != info.eos_token or tokenizer.eos_token_id != info.eos_id:
        problems.append(
            f"eos is {tokenizer.eos_token!r} (id {tokenizer.eos_token_id}); the file says "
            f"{info.eos_token!r} (id {info.eos_id})"
        )
    if info.pad_id is not None and tokenizer.pad_token != info.pad_token:
        problems.append(f"pad is {tokenizer.pad_token!r}; the file says {info.pad_token!r}")
    stop = generation.get("eos_token_id")
    if info.eos_id not in (stop if isinstance(stop, list) else [stop]):
        problems.append(f"generation_config.json stops on {stop!r}, not on eos id {info.eos_id}")
    if tokenizer.chat_template != info.chat_template:
        problems.append("the chat template is not the one in the GGUF file")
    else:
        problems += _chat_problems(tokenizer)
    if problems:
        raise BackendError(
            f"{folder}: the tokenizer converted from {info.path} is not usable: " + "; ".join(problems)
        )


def _round_trip_problems(tokenizer: Any) -> list[str]:
    """Each of :data:`ROUND_TRIP_TEXTS` that does not decode to itself."""
    problems = []
    for text in ROUND_TRIP_TEXTS:
        decoded = tokenizer.decode(tokenizer.encode(text, add_special_tokens=False))
        if decoded != text:
            problems.append(f"text does not round-trip: {text!r} came back as {decoded!r}")
    return problems


def _chat_problems(tokenizer: Any) -> list[str]:
    """Whether the chat template renders a conversation holding its messages' texts (a system turn, where
    the template takes one; some, like Gemma's, refuse the system role)."""
    conversations = (
        [{"role": "system", "content": "SYSTEM-TEXT"}, {"role": "user", "content": "USER-TEXT"}],
        [{"role": "user", "content": "USER-TEXT"}],
    )
    failure = ""
    for messages in conversations:
        try:
            rendered = str(
                tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
            )
        except Exception as exc:  # jinja2's errors, or a template's raise_exception()
            failure = f"the chat template does not render: {exc}"
            continue
        missing = [m["content"] for m in messages if m["content"] not in rendered]
        return [f"the chat template drops {missing}: {rendered!r}"] if missing else []
    return [failure]


def _read_json(path: pathlib.Path) -> dict[str, Any]:
    """Read a JSON object from a file."""
    value = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(value, dict):
        raise ValueError(f"{path.name} does not hold a JSON object")
    return value


def _token_content(value: object) -> str | None:
    """A special token's text from a tokenizer_config value (a string, or a dict with "content")."""
    if isinstance(value, dict):
        content = value.get("content")
        return content if isinstance(content, str) else None
    return value if isinstance(value, str) else None
