"""``EvalJudge``: judging a bot's latest reply against a natural-language criterion, in the context of the
conversation so far (pipecat's ``EvalJudge``, on jurist's engine).

The judge keeps the conversation: :meth:`EvalJudge.add_user_message` records a user turn (None: a bot-first
turn, ignored), :meth:`EvalJudge.add_assistant_message` appends one streamed segment of the bot's reply as
its own assistant message (None or empty: ignored), :meth:`EvalJudge.add_tool_call` a call the bot made
(kept in :attr:`EvalJudge.messages`, left out of what a reply is judged on, as pipecat 1.14 does).
:meth:`EvalJudge.evaluate` judges the reply (the messages after the last user turn) with a real judge config,
by default the built-in ``conversation/criterion``: the same prompt, constrained verdict (yes / no /
continue) and short reason as the dataset form (:mod:`jurist.conversation.dataset`). With no reply yet the
model is still asked (pipecat does the same), shown ``(no reply yet)``; :meth:`EvalJudge.evaluate_call`
judges one function call by its name and arguments. The judge's own answer is never added to the
conversation. The blocking model call runs in a worker thread, off the event loop; calls on one judge are
serialized (engines are not thread-safe).

What pipecat's harness (1.7's ``EvalSession``, 1.14's ``ExpectationMatcher``) reads: ``verdict`` (only
yes / no / continue; a judgment that fails twice, the first failure retried once as pipecat 1.14 does, is a
``no`` whose ``failure`` says why), ``passed``, ``reason``; ``await judge.close()`` (``close()`` also works
without ``await``). Judging a whole simulated run (1.14's ``evaluate_run``) is not implemented: it raises
NotImplementedError.

Verdicts are cached by (judge, criterion, conversation) (:mod:`jurist.conversation.cache`): asking the same
thing about the same conversation again does not call the model, in this process or a later one.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Generator, Mapping, Sequence
from pathlib import Path
from typing import Any

from jurist.config.loading import load_judge_config
from jurist.config.models import JudgeConfig
from jurist.conversation.cache import CacheStats, VerdictCache, verdict_key
from jurist.conversation.models import ModelLike, conversation_backend
from jurist.conversation.pipecat import ServiceBackend
from jurist.conversation.services import check_keys, import_factory, service_config
from jurist.conversation.transcript import NO_CONTEXT, Turn, judge_values, render_turns
from jurist.conversation.verdict import JudgeVerdict, verdict_from_output
from jurist.engine.core import Engine
from jurist.errors import ConfigError
from jurist.judges.judge import Judge

BUILTIN_JUDGE = "conversation/criterion"
DEFAULT_MAX_TOKENS = 200
CONVERSATION_FIELDS = frozenset({"context", "reply", "criterion"})
NO_REPLY = "(no reply yet)"
ATTEMPTS = 2  # a failed judgment is asked once more (pipecat 1.14 does), then it is a "no"


class _DefaultCache:
    """The default cache: the SQLite file under the user's cache folder."""

    def __repr__(self) -> str:
        return "DEFAULT_CACHE"


DEFAULT_CACHE = _DefaultCache()
CacheLike = VerdictCache | str | Path | _DefaultCache | None


def _cache(cache: CacheLike) -> VerdictCache | None:
    if cache is None or isinstance(cache, VerdictCache):
        return cache
    return VerdictCache(None if isinstance(cache, _DefaultCache) else cache)


def conversation_judge(
    judge: str | Path | JudgeConfig | Mapping[str, Any], overrides: Mapping[str, Any] | None = None
) -> Judge:
    """A judge that can judge conversations: it reads only ``context``, ``reply`` and ``criterion`` and
    writes a ``judgment`` (ConfigError otherwise)."""
    compiled = Judge(load_judge_config(judge, overrides))
    config = compiled.config
    extra = sorted(compiled.required_fields - CONVERSATION_FIELDS)
    if extra:
        raise ConfigError(
            f"a conversation judge reads only {', '.join(sorted(CONVERSATION_FIELDS))}; this one also reads "
            f"{', '.join(extra)}",
            source=config.source,
        )
    if config.is_pairwise or config.is_reward or config.is_rubric:
        raise ConfigError("a conversation judge is a simple judge (one judgment)", source=config.source)
    return compiled


Ask = tuple[str, tuple[Turn, ...], dict[str, str | None]]  # (what the cache keys on, turns, values)


def _check_criterion(criterion: object) -> None:
    if not isinstance(criterion, str) or not criterion.strip():
        raise ValueError(f"a criterion is non-empty text, got {criterion!r}")


class Closed:
    """What :meth:`EvalJudge.close` returns: the judge is already closed; awaiting this does nothing more."""

    def __await__(self) -> Generator[None, None, None]:
        return
        yield


