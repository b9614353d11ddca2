"""The servers the dataset tests read and write through: an S3-compatible server on 127.0.0.1 (moto's server
mode, its own process), one per test session of each test worker; and a Ray cluster of two worker nodes on
127.0.0.1, one per test module that asks for it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from s3_server import S3Server, s3_server


@pytest.fixture(scope="session")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    with s3_server(tmp_path_factory.mktemp("moto") / "moto.log") as server:
        yield server


HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def cluster(s3: S3Server) -> Iterator[Any]:
    """A head node with no CPU for actors and two worker nodes of one CPU each, all on 127.0.0.1; the
    worker nodes import the test backends and reach the S3 server."""
    import ray
    from ray.cluster_utils import Cluster

    env = {
        "PYTHONPATH": os.pathsep.join([str(HERE), str(HERE.parent), str(HERE.parents[1] / "src")]),
        **s3.env,
    }
    made = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False})
    for _ in range(2):
        made.add_node(num_cpus=1, object_store_memory=100 * 2**20, env_vars=env)
    made.node_env = env
    try:
        yield made
    finally:
        ray.shutdown()
        made.shutdown()
