"""What the gateway's integration tests share: a loop in a thread, gateways, fake backends.

The clients under test are of every kind: ``openai`` sync (blocks the calling thread), async,
``node`` and ``curl`` (subprocesses), LangChain. So the gateway and the loopback fakes run on
one event loop in a thread of their own (:class:`BackgroundLoop`), never on the test's: a sync
client or a ``subprocess.run`` in the test cannot starve them, and a module-scoped gateway
serves sync and async tests alike.

:class:`GatewayProcess` is ``oaicompat serve`` as a real subprocess (``python -m providers
serve``), owned like every server of the suite (``rigs/process.py``): its own process group,
and a watcher that ends it if the test runner dies, even by SIGKILL.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Coroutine, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import yaml

from providers.config.schema import OaicompatConfig
from providers.replay.server import ReceivedRequest, RecordedReply, ReplayServer
from tests.integration.rigs.process import LoopbackServer, ServerProcessError
from tests.unit.providers.gateway.serving import backend_chunks, running_gateway

__all__ = [
    "PROJECT_ROOT",
    "BackgroundLoop",
    "GatewayProcess",
    "TrickleBackend",
    "answer_text",
    "curl",
    "gateway_config",
    "text_backend",
]

PROJECT_ROOT = Path(__file__).resolve().parents[3]
T = TypeVar("T")


class BackgroundLoop:
    """An event loop running in a daemon thread, for the servers of the tests."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self.loop.run_forever, name="gateway-tests-loop", daemon=True
        )
        self._thread.start()

    def run(self, work: Coroutine[Any, Any, T], timeout: float = 60.0) -> T:
        """Run ``work`` on the loop and wait for its result (at most ``timeout`` seconds)."""
        return asyncio.run_coroutine_threadsafe(work, self.loop).result(timeout)

    @contextlib.contextmanager
    def entered(self, manager: contextlib.AbstractAsyncContextManager[T]) -> Iterator[T]:
        """``manager`` entered and exited on the loop (a fake server, a gateway)."""
        value = self.run(manager.__aenter__())
        try:
            yield value
        finally:
            self.run(manager.__aexit__(None, None, None))

    def gateway(self, config: OaicompatConfig) -> contextlib.AbstractContextManager[str]:
        """A gateway (the real app under uvicorn) serving ``config``: its ``.../v1`` URL."""
        return self.entered(running_gateway(config))

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.loop.close()


def gateway_config(
    backends: Mapping[str, Mapping[str, Any]],
    roles: Mapping[str, Any] | None = None,
    **serve: Any,
) -> OaicompatConfig:
    """A configuration whose backends make one attempt each (a failure shows at once)."""
    return OaicompatConfig.model_validate(
        {
            "backends": {
                name: {"retry": {"max_attempts": 1}, **backend}
                for name, backend in backends.items()
            },
            "roles": dict(roles or {}),
            "serve": serve,
        }
    )


def answer_text(request: ReceivedRequest, text: str, *, piece: int = 6) -> RecordedReply:
    """What a chat-completions server that leaves everything in ``content`` answers with
    ``text``: streamed in ``piece``-character deltas when the request streams, else one JSON
    completion."""
    body = json.loads(request.body)
    if body.get("stream"):
        deltas = [{"content": text[i : i + piece]} for i in range(0, len(text), piece)]
        chunks = backend_chunks({"role": "assistant"}, *deltas)
        return RecordedReply(200, chunks, {"Content-Type": "text/event-stream"})
    completion = {
        "id": "c1",
        "object": "chat.completion",
        "created": 1,
        "model": body.get("model") or "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
    }
    return RecordedReply(200, json.dumps(completion).encode())


def text_backend(text_for: Callable[[ReceivedRequest], str]) -> ReplayServer:
    """A loopback fake answering each request with the text ``text_for`` picks for it, cut
    into 7-byte writes so every tag arrives split; what it received is in ``.requests``."""

    def handler(request: ReceivedRequest) -> RecordedReply:
        return answer_text(request, text_for(request))

    return ReplayServer(handler, lambda data: [data[i : i + 7] for i in range(0, len(data), 7)])


