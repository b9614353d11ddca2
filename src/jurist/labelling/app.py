"""The labelling page's web app (Starlette): the page and its script as package data, and a small JSON API
over a :class:`~jurist.labelling.desk.Desk`.

    GET  /                  the page (``page.html``), its script and styles (``label.js``, ``label.css``)
    GET  /api/setup         the judge, its buttons (value, text, keys), the mode, the preset labeller
    GET  /api/progress      labels given, the budget, the corrected estimate
    POST /api/next          {session, labeller} -> the session's row (claimed), or done
    POST /api/label         {session, labeller, row_id, label} -> saved (after fsync), the judge's verdict
    POST /api/skip          {session, row_id}
    POST /api/undo          {session, labeller, row_id} -> the row again

Every desk call runs in a worker thread (it waits on the file's lock and on ``fsync``). A refused request
answers ``{"error": ...}`` with status 400 or 409.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from jurist.errors import InputError
from jurist.labelling.desk import Desk, Refused

STATIC = {
    "/": ("page.html", "text/html; charset=utf-8"),
    "/label.js": ("label.js", "text/javascript; charset=utf-8"),
    "/label.css": ("label.css", "text/css; charset=utf-8"),
}
# the page loads nothing from elsewhere and runs only its own script
POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'"


def create_app(desk: Desk) -> Starlette:
    """The app serving ``desk``'s page and API."""
    files = {
        path: (resources.files("jurist.labelling").joinpath(name).read_bytes(), kind)
        for path, (name, kind) in STATIC.items()
    }

    def static(path: str) -> Callable[[Request], Awaitable[Response]]:
        body, kind = files[path]

        async def serve(request: Request) -> Response:
            headers = {"Content-Security-Policy": POLICY, "Cache-Control": "no-store"}
            return Response(body, media_type=kind, headers=headers)

        return serve

    async def setup(request: Request) -> Response:
        return JSONResponse(desk.setup())

    async def progress(request: Request) -> Response:
        return await _call(desk.progress)

    async def next_row(request: Request) -> Response:
        body = await _body(request)
        if isinstance(body, Response):
            return body
        return await _call(desk.next, _text(body, "session"), _text(body, "labeller"))

    async def label(request: Request) -> Response:
        body = await _body(request)
        if isinstance(body, Response):
            return body
        return await _call(
            desk.label,
            _text(body, "session"),
            _text(body, "labeller"),
            _text(body, "row_id"),
            body.get("label"),
        )

    async def skip(request: Request) -> Response:
        body = await _body(request)
        if isinstance(body, Response):
            return body
        session, labeller, row_id = _text(body, "session"), _text(body, "labeller"), _text(body, "row_id")

        def skip_and_next() -> dict[str, Any]:
            desk.skip(session, row_id)
            return desk.next(session, labeller)

        return await _call(skip_and_next)

    async def undo(request: Request) -> Response:
        body = await _body(request)
        if isinstance(body, Response):
            return body
        return await _call(desk.undo, _text(body, "session"), _text(body, "labeller"), _text(body, "row_id"))

    async def no_icon(request: Request) -> Response:
        return Response(status_code=204)

    routes = [Route(path, static(path)) for path in STATIC]
    routes += [
        Route("/favicon.ico", no_icon),
        Route("/api/setup", setup),
        Route("/api/progress", progress),
        Route("/api/next", next_row, methods=["POST"]),
        Route("/api/label", label, methods=["POST"]),
        Route("/api/skip", skip, methods=["POST"]),
        Route("/api/undo", undo, methods=["POST"]),
    ]
    return Starlette(routes=routes)


async def _call(function: Callable[..., Any], *args: Any) -> Response:
    try:
        result = await run_in_threadpool(function, *args)
    except Refused as exc:
        return JSONResponse({"error": str(exc)}, status_code=exc.status)
    except InputError as exc:
        return JSONResponse({"error": str(exc)}, status_code=400)
    return JSONResponse(result if result is not None else {"ok": True})


async def _body(request: Request) -> dict[str, Any] | Response:
    try:
        body = await request.json()
    except ValueError:
        return JSONResponse({"error": "the request body is not JSON"}, status_code=400)
    if not isinstance(body, dict):
        return JSONResponse({"error": "the request body is not a JSON object"}, status_code=400)
    return body


def _text(body: dict[str, Any], key: str) -> str:
    value = body.get(key)
    return value if isinstance(value, str) else "" if value is None else str(value)


def serve(app: Starlette, host: str, port: int, announce: Callable[[str], None]) -> None:
    """Serve ``app`` on ``host``:``port`` (0: a free port) until interrupted; ``announce`` is told the
    page's address once the socket listens. An :class:`InputError` when the address cannot be bound."""
    import socket

    import uvicorn

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise InputError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.listen(128)
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    announce(f"http://{shown}:{sock.getsockname()[1]}/")
    config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False)
    uvicorn.Server(config).run(sockets=[sock])
