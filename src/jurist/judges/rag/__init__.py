"""The RAG judge kind (scikit-plots' ``LLMJudge`` metrics as a judge): each step's answer shape
(:mod:`.schemas`) and wording (:mod:`.prompts`), the formulas (:mod:`.formulas`), each metric as a flow of
steps (:mod:`.flows`), a row's inputs (:mod:`.inputs`), the requests of a step (:mod:`.steps`) and the kind
that runs them per row (:mod:`.kind`). The config section is :mod:`jurist.config.rag`; ``LLMJudge`` and
``evaluate_answers`` are in :mod:`jurist.scikitplots`. This ``__init__`` imports nothing."""