class EvalJudge:
    """A conversation and the judge that evaluates its latest reply.

    ``backend_or_config``: a jurist Backend (used as it is; not closed by :meth:`close`), a pipecat LLM
    service (anything with ``run_inference``, used through
    :class:`~jurist.conversation.pipecat.ServiceBackend`), a factory without arguments returning either, an
    :class:`~jurist.config.inference.InferenceConfig` (or its mapping, or a YAML/JSON file of one), or a model
    name or folder (a local vLLM engine); anything but a backend loads or connects only on the first
    :meth:`evaluate`. ``max_tokens``: the cap on the judge's answer (pipecat's default 200; None: the bound of
    the answer's schema, which cannot truncate). ``cache``: where verdicts are kept (default: a SQLite file
    under the user's cache folder, see :func:`~jurist.conversation.cache.default_cache_path`; a path; a
    :class:`~jurist.conversation.cache.VerdictCache`; ``":memory:"``; None: no cache). ``judge``: the judge
    config (default the built-in ``conversation/criterion``).
    """

    def __init__(
        self,
        backend_or_config: ModelLike,
        *,
        max_tokens: int | None = DEFAULT_MAX_TOKENS,
        cache: CacheLike = DEFAULT_CACHE,
        judge: str | Path | JudgeConfig | Mapping[str, Any] = BUILTIN_JUDGE,
    ) -> None:
        if max_tokens is not None and max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1 (or None), got {max_tokens}")
        resolved = conversation_backend(backend_or_config)
        overrides: dict[str, Any] = {}
        if resolved.config is not None:
            overrides["inference_config"] = resolved.config.model_dump(mode="json", exclude_unset=True)
        if max_tokens is not None:
            overrides["inference_config.generation.max_new_tokens"] = max_tokens
        self.judge = conversation_judge(judge, overrides)
        self.max_tokens = max_tokens
        self._backend = resolved.backend
        self._owns_backend = resolved.owned
        self._engine = Engine([self.judge], resolved.backend, carry_input=False)
        self.identity: dict[str, Any] = {
            **resolved.identity,
            "prompt": self.judge.prompt_hash,
            "schema": self.judge.schema_hash,
            "generation": self.judge.config.inference_config.generation.model_dump(mode="json"),
        }
        self.cache = _cache(cache)
        self._turns: list[Turn] = []
        self._lock = threading.Lock()  # one model call at a time
        self._count_lock = threading.Lock()
        self._hits = self._misses = self._stored = 0
        self.model_calls = 0  # batches sent to the model by this judge

    @classmethod
    def from_config(
        cls, judge_config: Mapping[str, Any] | None = None, *, cache: CacheLike = DEFAULT_CACHE
    ) -> EvalJudge:
        """An EvalJudge from a scenario's ``judge.eval`` block: ``service`` (default ``ollama``), ``model``
        (default ``gemma2:9b``), ``endpoint``, ``factory`` (a dotted path, imported only when given), and
        jurist's ``api_key_env`` and ``max_tokens`` (see :mod:`jurist.conversation.services`). ValueError for
        an unknown service or key."""
        block = dict(judge_config or {})
        check_keys(block)
        max_tokens = block.get("max_tokens", DEFAULT_MAX_TOKENS)
        factory_path = block.get("factory")
        if factory_path:
            made = import_factory(str(factory_path))(block)
            try:
                return cls(made, max_tokens=max_tokens, cache=cache)
            except TypeError as exc:
                raise TypeError(f"factory {factory_path!r} returned something unusable: {exc}") from None
        return cls(service_config(block), max_tokens=max_tokens, cache=cache)

    # --------------------------------------------------------------------------- the conversation
    def add_user_message(self, text: str | None) -> None:
        """Record a user turn; None (a bot-first turn) or empty text is ignored."""
        self._add("user", text)

    def add_assistant_message(self, text: str | None) -> None:
        """Append one streamed segment of the bot's reply as its own assistant message; None or empty text
        is ignored."""
        self._add("assistant", text)

    def add_tool_call(self, text: str | None) -> None:
        """Record a call the bot made, on one line (``book({"time": "6pm"})``); None or empty is ignored.
        A reply is judged without these (as pipecat 1.14 judges it)."""
        self._add("tool", text)

    def _add(self, role: str, text: str | None) -> None:
        if text is None:
            return
        if not isinstance(text, str):
            raise TypeError(f"a {role} message is text (or None), not a {type(text).__name__}")
        if text.strip():
            self._turns.append(Turn(role, text))

    @property
    def messages(self) -> list[dict[str, str]]:
        """The conversation so far, as chat messages (a copy)."""
        return [turn.as_dict() for turn in self._turns]

    @property
    def model_id(self) -> str:
        return str(self.identity["model"])

    @property
    def cache_stats(self) -> CacheStats:
        """This judge's cache lookups: hits, misses, verdicts stored (all zero without a cache)."""
        return CacheStats(self._hits, self._misses, self._stored)

    # ------------------------------------------------------------------------------- evaluating
    async def evaluate(self, criterion: str) -> JudgeVerdict:
        """Judge whether the bot's most recent reply satisfies ``criterion``, in the context of the whole
        conversation (cached by judge, criterion and conversation)."""
        return (await self.evaluate_all([criterion]))[0]

    async def evaluate_all(self, criteria: Sequence[str]) -> list[JudgeVerdict]:
        """Judge the most recent reply against several criteria, the uncached ones in one model call."""
        asks = self._reply_asks(criteria)  # what the conversation is now, whatever is added meanwhile
        return await self._in_thread(asks)

    def evaluate_sync(self, criterion: str) -> JudgeVerdict:
        """:meth:`evaluate` for code without an event loop (blocks until the verdict is known)."""
        return self._judge_asks(self._reply_asks([criterion]))[0]

    async def evaluate_call(self, name: str, args: Mapping[str, Any] | None, criterion: str) -> JudgeVerdict:
        """Judge whether a function call the bot made (its ``name`` and ``args``) satisfies ``criterion``, in
        the light of the conversation so far (pipecat 1.14's ``evaluate_call``); cached like a reply."""
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"a function call has a name, got {name!r}")
        _check_criterion(criterion)
        turns = self._spoken()
        call = f"Function call: {name}({json.dumps(dict(args or {}), ensure_ascii=False, sort_keys=True)})"
        values: dict[str, str | None] = {
            "context": render_turns(turns) or NO_CONTEXT,
            "reply": call,
            "criterion": criterion,
        }
        return (await self._in_thread([(f"{call}\n{criterion}", turns, values)]))[0]

    async def evaluate_run(self, *args: Any, **kwargs: Any) -> Any:
        """pipecat 1.14's judging of a whole simulated run (a goal and per-turn criteria): not implemented."""
        raise NotImplementedError(
            "EvalJudge.evaluate_run (the 'run' eval kind: judging a whole simulated conversation against a "
            "goal and per-turn criteria) is not implemented by jurist's EvalJudge; judge each reply with "
            "evaluate(), or the whole dataset with jurist.judge_conversations()"
        )

    def _spoken(self) -> tuple[Turn, ...]:
        return tuple(turn for turn in self._turns if turn.role != "tool")

    def _reply_asks(self, criteria: Sequence[str]) -> list[Ask]:
        turns = self._spoken()
        asks: list[Ask] = []
        for criterion in criteria:
            _check_criterion(criterion)
            values = judge_values(turns, criterion)
            if values["reply"] is None:
                values["reply"] = NO_REPLY
            asks.append((criterion, turns, values))
        return asks

    async def _in_thread(self, asks: list[Ask]) -> list[JudgeVerdict]:
        if isinstance(self._backend, ServiceBackend):
            self._backend.loop = asyncio.get_running_loop()  # the service's own loop runs its calls
        return await asyncio.to_thread(self._judge_asks, asks)

    def _judge_asks(self, asks: list[Ask]) -> list[JudgeVerdict]:
        results: list[JudgeVerdict | None] = [None] * len(asks)
        pending: list[tuple[int, str, dict[str, str | None]]] = []
        for index, (criterion, turns, values) in enumerate(asks):
            key = verdict_key(self.identity, criterion, turns)
            if self.cache is not None:
                found = self.cache.get(key)
                with self._count_lock:
                    if found is not None:
                        self._hits += 1
                    else:
                        self._misses += 1
                if found is not None:
                    results[index] = found
                    continue
            pending.append((index, key, values))
        for _attempt in range(ATTEMPTS):
            if not pending:
                break
            with self._lock:
                outputs = self._engine.outputs([values for _, _, values in pending])[self.judge.name]
                self.model_calls += 1
            failed = []
            for (index, key, values), output in zip(pending, outputs, strict=True):
                verdict = verdict_from_output(output)
                results[index] = verdict
                if not verdict.ok:
                    failed.append((index, key, values))
                elif self.cache is not None:
                    self.cache.put(key, verdict, str(values["criterion"]))
                    with self._count_lock:
                        self._stored += 1
            pending = failed
        return [verdict for verdict in results if verdict is not None]

    # ---------------------------------------------------------------------------------- closing
    def close(self) -> Closed:
        """Close the backend this judge made (a backend passed in stays open), now. What it returns may be
        awaited, so pipecat's ``await judge.close()`` works too."""
        if self._owns_backend:
            self._backend.close()
        return Closed()

    def __enter__(self) -> EvalJudge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> EvalJudge:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"EvalJudge(model={self.model_id!r}, judge={self.judge.name!r}, messages={len(self._turns)})"
