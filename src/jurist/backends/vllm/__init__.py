"""vLLM: the backend, its engine_params, its outputs, embeddings, and the watchdog on its engine process."""
