"""Data parallel on one machine: a streaming backend over N engine processes, and their worker."""
