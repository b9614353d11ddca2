"""The servers the dataset tests read and write through: an S3-compatible server on 127.0.0.1 (moto's server
mode, its own process), one per test session of each test worker."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from s3_server import S3Server, s3_server


@pytest.fixture(scope="session")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    with s3_server(tmp_path_factory.mktemp("moto") / "moto.log") as server:
        yield server
