"""A local HTTP server that speaks OpenAI's chat-completions protocol, answering from the request's content.

It gives the command line and the OpenAI backend a real HTTP path to a "model" without loading one. It
records every body it was sent.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Answerer = Callable[[dict[str, Any]], tuple[int, dict[str, Any]]]


class ChatServer(ThreadingHTTPServer):
    bodies: list[dict[str, Any]]
    answer: Answerer

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class Handler(BaseHTTPRequestHandler):
    server: ChatServer

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self._send(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.bodies.append(body)
        code, data = self.server.answer(body)
        self._send(code, data)

    def _send(self, code: int, data: dict[str, Any]) -> None:
        raw = json.dumps(data).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


def completion(text: str, finish: str = "stop") -> dict[str, Any]:
    return {
        "choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 7, "prompt_tokens_details": {"cached_tokens": 8}},
    }


@contextmanager
def chat_server(answer: Answerer) -> Iterator[ChatServer]:
    server = ChatServer(("127.0.0.1", 0), Handler)
    server.bodies = []
    server.answer = answer
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
