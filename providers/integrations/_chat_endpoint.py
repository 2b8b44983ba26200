"""A ``POST /chat/completions`` endpoint answered in-process by an oaicompat pipeline.

The OpenAI-SDK transports (``providers.integrations.openai``) hand each chat request here and
turn the ``EndpointAnswer`` into their HTTP library's response; this module knows no HTTP
library, so the httpx and httpx2 transports cannot disagree about a byte.

What goes out is what a well-behaved OpenAI server sends, whatever the backend sent us:
reasoning in ``reasoning_content``, each tool call whole in one delta with an id, one usage
chunk (``choices: []``) at the end when ``stream_options.include_usage`` asked for it, then
``[DONE]``. A call the pipeline flagged (``error`` set: a tool the request did not offer,
arguments that do not parse) is never sent as a tool call: it goes out as the text the model
wrote, by the rule ``providers.abstractions.openai_answers`` states for every OpenAI writer.
An error before the first update is an HTTP error status with OpenAI's envelope, so the SDK
raises its status-typed exception; an error after it is an ``error`` event (the SDK raises
``APIError``), since the 200 is already sent. When the pipeline retries on its own, error
answers carry ``x-should-retry: false``: the SDK would otherwise repeat a request the pipeline
already retried, or judged unsafe to repeat.

What the SDK's request carries besides its body goes on: its headers, but those of the SDK's
own exchange (``providers.integrations._sdk_headers``), as ``ChatOptions.headers``; its
``prompt_cache_key`` (OpenAI's key for keeping one conversation's requests on the machine that
holds its cache, which the Agents SDK fills from the run's session, group or conversation id) as
``ChatOptions.conversation_id``, the session-affinity layer's routing key. The key stays in the
body too, for a backend that reads it.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Iterable, Mapping
from typing import Any

import orjson

from providers.abstractions.chat_client import ChatClient
from providers.abstractions.chat_response import ChatResponseUpdate
from providers.abstractions.contents import UsageContent
from providers.abstractions.errors import (
    ApiStatusError,
    AuthenticationError,
    BackendUnavailableError,
    ContextLengthExceededError,
    InvalidRequestError,
    InvalidResponseError,
    ModelNotFoundError,
    PermissionDeniedError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
    StreamInterruptedError,
)
from providers.abstractions.messages import ChatMessage
from providers.abstractions.openai_answers import finish_for
from providers.abstractions.options import ChatOptions
from providers.abstractions.properties import (
    REPLACED_SURROGATES,
    RETRY_ATTEMPTS,
    TRANSPORT_TIMESTAMPS,
)
from providers.abstractions.records import value_class
from providers.abstractions.services import ChatClientMetadata, service_of
from providers.abstractions.usage import UsageDetails
from providers.integrations._sdk_headers import forwarded_headers
from providers.layers.retry import RetryingChatClient

__all__ = [
    "ChatCompletionsEndpoint",
    "EndpointAnswer",
    "EventStream",
    "error_answer",
    "error_status",
]

_JSON = ("content-type", "application/json")
_OURS = frozenset(
    {
        RETRY_ATTEMPTS,
        TRANSPORT_TIMESTAMPS,
        REPLACED_SURROGATES,
        "answered_by",
        "request_timings",
        "text_tool_call_error",
        "function_invocation_stopped",
    }
)
"""Properties the pipeline's layers add for each other and for telemetry, not what the server
said: an OpenAI answer does not carry them."""


@value_class()
class EndpointAnswer:
    """An HTTP answer: ``body`` is whole bytes, or an event stream to pull (and close)."""

    status: int
    headers: list[tuple[str, str]]
    body: bytes | AsyncIterator[bytes]


_STATUS_BY_CLASS: tuple[tuple[type[ProviderError], int], ...] = (
    (ContextLengthExceededError, 400),
    (InvalidRequestError, 400),
    (AuthenticationError, 401),
    (PermissionDeniedError, 403),
    (ModelNotFoundError, 404),
    (RateLimitError, 429),
    (ProviderTimeoutError, 504),
    (BackendUnavailableError, 503),
    (ProviderConnectionError, 502),
    (StreamInterruptedError, 502),
    (InvalidResponseError, 502),
)
_TYPE_BY_STATUS = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
}


def error_status(error: ProviderError) -> int:
    """The HTTP status an OpenAI server would answer ``error`` with: the server's own when it
    sent one, else the class's (a time budget is a gateway timeout, a broken upstream a bad
    gateway), so the SDK raises the exception type a caller expects for it."""
    own = error.status if isinstance(error, ApiStatusError | ContextLengthExceededError) else None
    if own is not None and 400 <= own <= 599:
        return own
    for cls, status in _STATUS_BY_CLASS:
        if isinstance(error, cls):
            return status
    return 500


def error_envelope(error: ProviderError, status: int) -> dict[str, Any]:
    """OpenAI's ``{"error": {...}}``; the message is the technical one, which never holds a
    credential (the wire clients mask echoed secrets before an error is built)."""
    code = error.code
    if isinstance(error, ContextLengthExceededError):
        code = "context_length_exceeded"  # OpenAI's code, which frameworks look for
    return {
        "error": {
            "message": str(error),
            "type": error.error_type or _TYPE_BY_STATUS.get(status, "server_error"),
            "param": error.param,
            "code": code,
        }
    }


class ChatCompletionsEndpoint:
    """Reads an OpenAI chat request, runs it through ``client``, writes OpenAI's answer.

    ``request_model``: whether the request's ``model`` is sent on. Off by default: a framework
    needs some model name to build its client, but the pipeline's configured model is the one
    meant; with no configured model the request's is always used.
    """

    def __init__(
        self, client: ChatClient, *, request_model: bool = False, reasoning_alias: bool = False
    ) -> None:
        self.client = client
        metadata = service_of(client, ChatClientMetadata)
        self._model = metadata.model_id if metadata is not None else None
        self._request_model = request_model or self._model is None
        self._retries = service_of(client, RetryingChatClient) is not None
        self._alias = reasoning_alias

    async def answer(self, body: bytes, headers: Iterable[tuple[str, str]] = ()) -> EndpointAnswer:
        """The answer to one request (never raises a ``ProviderError``): its body, and the
        headers it came with."""
        try:
            request = json.loads(body)
        except ValueError:
            return self._error(InvalidRequestError("not a chat-completions request: invalid JSON"))
        return await self.answer_request(request, headers)

    async def answer_request(
        self, request: Any, headers: Iterable[tuple[str, str]] = ()
    ) -> EndpointAnswer:
        """``answer`` for a body already parsed (the gateway reads it to route it).

        ``reasoning_alias``: reasoning also goes out as ``reasoning``, the field vLLM writes,
        for clients that read only that one."""
        try:
            if not isinstance(request, dict) or not isinstance(request.get("messages"), list):
                raise ValueError("the body is not an object with a `messages` list")
            messages = [ChatMessage.from_openai(message) for message in request["messages"]]
        except (ValueError, TypeError, AttributeError) as exc:
            return self._error(InvalidRequestError(f"not a chat-completions request: {exc}"))
        options = ChatOptions.from_openai(request)
        options.headers = forwarded_headers(headers)
        cache_key = request.get("prompt_cache_key")
        if isinstance(cache_key, str) and cache_key:
            options.conversation_id = cache_key
        stream_options = options.additional_properties.pop("stream_options", None)
        if not self._request_model:
            options.model_id = None
        model = request.get("model") if isinstance(request.get("model"), str) else None
        defaults = _Defaults(self._model or model or "")
        if request.get("stream") is True:
            wants_usage = isinstance(stream_options, Mapping) and bool(
                stream_options.get("include_usage")
            )
            return await self._stream(messages, options, defaults, wants_usage)
        try:
            response = await self.client.get_response(messages, options)
        except ProviderError as error:
            return self._error(error)
        response.additional_properties = _theirs(response.additional_properties) or {}
        completion = response.to_openai()
        defaults.fill(completion)
        for choice in completion.get("choices", ()):
            message = choice.get("message", {})
            _name_calls(message.get("tool_calls"))
            if self._alias and "reasoning_content" in message:
                message["reasoning"] = message["reasoning_content"]
        return EndpointAnswer(200, [_JSON], json.dumps(completion).encode())

    async def _stream(
        self,
        messages: list[ChatMessage],
        options: ChatOptions,
        defaults: _Defaults,
        wants_usage: bool,
    ) -> EndpointAnswer:
        """The first update is awaited before the status is chosen: an error that comes before
        any output is the request's failure (an error status), not a broken stream."""
        updates = self.client.get_streaming_response(messages, options)
        try:
            first = await anext(updates, None)
        except ProviderError as error:
            return self._error(error)
        except BaseException:
            await _close(updates)
            raise
        events = _events(first, updates, defaults, wants_usage, self._alias)
        headers = [("content-type", "text/event-stream"), ("cache-control", "no-cache")]
        return EndpointAnswer(200, headers, EventStream(events, updates))

    def _error(self, error: ProviderError) -> EndpointAnswer:
        return error_answer(error, retries=self._retries)


