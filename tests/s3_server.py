"""An S3-compatible server on 127.0.0.1 for the tests: moto's server mode (as s3fs's own tests use it),
started as a process of its own, and the environment that points clients at it.

The credentials are made up for each server; :attr:`S3Server.secret` is the secret key, which the tests look
for in every output and log (it must appear in none). Clients find the server through ``AWS_ENDPOINT_URL``,
which pyarrow's S3 filesystem and boto3 both read: the provider's usual chain, not an option of jurist's.
"""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class S3Server:
    endpoint: str
    key: str
    secret: str

    @property
    def env(self) -> dict[str, str]:
        """What a client process needs in its environment to reach this server."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": self.key,
            "AWS_SECRET_ACCESS_KEY": self.secret,
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_EC2_METADATA_DISABLED": "true",
        }

    def client(self) -> Any:
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=self.key,
            aws_secret_access_key=self.secret,
            region_name="us-east-1",
        )

    def bucket(self, name: str) -> None:
        self.client().create_bucket(Bucket=name)

    def objects(self, bucket: str) -> dict[str, bytes]:
        """Every object of ``bucket``, by key."""
        client = self.client()
        keys = [o["Key"] for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket)
                for o in page.get("Contents", [])]  # fmt: skip
        return {key: client.get_object(Bucket=bucket, Key=key)["Body"].read() for key in keys}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def s3_server(log: Path) -> Iterator[S3Server]:
    """moto's S3 server on 127.0.0.1 (its requests logged to ``log``), until the block ends."""
    port = free_port()
    moto = Path(sys.executable).with_name("moto_server")
    with log.open("w") as sink:
        process = subprocess.Popen(
            [str(moto), "-H", "127.0.0.1", "-p", str(port)], stdout=sink, stderr=subprocess.STDOUT
        )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 60
        while True:
            try:
                urllib.request.urlopen(endpoint, timeout=2).close()
                break
            except OSError:
                if time.time() > deadline or process.poll() is not None:
                    raise RuntimeError(f"moto's server did not start: {log.read_text()[-2000:]}") from None
                time.sleep(0.2)
        yield S3Server(endpoint, "AKIAJURISTTEST", f"jurist-secret-{secrets.token_hex(12)}")
    finally:
        process.terminate()
        process.wait(20)


@contextmanager
def s3_env(server: S3Server) -> Iterator[None]:
    """This process's environment pointed at ``server`` for the block."""
    before = {k: os.environ.get(k) for k in server.env}
    os.environ.update(server.env)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
