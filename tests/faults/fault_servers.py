"""OpenAI-compatible servers on 127.0.0.1 that misbehave on purpose: busy and broken at fixed rates, or
accepting connections and never answering (for at most ``hold`` seconds, so no test can hang)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FaultServer(ThreadingHTTPServer):
    daemon_threads = True
    busy_every: int  # every n-th request: 429 with Retry-After
    broken_every: int  # every n-th request: 500
    reset_every: int  # every n-th request: the connection is closed without an answer
    retry_after: str
    hold: float  # > 0: never answer, keep the connection open this long at most
    delay: float  # seconds before each answer
    pause_after: int  # > 0: requests after this many wait until ``gate`` is set (two minutes at most)
    gate: threading.Event
    released: threading.Event
    count: int
    answered: int
    lock: threading.Lock

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


def verdict_for(question: str) -> str:
    return json.dumps({"explanation": "checked", "judgment": "Yes" if "good" in question else "No"})


class FaultHandler(BaseHTTPRequestHandler):
    server: FaultServer

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self._send(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        server = self.server
        with server.lock:
            server.count += 1
            number = server.count
        if server.hold > 0:
            server.released.wait(server.hold)
            return
        if server.reset_every and number % server.reset_every == 0:
            self.close_connection = True
            return
        if server.busy_every and number % server.busy_every == 0:
            self._send(429, {"error": {"message": "busy"}}, {"Retry-After": server.retry_after})
            return
        if server.broken_every and number % server.broken_every == 0:
            self._send(500, {"error": {"message": "internal error"}})
            return
        if server.delay:
            server.released.wait(server.delay)
        if server.pause_after and number > server.pause_after:
            server.gate.wait(120)
        text = verdict_for(body["messages"][-1]["content"])
        with server.lock:
            server.answered += 1
        self._send(
            200,
            {
                "choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 8},
            },
        )

    def _send(self, code: int, data: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        raw = json.dumps(data).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(raw)


@contextmanager
def fault_server(
    *,
    busy_every: int = 0,
    broken_every: int = 0,
    reset_every: int = 0,
    retry_after: str = "1",
    hold: float = 0.0,
    delay: float = 0.0,
    pause_after: int = 0,
) -> Iterator[FaultServer]:
    server = FaultServer(("127.0.0.1", 0), FaultHandler)
    server.busy_every, server.broken_every, server.reset_every = busy_every, broken_every, reset_every
    server.retry_after, server.hold, server.delay = retry_after, hold, delay
    server.released, server.gate = threading.Event(), threading.Event()
    server.pause_after = pause_after
    server.count = server.answered = 0
    server.lock = threading.Lock()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.released.set()
        server.gate.set()
        server.shutdown()
        server.server_close()