def error_answer(
    error: ProviderError, *, retries: bool, status: int | None = None
) -> EndpointAnswer:
    """``error`` as an OpenAI error answer: its status (``error_status`` unless given), the
    envelope, ``Retry-After`` when the error has one, and ``x-should-retry: false`` when the
    pipeline retries on its own (the SDK would otherwise repeat what was already retried)."""
    status = error_status(error) if status is None else status
    headers = [_JSON]
    if retries:
        headers.append(("x-should-retry", "false"))
    if error.retry_after is not None:
        headers.append(("retry-after", str(max(0, round(error.retry_after)))))
    return EndpointAnswer(status, headers, json.dumps(error_envelope(error, status)).encode())


class EventStream:
    """An answer's events, whose ``aclose`` closes the pipeline's ``updates`` even when no
    event was pulled yet: an async generator closed before it started runs no ``finally``, and
    a caller that leaves before the first byte must still cancel the backend request."""

    __slots__ = ("_events", "_updates")

    def __init__(
        self, events: AsyncIterator[bytes], updates: AsyncIterator[ChatResponseUpdate]
    ) -> None:
        self._events = events
        self._updates = updates

    def __aiter__(self) -> EventStream:
        return self

    def __anext__(self) -> Awaitable[bytes]:
        return self._events.__anext__()

    async def aclose(self) -> None:
        try:
            await _close(self._events)
        finally:
            await _close(self._updates)  # (a no-op when the events' own close did it)