class TrickleBackend:
    """A chat backend streaming one content chunk (``[0]``, ``[1]``…) every ``interval``
    seconds, ``count`` of them, that notes when the caller's connection closes: whether a
    request was cancelled, seen from the backend's side. ``closed`` is set when an answer
    ends either way; ``finished`` says it was sent whole."""

    def __init__(self, count: int = 400, interval: float = 0.025) -> None:
        self.count = count
        self.interval = interval
        self.requests: list[ReceivedRequest] = []
        self.sent = 0
        self.finished = False
        self.closed = asyncio.Event()
        self._server: asyncio.Server | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def __aenter__(self) -> TrickleBackend:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        headers = dict(line.lower().split(": ", 1) for line in head[1:] if ": " in line)
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        method, path = head[0].split(" ")[:2]
        self.requests.append(ReceivedRequest(method, path, headers, body))
        self.closed.clear()
        self.sent, self.finished = 0, False
        gone = asyncio.ensure_future(reader.read(1))  # b"" (or an error) once the caller closes
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n")
        writer.write(b"Transfer-Encoding: chunked\r\n\r\n")
        try:
            for index in range(self.count):
                if gone.done():
                    return
                _write_chunk(writer, backend_chunks({"content": f"[{index}]"}).split(b"\n\n")[0])
                await writer.drain()
                self.sent += 1
                await asyncio.wait([gone], timeout=self.interval)
            _write_chunk(writer, backend_chunks(finish="stop"))
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            self.finished = True
        except ConnectionError:
            pass
        finally:
            gone.cancel()
            writer.close()
            self.closed.set()


def _write_chunk(writer: asyncio.StreamWriter, event: bytes) -> None:
    data = event.rstrip(b"\n") + b"\n\n"
    writer.write(b"%x\r\n%s\r\n" % (len(data), data))


class GatewayProcessError(ServerProcessError):
    """``oaicompat serve`` exited or did not become healthy in time."""


class GatewayProcess(LoopbackServer):
    """``python -m providers serve --config FILE --port PORT`` from this checkout, with
    ``env`` added to the environment (the inbound keys)."""

    label: ClassVar[str] = "oaicompat serve"
    error: ClassVar[type[ServerProcessError]] = GatewayProcessError
    workdir_prefix: ClassVar[str] = "oaicompat-serve-"
    poll_seconds: ClassVar[float] = 0.05

    def __init__(
        self,
        config: Mapping[str, Any],
        *,
        env: Mapping[str, str] | None = None,
        extra_args: Sequence[str] = (),
        startup_timeout: float = 60.0,
        stop_timeout: float = 15.0,
    ) -> None:
        super().__init__(
            port=None, startup_timeout=startup_timeout, stop_timeout=stop_timeout, cwd=PROJECT_ROOT
        )
        self.config = dict(config)
        self.env = dict(env or {})
        self.extra_args = list(extra_args)

    @property
    def argv(self) -> list[str]:
        config = str(self.path("backends.yaml"))
        command = [sys.executable, "-m", "providers", "serve", "--config", config]
        return [*command, "--port", str(self.port), *self.extra_args]

    @property
    def api_url(self) -> str:
        return f"{self.base_url}/v1"

    def environment(self) -> Mapping[str, str]:
        return {"PYTHONPATH": str(PROJECT_ROOT), **self.env}

    def before_launch(self) -> None:
        self.path("backends.yaml").write_text(yaml.safe_dump(self.config), encoding="utf-8")

    def terminate(self) -> None:
        """SIGTERM to the server alone (what a process manager sends), not its group."""
        if self._process is None:
            raise self.error(f"{self.label} is not started")
        self._process.send_signal(signal.SIGTERM)

    def wait_exit(self, timeout: float) -> int:
        """The exit status, once the process ends (``subprocess.TimeoutExpired`` after
        ``timeout`` seconds)."""
        if self._process is None:
            raise self.error(f"{self.label} is not started")
        return self._process.wait(timeout)


def curl(*args: str, timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
    """``curl -sS`` with ``args``; the status code is the last line of stdout."""
    return subprocess.run(
        ["curl", "-sS", "--max-time", str(int(timeout)), "-w", "\n%{http_code}", *args],
        capture_output=True,
        text=True,
        timeout=timeout + 5,
        check=False,
    )
