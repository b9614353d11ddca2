"""A fingerprint of a model's weights, for a run's provenance, without reading gigabytes.

sha256 over each weight file's name and size and its first and last MiB: a different checkpoint (or a
different conversion of the same one) gets a different fingerprint. The embedded default model also names
the sha256 of the GGUF file it was converted from (its conversion manifest). A model given as a hub id that
is not a local folder gets no fingerprint; its revision stands for it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".gguf")
_MIB = 1 << 20


def weights_fingerprint(path: str) -> str | None:
    """The fingerprint of the weight files in a local model folder (None when it is not one)."""
    folder = Path(path)
    if not folder.is_dir():
        return None
    digest = hashlib.sha256()
    files = sorted(p for p in folder.iterdir() if p.suffix in WEIGHT_SUFFIXES and p.is_file())
    if not files:
        return None
    for file in files:
        size = file.stat().st_size
        digest.update(f"{file.name}:{size}".encode())
        with file.open("rb") as handle:
            digest.update(handle.read(_MIB))
            if size > 2 * _MIB:
                handle.seek(size - _MIB)
                digest.update(handle.read(_MIB))
    manifest = folder / "jurist_conversion.json"
    if manifest.is_file():
        source = json.loads(manifest.read_text(encoding="utf-8")).get("source_sha256", "")
        digest.update(source.encode())
    return digest.hexdigest()[:16]
