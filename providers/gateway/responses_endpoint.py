"""``POST /v1/responses`` answered by a chat pipeline: the Responses API over any backend.

The contract is ``providers.integrations._chat_endpoint.ChatCompletionsEndpoint``'s: bytes and
headers in, an ``EndpointAnswer`` out, never a ``ProviderError`` raised. The request is read
into messages and options (``responses_reading``: what is refused, and why the gateway keeps no
state), run through the client as a chat request, and written back as OpenAI's Responses API
writes it (``responses_writing``), so openai-python's and the Node SDK's ``responses`` helpers
parse it with their own models.

Errors: a request that cannot be read is a 400 naming the field. A pipeline error before the
first update is the HTTP status an OpenAI server would answer it with, in OpenAI's envelope
(``error_status``, ``error_envelope``), so an SDK raises its status-typed exception; after it,
the 200 is sent, and the stream ends with a ``response.failed`` event carrying the error. When
the pipeline retries on its own, error answers carry ``x-should-retry: false`` (the SDK would
otherwise repeat what the pipeline already retried).

Closing the event stream (a client that went away) closes the pipeline's update stream, and
through it the backend request.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator, Iterable

from providers.abstractions.chat_client import ChatClient
from providers.abstractions.chat_response import ChatResponseUpdate
from providers.abstractions.errors import ProviderError
from providers.abstractions.services import service_of
from providers.gateway.responses_reading import ResponsesRequest, read_request
from providers.gateway.responses_writing import Frame, OutputWriter
from providers.integrations._chat_endpoint import (
    EndpointAnswer,
    EventStream,
    error_answer,
    error_status,
)
from providers.integrations._sdk_headers import forwarded_headers
from providers.layers.retry import RetryingChatClient

__all__ = ["ResponsesEndpoint"]

_JSON = ("content-type", "application/json")
_SSE = [("content-type", "text/event-stream"), ("cache-control", "no-cache")]


class ResponsesEndpoint:
    """Reads a Responses request, runs it through ``client``, writes the Responses answer.

    ``model`` is the name every answer carries (the one the caller asked for, or the role's):
    the request's ``model`` chose the client before this endpoint was reached, so it is not
    sent on; the pipeline's configured model is the one meant.
    """

    def __init__(self, client: ChatClient, *, model: str) -> None:
        self.client = client
        self.model = model
        self._retries = service_of(client, RetryingChatClient) is not None

    async def answer(self, body: bytes, headers: Iterable[tuple[str, str]] = ()) -> EndpointAnswer:
        """The answer to one request (never raises a ``ProviderError``)."""
        try:
            request = read_request(body)
        except ProviderError as error:
            return self._error(error)
        request.options.headers = forwarded_headers(headers)
        writer = OutputWriter(Frame(self.model, request.echo), events=request.stream)
        if request.stream:
            return await self._stream(request, writer)
        try:
            response = await self.client.get_response(request.messages, request.options)
        except ProviderError as error:
            return self._error(error)
        return EndpointAnswer(200, [_JSON], json.dumps(writer.answer(response)).encode())

    async def _stream(self, request: ResponsesRequest, writer: OutputWriter) -> EndpointAnswer:
        """The first update is awaited before the status is chosen: an error before any output
        is the request's failure (an error status), not a broken stream."""
        updates = self.client.get_streaming_response(request.messages, request.options)
        try:
            first = await anext(updates, None)
        except ProviderError as error:
            return self._error(error)
        except BaseException:
            await _close(updates)
            raise
        return EndpointAnswer(
            200, list(_SSE), EventStream(_events(first, updates, writer), updates)
        )

    def _error(self, error: ProviderError) -> EndpointAnswer:
        return error_answer(error, retries=self._retries)


async def _events(
    first: ChatResponseUpdate | None,
    updates: AsyncIterator[ChatResponseUpdate],
    writer: OutputWriter,
) -> AsyncGenerator[bytes, None]:
    """The event stream: one chunk of events per update. Closing it closes ``updates``."""
    try:
        writer.start()
        update = first
        while update is not None:
            writer.update(update)
            events = writer.take()
            if events:
                yield b"".join(events)
            update = await anext(updates, None)
    except ProviderError as error:
        writer.fail(error, error_status(error))
        yield b"".join(writer.take())
        return
    finally:
        await _close(updates)
    writer.finish()
    yield b"".join(writer.take())


async def _close(updates: AsyncIterator[ChatResponseUpdate]) -> None:
    close = getattr(updates, "aclose", None)
    if close is not None:
        await close()
