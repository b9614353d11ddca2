"""What the local engines (vLLM, transformers) share: chat templates, device placement, label tries."""
