"""Engines behind HTTP: OpenAI-compatible servers (REMOTE_VLLM, OPENAI, hosted APIs) and retries."""
