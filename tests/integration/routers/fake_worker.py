"""A loopback stand-in for an OpenAI-compatible worker behind a router: it records every request.

The routers are the component under test; what sits behind them only has to look like a worker
to them (``/health``, ``/v1/models`` and the SGLang info endpoints answer) and say which worker
answered. Each worker is a ``ThreadingHTTPServer`` in the test process, on a thread, so it dies
with the runner and needs no lifeline; it records the path and headers of each request (a
bounded list) and answers a chat completion, streamed or not, whose text names the worker.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeWorker", "Recorded"]

_MAX_RECORDED = 10_000
MODEL = "fake-model"


@dataclass(frozen=True, slots=True)
class Recorded:
    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    opening: str | None = None
    """A chat request's first user message: which conversation it belongs to."""


class FakeWorker:
    """``with FakeWorker("a") as worker:`` serves on ``worker.url`` until the block ends.
    ``fail_next`` makes the next chat requests answer 503 (a retry's cause)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.requests: list[Recorded] = []
        self.fail_next = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def chats(self) -> list[Recorded]:
        with self._lock:
            return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self.fail_next = 0

    def record(self, entry: Recorded) -> None:
        with self._lock:
            if len(self.requests) < _MAX_RECORDED:
                self.requests.append(entry)

    def take_failure(self) -> bool:
        with self._lock:
            if self.fail_next > 0:
                self.fail_next -= 1
                return True
            return False

    def __enter__(self) -> FakeWorker:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def _completion(worker: str) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{worker}",
        "object": "chat.completion",
        "created": 0,
        "model": MODEL,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": f"from {worker}"},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
    }


def _chunks(worker: str) -> list[dict[str, Any]]:
    base = {"id": f"chatcmpl-{worker}", "object": "chat.completion.chunk", "created": 0}
    base["model"] = MODEL
    deltas: list[tuple[dict[str, Any], str | None]] = [
        ({"role": "assistant", "content": ""}, None),
        ({"content": f"from {worker}"}, None),
        ({}, "stop"),
    ]
    return [
        {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        for delta, finish in deltas
    ]


_INFO: dict[str, dict[str, Any]] = {
    "/v1/models": {
        "object": "list",
        "data": [{"id": MODEL, "object": "model", "owned_by": "test", "max_model_len": 4096}],
    },
    "/get_model_info": {"model_path": MODEL, "tokenizer_path": None, "is_generation": True},
    "/model_info": {"model_path": MODEL, "tokenizer_path": None, "is_generation": True},
    "/get_server_info": {"model_path": MODEL, "tokenizer_path": None, "max_total_num_tokens": 4096},
    "/server_info": {"model_path": MODEL, "tokenizer_path": None, "max_total_num_tokens": 4096},
    "/get_load": {"load": 0},
}


def _handler_for(worker: FakeWorker) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt: str, *args: Any) -> None:  # quiet
            return

        def _record(self, body: dict[str, Any] | None = None) -> None:
            headers = {k.lower(): v for k, v in self.headers.items()}
            users = [
                m.get("content")
                for m in (body or {}).get("messages", [])
                if isinstance(m, dict) and m.get("role") == "user"
            ]
            opening = users[0] if users and isinstance(users[0], str) else None
            worker.record(Recorded(self.command, self.path, headers, opening))

        def _send(self, status: int, payload: Any) -> None:
            body = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            self._record()
            path = self.path.split("?")[0]
            if path in ("/health", "/health_generate", "/v1/health", "/ping"):
                self._send(200, {"status": "ok"})
            elif path in _INFO:
                self._send(200, _INFO[path])
            else:
                self._send(404, {"error": {"message": "not found", "type": "not_found"}})

        def _body(self) -> bytes:
            """The request body, ``Content-Length`` or chunked (smg streams what it forwards)."""
            if "chunked" not in (self.headers.get("Transfer-Encoding") or "").lower():
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))
            parts: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()  # the CRLF after each chunk

        def do_POST(self) -> None:
            body = json.loads(self._body() or b"{}")
            self._record(body)
            if not self.path.endswith("/chat/completions"):
                self._send(404, {"error": {"message": "not found", "type": "not_found"}})
                return
            if worker.take_failure():
                self._send(503, {"error": {"message": "overloaded", "type": "server_error"}})
                return
            if not body.get("stream"):
                self._send(200, _completion(worker.name))
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            for chunk in _chunks(worker.name):
                self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
            self.close_connection = True

    return Handler
