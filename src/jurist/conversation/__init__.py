"""Judging conversations: a bot's latest reply against natural-language criteria.

* :class:`EvalJudge` (pipecat's ``EvalJudge``): a conversation built turn by turn, ``await
  judge.evaluate(criterion) -> JudgeVerdict`` (yes / no / continue, a reason, the raw answer), verdicts
  cached on disk by (judge, criterion, conversation); :meth:`EvalJudge.from_config` for a scenario's
  ``service`` / ``model`` / ``endpoint`` / ``factory`` block.
* :func:`judge_conversations`: the dataset form, every conversation x every criterion in batched engine
  calls, one Arrow row per pair with a status (``jurist judge dataset --criteria`` on the command line).
* The built-in judge ``conversation/criterion`` behind both.
"""

from __future__ import annotations

from jurist.conversation.cache import CacheStats, VerdictCache, default_cache_path
from jurist.conversation.dataset import ConversationSource, judge_conversations, read_criteria
from jurist.conversation.judge import EvalJudge
from jurist.conversation.verdict import JudgeVerdict

__all__ = [
    "CacheStats",
    "ConversationSource",
    "EvalJudge",
    "JudgeVerdict",
    "VerdictCache",
    "default_cache_path",
    "judge_conversations",
    "read_criteria",
]
