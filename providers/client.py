"""``OpenAiCompatibleChatClient``: one async client for llama.cpp, vLLM, SGLang and OpenAI-style
servers.

The streamed path is a straight pipe — httpx bytes → ``SseDecoder`` → JSON → ``ChunkNormalizer``
→ updates — with no stage reaching back. Whatever goes wrong, the caller gets a typed
``ProviderError`` whose ``partial_response`` holds everything received before it.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import replace
from types import TracebackType
from typing import Any

import httpx

from providers.chat_client import ChatInput
from providers.chat_response import ChatResponse, ChatResponseUpdate
from providers.endpoint import Endpoint
from providers.errors import (
    InvalidResponseError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    StreamInterruptedError,
    error_from_response,
)
from providers.messages import ChatMessage
from providers.normalize import ChunkNormalizer
from providers.options import ChatOptions
from providers.profiles import BackendProfile, profile_for
from providers.request import build_chat_request
from providers.sse import ServerSentEvent, SseDecoder

__all__ = ["DEFAULT_TIMEOUT", "TRANSPORT_TIMESTAMPS", "OpenAiCompatibleChatClient"]

TRANSPORT_TIMESTAMPS = "transport_timestamps"
"""``additional_properties`` key of the client-measured ``time.monotonic()`` instants only the
transport sees: ``request_sent``, ``response_headers``, ``first_byte`` (and ``response_end`` for a
non-streamed call). On a stream they ride on the first update; the telemetry layer measures the
rest (first substantive token, last token, end) from the updates themselves."""

DEFAULT_TIMEOUT = httpx.Timeout(connect=10.0, read=600.0, write=60.0, pool=30.0)
"""``read`` bounds the gap between two network reads; a long prefill legitimately sends nothing
for minutes (llama.cpp pings every 30 s, vLLM and SGLang stay silent), so it is generous."""


class OpenAiCompatibleChatClient:
    """A ``ChatClient`` over ``POST {base_url}/chat/completions``.

    ``backend`` selects the ``BackendProfile`` (request-side quirks); parsing accepts every
    server's shapes whatever it is set to. One ``httpx.AsyncClient`` is shared by all requests;
    pass ``http_client`` to bring your own (it is then not closed by ``aclose``).
    """

    def __init__(
        self,
        base_url: str,
        model_id: str | None = None,
        api_key: str | None = None,
        *,
        backend: str | BackendProfile | None = None,
        http_client: httpx.AsyncClient | None = None,
        timeout: httpx.Timeout | float | None = DEFAULT_TIMEOUT,
        headers: Mapping[str, str] | None = None,
        merge_system_messages: bool | None = None,
        redact_fingerprint: bool = False,
    ) -> None:
        self.endpoint = Endpoint.from_base_url(base_url)
        self.model_id = model_id
        profile = profile_for(backend)
        if merge_system_messages is not None:
            profile = replace(profile, merge_system_messages=merge_system_messages)
        self.profile = profile
        self._redact_fingerprint = redact_fingerprint
        request_headers = {"Accept": "application/json, text/event-stream"}
        request_headers.update(headers or {})
        if api_key and api_key.strip():
            request_headers["Authorization"] = f"Bearer {api_key.strip()}"
        self._headers = request_headers
        self._owns_http = http_client is None
        self._http = http_client or httpx.AsyncClient(timeout=timeout)

    def __repr__(self) -> str:
        # Never the headers: they hold the API key.
        return (
            f"{type(self).__name__}(base_url={self.endpoint.api_base!r}, "
            f"model_id={self.model_id!r}, backend={self.profile.name!r})"
        )

    async def __aenter__(self) -> OpenAiCompatibleChatClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    def build_request_body(
        self, messages: ChatInput, options: ChatOptions | None = None, *, stream: bool
    ) -> dict[str, Any]:
        """The exact JSON body a call would send (useful for logging and tests)."""
        return build_chat_request(
            ChatMessage.coerce_all(messages),
            options,
            model_id=self.model_id,
            stream=stream,
            profile=self.profile,
        )

    async def get_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> ChatResponse:
        body = self.build_request_body(messages, options, stream=False)
        backend = self.profile.name
        stamps = {"request_sent": time.monotonic()}
        try:
            async with self._http.stream(
                "POST", self.endpoint.chat_completions, json=body, headers=self._headers
            ) as response:
                stamps["response_headers"] = time.monotonic()
                pieces: list[bytes] = []
                async for piece in response.aiter_bytes():
                    if not pieces:
                        stamps["first_byte"] = time.monotonic()
                    pieces.append(piece)
                content = b"".join(pieces)
                stamps["response_end"] = time.monotonic()
        except httpx.TimeoutException as exc:
            raise _timeout_error(exc, backend) from exc
        except httpx.TransportError as exc:
            raise ProviderConnectionError(
                f"could not reach {self.endpoint.chat_completions}: {exc!r}", backend=backend
            ) from exc
        if response.status_code >= 400:
            raise error_from_response(
                response.status_code,
                content,
                backend=backend,
                retry_after=_retry_after(response.headers),
            )
        try:
            payload = json.loads(content)
        except ValueError as exc:
            raise InvalidResponseError(
                f"HTTP {response.status_code} body is not JSON",
                status=response.status_code,
                backend=backend,
                body=content[:300].decode("utf-8", "replace"),
            ) from exc
        if not isinstance(payload, dict):
            raise InvalidResponseError("the response body is not a JSON object", backend=backend)
        normalizer = ChunkNormalizer(self.profile, redact_fingerprint=self._redact_fingerprint)
        result = ChatResponse.from_updates(normalizer.normalize_completion(payload))
        result.raw = payload
        result.additional_properties[TRANSPORT_TIMESTAMPS] = stamps
        return result

    async def get_streaming_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        body = self.build_request_body(messages, options, stream=True)
        backend = self.profile.name
        state = _StreamState(
            ChunkNormalizer(self.profile, redact_fingerprint=self._redact_fingerprint), backend
        )
        decoder = SseDecoder()
        stamps = state.stamps = {"request_sent": time.monotonic()}
        try:
            async with self._http.stream(
                "POST", self.endpoint.chat_completions, json=body, headers=self._headers
            ) as response:
                stamps["response_headers"] = time.monotonic()
                if response.status_code >= 400:
                    raise error_from_response(
                        response.status_code,
                        await response.aread(),
                        backend=backend,
                        retry_after=_retry_after(response.headers),
                    )
                async for chunk in response.aiter_bytes():
                    if "first_byte" not in stamps:
                        stamps["first_byte"] = time.monotonic()
                    for update in state.consume(decoder.feed(chunk)):
                        yield update
                    if state.done:
                        break
                if not state.done:
                    for update in state.consume(decoder.finish()):
                        yield update
            for update in state.end():
                yield update
        except ProviderError as exc:
            state.attach_partial(exc)
            raise
        except httpx.TimeoutException as exc:
            error: ProviderError = _timeout_error(exc, backend)
            state.attach_partial(error)
            raise error from exc
        except httpx.TransportError as exc:
            if state.received:
                error = StreamInterruptedError(
                    f"the connection broke mid-stream: {exc!r}", backend=backend
                )
            else:
                error = ProviderConnectionError(
                    f"could not reach {self.endpoint.chat_completions}: {exc!r}", backend=backend
                )
            state.attach_partial(error)
            raise error from exc


class _StreamState:
    """What one stream has received so far, so any failure can hand it to the caller."""

    __slots__ = ("backend", "done", "finished", "normalizer", "received", "stamps")

    def __init__(self, normalizer: ChunkNormalizer, backend: str) -> None:
        self.normalizer = normalizer
        self.backend = backend
        self.received: list[ChatResponseUpdate] = []
        self.finished = False  # a finish_reason arrived
        self.done = False  # `data: [DONE]` arrived
        self.stamps: dict[str, float] | None = None  # given to the first update, then dropped

    def consume(self, events: list[ServerSentEvent]) -> Iterator[ChatResponseUpdate]:
        # Lazily, one by one: updates before an error event in the same network read reach the
        # caller before the error does, whatever the chunking, and are recorded for the partial.
        received = self.received
        for event in events:
            if event.data == "[DONE]":
                self.done = True
                return
            for update in self.normalizer.feed(_loads(event.data, self.backend)):
                if update.finish_reason is not None:
                    self.finished = True
                if self.stamps is not None:
                    _add_property(update, TRANSPORT_TIMESTAMPS, self.stamps)
                    self.stamps = None
                received.append(update)
                yield update

    def end(self) -> list[ChatResponseUpdate]:
        """Flush tool calls still pending; a stream with neither finish nor [DONE] was cut."""
        updates = self.normalizer.finish()
        self.received.extend(updates)
        if not self.done and not self.finished:
            raise StreamInterruptedError(
                "the stream ended before a finish reason or [DONE]", backend=self.backend
            )
        return updates

    def attach_partial(self, error: ProviderError) -> None:
        """Give the error everything received, including tool calls still being assembled."""
        if error.partial_response is None:
            pending = self.normalizer.finish()
            error.partial_response = ChatResponse.from_updates([*self.received, *pending])


def _add_property(update: ChatResponseUpdate, key: str, value: object) -> None:
    if update.additional_properties is None:
        update.additional_properties = {key: value}
    else:
        update.additional_properties[key] = value


def _loads(data: str, backend: str) -> dict[str, Any]:
    try:
        payload = json.loads(data)
    except ValueError as exc:
        # The text goes to `body`, not the message: it may be completion text.
        raise InvalidResponseError(
            f"a stream event is not JSON ({len(data)} characters)", backend=backend, body=data
        ) from exc
    if not isinstance(payload, dict):
        raise InvalidResponseError("a stream event is not a JSON object", backend=backend)
    return payload


def _timeout_error(exc: httpx.TimeoutException, backend: str) -> ProviderTimeoutError:
    phase = "connect" if isinstance(exc, httpx.ConnectTimeout | httpx.PoolTimeout) else "idle"
    return ProviderTimeoutError(f"{phase} timeout: {exc!r}", phase=phase, backend=backend)


def _retry_after(headers: httpx.Headers) -> float | None:
    value = headers.get("retry-after-ms")
    if value:
        try:
            return float(value) / 1000.0
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value:
        try:
            return float(value)
        except ValueError:
            return None
    return None
