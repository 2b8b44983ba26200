"""How bytes move for the Responses client: one request, as JSON or as an event stream.

The chat client's transport discipline, shared rather than re-invented: ``SseDecoder`` for the
bytes, one ``Watchdog`` per stream for the first-token, idle and total budgets (httpx enforces
only connect), ``TransportErrorMapping`` so every httpx failure becomes the same typed error with
the partial response attached, and the transport timestamps telemetry reads. It knows nothing of
conversations or stored responses; the client decides what to send and where.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx

from providers.abstractions.chat_response import ChatResponseUpdate
from providers.abstractions.errors import ProviderError
from providers.abstractions.limits import DEFAULT_LIMITS, Limits
from providers.chat_completions.http_client_base import (
    RequestHeaders,
    fetch_whole,
    mask_secrets,
    url_for_errors,
)
from providers.responses.stream import ResponsesStreamState, loads_object
from providers.transport.answer_shape import EVENT_STREAM, json_instead_of_events
from providers.transport.bodies import body_chunks, read_body, read_prefix, too_large
from providers.transport.error_mapping import TransportErrorMapping
from providers.transport.output_watch import report_output_progress
from providers.transport.response_headers import report_response_headers
from providers.transport.sse import SseDecoder
from providers.transport.timeouts import Timeouts, Watchdog

__all__ = ["ResponsesTransport", "StatusError"]

StatusError = Callable[[int, bytes, httpx.Headers], ProviderError]
"""Turns an HTTP error answer into the typed error (the client adds the served model ids)."""


class ResponsesTransport:
    __slots__ = (
        "_backend",
        "_headers",
        "_http",
        "_limits",
        "_request_extensions",
        "_secrets",
        "_status_error",
        "_url_for_errors",
        "timeouts",
    )

    def __init__(
        self,
        http: Callable[[], httpx.AsyncClient],
        *,
        url: str,
        backend: str,
        headers: dict[str, str],
        timeouts: Timeouts,
        status_error: StatusError,
        limits: Limits = DEFAULT_LIMITS,
        secrets: tuple[str, ...] = (),
    ) -> None:
        self._http = http  # (the running loop's pool: the client keeps one per loop)
        self._secrets = secrets
        self._limits = limits
        self._backend = backend
        self._headers = headers
        self.timeouts = timeouts
        self._request_extensions = timeouts.request_extensions()
        self._status_error = status_error
        self._url_for_errors = url_for_errors(url)

    def _error_mapping(
        self,
        state: ResponsesStreamState | None = None,
        watch: Watchdog | None = None,
        secrets: tuple[bytes, ...] = (),
    ) -> TransportErrorMapping:
        texts = self._secrets + tuple(secret.decode() for secret in secrets)
        return TransportErrorMapping(
            backend=self._backend,
            url=self._url_for_errors,
            connect_budget=self.timeouts.connect,
            state=state,
            watch=watch,
            secrets=texts,
        )

    async def request_json(
        self,
        method: str,
        url: str,
        body: dict[str, Any] | None = None,
        headers: RequestHeaders | None = None,
    ) -> tuple[dict[str, Any], dict[str, float]]:
        """One non-streamed exchange: the JSON object answered, and the transport timestamps.

        Only the ``connect`` and ``total`` budgets apply: no byte flows until the answer is
        complete, so there is no first token or gap to time. ``headers``: the request's own
        (``HttpClientBase._request_headers``), else the client's.
        """
        sent, secrets = headers or (self._headers, ())
        response, content, stamps = await fetch_whole(
            self._http(),
            method,
            url,
            body=body,
            headers=sent,
            extensions=self._request_extensions,
            total=self.timeouts.total,
            backend=self._backend,
            mapping=self._error_mapping(secrets=secrets),
            limits=self._limits,
        )
        report_response_headers(response.status_code, response.headers)
        if response.status_code >= 400:
            content = mask_secrets(content, secrets)
            raise self._status_error(response.status_code, content, response.headers)
        return loads_object(content, self._backend, self._limits.max_json_depth), stamps

    async def stream(
        self,
        method: str,
        url: str,
        body: dict[str, Any] | None,
        state: ResponsesStreamState,
        headers: RequestHeaders | None = None,
    ) -> AsyncIterator[ChatResponseUpdate]:
        """The updates of one streamed exchange; ``state`` holds what arrived, for the caller
        and for any error's partial response. A JSON answer where events were asked for
        (SGLang's ``GET ?stream=true``) is read whole, through the same normaliser; an answer
        that holds neither (``answer_shape``) is ``InvalidResponseError``. Everything read is
        bounded by the ``Limits``. ``headers``: as for ``request_json``.

        Hot path: every chunk of a Responses stream runs the loop below, inline in one frame."""
        limits = self._limits
        request_headers, secrets = headers or (self._headers, ())
        decoder = SseDecoder(limits.max_event_bytes)
        sent = time.monotonic()
        stamps = state.stamps = {"request_sent": sent}
        report_output_progress(state)  # (to a retry or failover reading the head, if any)
        watch = Watchdog(self.timeouts, state, self._backend, sent)
        clock = time.monotonic
        try:
            with self._error_mapping(state, watch, secrets):
                async with self._http().stream(
                    method,
                    url,
                    json=body,
                    headers=request_headers,
                    extensions=self._request_extensions,
                    follow_redirects=False,  # (off the origin it would carry the headers)
                ) as response:
                    stamps["response_headers"] = time.monotonic()
                    status = response.status_code
                    report_response_headers(status, response.headers)
                    if status >= 400:
                        error_body = await read_prefix(response, limits.max_error_body_bytes)
                        error_body = mask_secrets(error_body, secrets)
                        raise self._status_error(status, error_body, response.headers)
                    content_type: str = response.headers.get("content-type", "")
                    if status != 200 or not content_type.startswith(EVENT_STREAM):
                        await json_instead_of_events(response, limits, self._backend)
                        content = await read_body(response, limits.max_body_bytes)
                        updates = state.whole(content)
                        state.check_output(0, limits.max_output_bytes)
                        for update in updates:
                            yield update
                    else:
                        stream_bytes = limits.max_stream_bytes  # what may still arrive
                        output_due = stream_bytes - limits.max_output_bytes  # (output_bound)
                        async for chunk in body_chunks(response):
                            watch.since = None  # data arrived: the caller may hold the task
                            if "first_byte" not in stamps:
                                stamps["first_byte"] = time.monotonic()
                            stream_bytes -= len(chunk)
                            if stream_bytes < 0:
                                size = limits.max_stream_bytes
                                raise too_large("max_stream_bytes", size, "the stream", None)
                            for update in state.consume(decoder.feed(chunk)):
                                yield update
                            if stream_bytes <= output_due:
                                output_due = state.check_output(
                                    stream_bytes, limits.max_output_bytes
                                )
                            if state.done:
                                break
                            now = clock()
                            if now >= watch.due:
                                watch.overdue(now)
                            watch.since = now  # waiting on the network again
                        watch.since = None
                        if not state.done:
                            for update in state.consume(decoder.finish()):
                                yield update
                for update in state.end():
                    yield update
        finally:
            watch.close()