@value_class()
class _Defaults:
    """What OpenAI always sends and a backend may not have: an id, a time, a model name."""

    model: str
    response_id: str = ""
    created: int = 0

    def __post_init__(self) -> None:
        self.response_id = f"chatcmpl-{uuid.uuid4().hex}"
        self.created = int(time.time())

    def fill(self, body: dict[str, Any]) -> None:
        body.setdefault("id", self.response_id)
        body.setdefault("created", self.created)
        body.setdefault("model", self.model)
        self.response_id, self.created, self.model = body["id"], body["created"], body["model"]


async def _events(
    first: ChatResponseUpdate | None,
    updates: AsyncIterator[ChatResponseUpdate],
    defaults: _Defaults,
    wants_usage: bool,
    alias: bool = False,
) -> AsyncIterator[bytes]:
    """The event stream. Hot path: one pass per update.

    Closing it (the SDK's ``Stream.close()``, a framework's cancellation) closes ``updates``,
    and through them the upstream request.
    """
    usage: UsageDetails | None = None
    call_index = 0
    said_role = False
    try:
        update = first
        while update is not None:
            kept = [c for c in update.contents if not isinstance(c, UsageContent)]
            for content in update.contents:
                if isinstance(content, UsageContent):
                    details = content.details
                    usage = details if usage is None else usage.updated_with(details)
            if kept or update.finish_reason is not None or (update.role and not said_role):
                update.contents = kept
                if update.additional_properties:
                    update.additional_properties = _theirs(update.additional_properties)
                chunk = update.to_openai_chunk(tool_call_index=call_index)
                defaults.fill(chunk)
                delta = chunk["choices"][0]["delta"] if chunk.get("choices") else {}
                if not said_role:
                    delta.setdefault("role", "assistant")
                    said_role = True
                if alias and "reasoning_content" in delta:
                    delta["reasoning"] = delta["reasoning_content"]
                calls = delta.get("tool_calls")
                call_index += _name_calls(calls)
                if update.finish_reason is not None:
                    # The stream's calls, not this chunk's, say whether one is executable.
                    chunk["choices"][0]["finish_reason"] = finish_for(
                        update.finish_reason, call_index > 0
                    )
                yield _event(chunk)
            update = await anext(updates, None)
    except ProviderError as error:
        yield _event(error_envelope(error, error_status(error)))
        return
    finally:
        await _close(updates)
    if wants_usage and usage is not None:
        tail = {"object": "chat.completion.chunk", "choices": [], "usage": usage.to_openai()}
        defaults.fill(tail)
        yield _event(tail)
    yield b"data: [DONE]\n\n"


def _theirs(properties: dict[str, Any]) -> dict[str, Any] | None:
    return {key: value for key, value in properties.items() if key not in _OURS} or None


def _event(body: Mapping[str, Any]) -> bytes:
    """One event. orjson writes a chunk in about a fifth of the stdlib's time (compact, UTF-8
    as is); what it refuses and the stdlib writes (an integer past 64 bits, a key that is not
    a string, from a backend's own fields) goes the stdlib's way."""
    try:
        data = orjson.dumps(body)
    except TypeError:  # (orjson.JSONEncodeError is one)
        data = json.dumps(body, ensure_ascii=False).encode()
    return b"data: " + data + b"\n\n"


def _name_calls(calls: Any) -> int:
    """Gives each call without an id one (SDKs and frameworks key results by it); returns how
    many calls there were."""
    if not isinstance(calls, list):
        return 0
    for call in calls:
        if isinstance(call, dict) and not call.get("id"):
            call["id"] = f"call_{uuid.uuid4().hex[:24]}"
    return len(calls)


async def _close(updates: AsyncIterator[Any]) -> None:
    close = getattr(updates, "aclose", None)
    if close is not None:
        await close()
