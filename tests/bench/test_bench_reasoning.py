"""`jurist bench`'s figures for a judge that thinks first: reasoning tokens per judgment and the share the
budget cut, from the outputs of a scripted thinking run, in the figures, the table and the summary line."""

from __future__ import annotations

from jurist import Engine, ScriptedBackend
from jurist.bench.measure import Record, count_outputs, figures
from jurist.bench.report import markdown, summary_lines
from jurist.records import Completion, GenerationRequest


def test_a_thinking_judge_s_bench_figures_count_its_reasoning() -> None:
    def script(request: GenerationRequest) -> Completion | str:
        if request.constraint is None:  # the reasoning: rows ending in 0 run out of budget
            long = request.messages[-1].content.endswith("0")
            return Completion("hm", "length" if long else "stop", 4, 16 if long else 6)
        return '{"judgment": "Yes"}'

    config = {"name": "j", "judge_params": {"prompt_template": "{text}", "reasoning": {"budget_tokens": 16}}}
    outputs = Engine(config, ScriptedBackend(script)).outputs([{"text": f"row {i}"} for i in range(20)])
    counts = count_outputs(outputs)
    assert (counts.reasoned, counts.reasoning_tokens, counts.reasoning_cut) == (20, 2 * 16 + 18 * 6, 2)
    warm = figures(counts, 2.0, Record())
    assert warm["reasoning_tokens_per_judgment"] == 7.0 and warm["reasoning_cut_share"] == 0.1
    bench = {"results": [{"model": "m", "judge": "j", "mode": "generation", "warm": warm}]}
    assert "reasoning 7.0 tokens per judgment (10.0 % cut by the budget)" in summary_lines(bench)[0]
    table = markdown(bench)
    assert "reasoning tok/judgment" in table and "reasoning cut" in table
    plain = figures(count_outputs({"j": []}), 1.0, Record())
    assert "reasoning_cut_share" not in plain
