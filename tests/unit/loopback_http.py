"""A chat-completions server on a thread of its own, for tests that run several event loops.

``ReplayServer`` lives on the test's event loop, so it cannot outlive one ``asyncio.run``; this
one is a plain ``http.server`` on 127.0.0.1 that keeps its connections alive (HTTP/1.1), which is
what exposes a pooled connection carried from one event loop into the next. A streamed answer
is written one chunk at a time, ``gap`` seconds apart, and the server notes a client that hung
up before the end (``hang_ups``): the proof that closing a stream closed the upstream request.
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["LoopbackChat", "loopback_chat"]


def _completion(text: str) -> bytes:
    return json.dumps(
        {
            "id": "c1",
            "object": "chat.completion",
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
        }
    ).encode()


def _response(text: str) -> bytes:
    """A non-streamed Responses API answer."""
    message = {
        "type": "message",
        "id": "m1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    body = {"id": "r1", "object": "response", "status": "completed", "output": [message]}
    return json.dumps(body).encode()


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    body = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(body).encode() + b"\n\n"


class LoopbackChat:
    """What the server answers (``words`` of a stream, ``gap`` between them, ``cut``: close
    mid-stream without an end) and what it saw (``requests``, ``hang_ups``, ``connections``)."""

    def __init__(self) -> None:
        self.words = ["Hello", " there", "!"]
        self.gap = 0.0
        self.cut = False
        self.status = 200
        self.delay = 0.0
        """Seconds before a non-streamed answer (a hang-up meanwhile is noted)."""
        self.requests = 0
        self.connections: set[int] = set()
        self.hang_ups = threading.Event()
        self.port = 0
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def note(self, connection: int) -> None:
        with self._lock:
            self.requests += 1
            self.connections.add(connection)


def _handler(chat: LoopbackChat) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's name
            pass  # (quiet)

        def do_POST(self) -> None:
            chat.note(id(self.connection))
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if self.path.endswith("/responses"):
                self._send(200, _response("".join(chat.words)))
            elif chat.status != 200:
                self._send(chat.status, b'{"error": {"message": "no", "type": "server_error"}}')
            elif request.get("stream"):
                self._stream()
            elif self._waited():
                self._send(200, _completion("".join(chat.words)))

        def _waited(self) -> bool:
            """Whether the client still waits after ``delay``: a hang-up reads as EOF."""
            until = time.monotonic() + chat.delay
            while time.monotonic() < until:
                readable, _, _ = select.select([self.connection], [], [], 0.02)
                if readable and not self.connection.recv(1, socket.MSG_PEEK):
                    chat.hang_ups.set()
                    self.close_connection = True
                    return False
            return True

        def _send(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _stream(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            events = [_chunk({"role": "assistant", "content": ""})]
            events += [_chunk({"content": word}) for word in chat.words]
            if not chat.cut:
                events += [_chunk({}, "stop"), b"data: [DONE]\n\n"]
            try:
                for event in events:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                    self.wfile.flush()
                    time.sleep(chat.gap)
                if chat.cut:
                    self.close_connection = True
                    return
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                chat.hang_ups.set()
                self.close_connection = True

    return Handler


@contextmanager
def loopback_chat() -> Iterator[LoopbackChat]:
    """A running server for the ``with`` block; its threads end with it."""
    chat = LoopbackChat()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(chat))
    server.daemon_threads = True
    chat.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, name="loopback-chat", daemon=True)
    thread.start()
    try:
        yield chat
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
