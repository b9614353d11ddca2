"""RAG and answer metrics (scikit-plots' ``LLMJudge`` semantics), batched across datasets.

* :mod:`.params`: the ``rag_judge_params`` config section (metric, bounds, input columns);
* :mod:`.schemas`: the JSON shape of every step's answer (statement lists, per-index verdicts, ratings),
  as bounded regexes and JSON schemas, and how an answer is read;
* :mod:`.prompts`: what each step asks, and the prompt version;
* :mod:`.formulas`: the metrics' formulas and their undefined cases;
* :mod:`.flows`: each metric as a sequence of steps; :mod:`.kind`: the judge kind that runs them;
* :mod:`.results`, :mod:`.llm_judge`, :mod:`.evaluate`: ``JudgeResult``, ``LLMJudge`` and
  ``evaluate_answers``, re-exported by :mod:`jurist`.

This ``__init__`` imports nothing: the judge kind is imported by :mod:`jurist.judges.judge`, and the API
modules import the engine, so importing them here would make a cycle.
"""
