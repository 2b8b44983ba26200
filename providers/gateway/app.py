"""``GatewayApp``: the ASGI application behind ``oaicompat serve``.

Raw ASGI, no web framework: six routes, and the per-chunk path is one ``send`` per event, so a
framework's routing, middleware stack and response classes would add cost and nothing the
gateway uses (``docs/serve.md`` says why uvicorn runs it). One request goes:

1. bounded headers (431), the inbound key (401), the concurrency limit (429 + ``Retry-After``);
2. a bounded JSON body of ``Content-Type: application/json`` (413, 415, 400);
3. the ``model`` it names (404 listing what exists), then that entry's endpoint, which runs the
   pipeline and writes clean OpenAI JSON or SSE;
4. the answer sent while the client is watched: a disconnect cancels the work, and with it the
   backend request.

The inbound ``Authorization`` is checked here and never forwarded: only the header names in
``serve.forward_headers`` reach the endpoint, and credentials cannot be listed there. Nothing a
request does escapes as a traceback: every failure is an answer in OpenAI's error shape.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import Mapping
from typing import Any

from providers.abstractions.errors import InvalidRequestError, ProviderError
from providers.abstractions.event_names import GATEWAY_ANSWER_FAILED, GATEWAY_REQUEST
from providers.abstractions.logs import get_logger
from providers.config.schema import OaicompatConfig
from providers.gateway.asgi_io import (
    ClientGone,
    Receive,
    Scope,
    Send,
    json_answer,
    read_body,
    send_answer,
    until_disconnected,
)
from providers.gateway.entries import GatewayEntries
from providers.gateway.inbound_keys import InboundKeys
from providers.gateway.metrics import GatewayMetrics
from providers.gateway.request_checks import invalid
from providers.integrations._chat_endpoint import EndpointAnswer, error_answer

__all__ = ["GatewayApp"]

_LOG = get_logger(__name__)
_POST_ROUTES = {
    "/v1/chat/completions": "chat",
    "/v1/responses": "responses",
    "/v1/embeddings": "embeddings",
}
_GET_ROUTES = {"/v1/models": "models", "/health": "health", "/metrics": "metrics"}
_PROMETHEUS = ("content-type", "text/plain; version=0.0.4; charset=utf-8")


class GatewayApp:
    """An ASGI 3 application over the configured roles and backends.

    ``client_kwargs`` reach every pipeline (``client_for``): tests and embedders swap the
    transport there. ``access_log`` overrides ``serve.access_log``. ``env`` is where the
    inbound keys are read (default ``os.environ``). ``otel_kwargs`` reach the OpenTelemetry
    layer ``serve.opentelemetry`` adds (``tracer_provider``, ``meter_provider``).
    """

    def __init__(
        self,
        config: OaicompatConfig,
        *,
        access_log: bool | None = None,
        env: Mapping[str, str] | None = None,
        otel_kwargs: Mapping[str, Any] | None = None,
        **client_kwargs: Any,
    ) -> None:
        self.settings = config.serve
        self.metrics = GatewayMetrics()
        self.entries = GatewayEntries(config, self.metrics, client_kwargs, otel_kwargs)
        self._keys = InboundKeys.from_environment(
            self.settings.api_keys_env, os.environ if env is None else env
        )
        self._access_log = self.settings.access_log if access_log is None else access_log
        self._forwarded = frozenset(name.encode() for name in self.settings.forward_headers)
        self._busy = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            await self._http(scope, receive, send)
        elif kind == "lifespan":
            await self._lifespan(receive, send)

    async def aclose(self) -> None:
        """Closes every pipeline (the server's shutdown does it through the lifespan)."""
        await self.entries.aclose()

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = time.monotonic()
        record: dict[str, Any] = {"model": None, "status": 500, "streamed": False}
        self.metrics.in_flight += 1
        try:
            left = await until_disconnected(receive, self._exchange(scope, receive, send, record))
            if left:
                record["status"] = 499  # the client closed the request (nginx's code)
        finally:
            self.metrics.in_flight -= 1
            if record.get("slot"):
                self._busy -= 1
            route = _route_name(scope)
            if route not in ("health", "metrics"):
                self.metrics.answered(route, record["model"] or "", record["status"])
            if self._access_log:
                _log_access(scope, record, started)

    async def _exchange(
        self, scope: Scope, receive: Receive, send: Send, record: dict[str, Any]
    ) -> None:
        try:
            answer = await self._answer(scope, receive, record)
        except ClientGone:
            record["status"] = 499
            return
        except ProviderError as error:
            self.metrics.refused(record["model"] or "", type(error).__name__)
            answer = error_answer(error, retries=False)
        except Exception as exc:  # a bug of ours: still OpenAI's shape, never a traceback
            _LOG.warning(GATEWAY_ANSWER_FAILED, error_type=type(exc).__name__, path=_path(scope))
            self.metrics.refused(record["model"] or "", type(exc).__name__)
            failure = ProviderError("the gateway could not answer this request")
            answer = error_answer(failure, retries=False)
        record["status"] = answer.status
        record["streamed"] = not isinstance(answer.body, bytes)
        try:
            await send_answer(send, answer)
        except Exception as exc:  # the status is out: end the body, say why in the log
            _LOG.warning(
                GATEWAY_ANSWER_FAILED,
                error_type=type(exc).__name__,
                path=_path(scope),
                started=True,
            )
            with contextlib.suppress(Exception):  # (the connection may be gone too)
                await send({"type": "http.response.body", "body": b""})

    async def _answer(
        self, scope: Scope, receive: Receive, record: dict[str, Any]
    ) -> EndpointAnswer:
        path = _path(scope)
        method = scope["method"]
        headers = scope["headers"]
        if sum(len(name) + len(value) for name, value in headers) > self.settings.max_header_bytes:
            raise InvalidRequestError(
                "the request headers are too large", status=431, code="headers_too_large"
            )
        if path == "/health" and method in ("GET", "HEAD"):
            return json_answer(200, {"status": "ok"})
        self._keys.check(_header(headers, b"authorization"))
        if method == "GET" and path in _GET_ROUTES:
            if path == "/metrics":
                return EndpointAnswer(200, [_PROMETHEUS], self.metrics.render())
            return json_answer(200, self.entries.table.listing(int(self.metrics.started)))
        if method == "GET" and path.startswith("/v1/models/"):
            entry = self.entries.table.entry(path.removeprefix("/v1/models/"))
            return json_answer(200, self.entries.table.model(entry, int(self.metrics.started)))
        kind = _POST_ROUTES.get(path)
        if kind is None:
            known = path in _GET_ROUTES or path.startswith("/v1/models/")
            status, what = (405, "method not allowed") if known else (404, "no such route")
            raise InvalidRequestError(f"{what}: {method} {path}", status=status, code=what)
        if method != "POST":
            raise InvalidRequestError(f"use POST for {path}", status=405, code="method not allowed")
        return await self._post(kind, scope, receive, record)

    async def _post(
        self, kind: str, scope: Scope, receive: Receive, record: dict[str, Any]
    ) -> EndpointAnswer:
        headers = scope["headers"]
        content_type = (_header(headers, b"content-type") or b"").split(b";")[0].strip().lower()
        if content_type != b"application/json":
            raise InvalidRequestError(
                "send the request as JSON (`Content-Type: application/json`)",
                status=415,
                param="content-type",
                error_type="invalid_request_error",
            )
        if self._busy >= self.settings.max_concurrent_requests:
            raise _overloaded(self.settings.retry_after_seconds)
        self._busy += 1  # released in _http once the answer is sent
        record["slot"] = True
        declared = _header(headers, b"content-length")
        try:
            async with asyncio.timeout(self.settings.body_timeout_seconds):
                body = await read_body(
                    receive,
                    self.settings.max_body_bytes,
                    int(declared) if declared and declared.isdigit() else None,
                )
        except TimeoutError:
            raise InvalidRequestError(
                "the request body took too long to arrive", status=408, code="request_timeout"
            ) from None
        try:
            request = json.loads(body)
        except (ValueError, RecursionError):
            raise invalid("the request body is not valid JSON", None) from None
        model = request.get("model") if isinstance(request, dict) else None
        if not isinstance(model, str) or not model:
            raise invalid("`model` must be a non-empty string", "model")
        entry = self.entries.table.entry(model)
        record["model"] = entry.name
        forwarded = [
            (name.decode("latin-1"), value.decode("latin-1"))
            for name, value in headers
            if name in self._forwarded
        ]
        return await self.entries.answer(kind, entry, request, body, forwarded)


def _path(scope: Scope) -> str:
    """The route: ``/v1`` optional (clients given a base URL without it), no trailing slash."""
    path = str(scope["path"]).rstrip("/") or "/"
    if path in ("/health", "/metrics") or path.startswith("/v1/"):
        return path
    return "/v1" + path


def _route_name(scope: Scope) -> str:
    path = _path(scope)
    name = _POST_ROUTES.get(path) or _GET_ROUTES.get(path)
    if name is None and path.startswith("/v1/models/"):
        return "models"
    return name or "other"


def _header(headers: list[tuple[bytes, bytes]], name: bytes) -> bytes | None:
    for key, value in headers:
        if key == name:
            return value
    return None


def _overloaded(seconds: int) -> ProviderError:
    # deferred: only a gateway at its limit builds one
    from providers.abstractions.errors import RateLimitError

    return RateLimitError(
        "this gateway is answering as many requests as it is configured to; retry shortly",
        status=429,
        error_type="rate_limit_error",
        code="concurrency_limit",
        retry_after=float(seconds),
    )


def _log_access(scope: Scope, record: dict[str, Any], started: float) -> None:
    client = scope.get("client")
    _LOG.info(
        GATEWAY_REQUEST,
        method=scope.get("method"),
        path=_path(scope),
        status=record["status"],
        model=record["model"],
        streamed=record["streamed"],
        duration_ms=round((time.monotonic() - started) * 1000, 3),
        client=f"{client[0]}:{client[1]}" if client else None,
    )
