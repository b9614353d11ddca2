"""Hugging Face transformers in this process (engine NATIVE): causal LMs, label scores, reward models."""
