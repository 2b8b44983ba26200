"""Structured output, streamed: the value growing as its JSON arrives, validated at the end.

``get_streaming_response_as(client, T, messages)`` is ``get_response_as`` over
``get_streaming_response``: the same request (the type's ``json_schema`` format replaces
``options.response_format``), the same reading of the whole answer at the end (the final
turn's text, think block and fence read through, pydantic's strict mode), the same
``StructuredOutputError`` carrying the raw text and the whole response (coalesced with
``ChatResponse.from_updates``) when it is not a value of ``T``. Meanwhile each update comes
with the JSON read so far::

    async with get_streaming_response_as(client, Forecast, "Weather in Paris?") as stream:
        async for item in stream:
            print(item.partial)  # {} → {"city": "Par"} → {"city": "Paris", "celsius": 21}
            print(item.update.reasoning, end="")  # every update, text and reasoning, is here
    forecast = stream.result.value  # Forecast(city='Paris', celsius=21)

``partial`` is plain JSON (a ``dict`` for a model; a ``list[int]`` answer's list, unwrapped
from the ``{"data": …}`` it is asked as), not a ``T``, for three reasons. Half an object is
not a ``T``: a model's required field has not arrived yet, and pydantic's partial validation
(``experimental_allow_partial``) covers lists, dicts and ``TypedDict`` but not ``BaseModel``
nor dataclasses. An instance made without validation (``model_construct``) would claim types
its fields do not have yet (a number cut after its first digit, a string mid-word). And the
streamed ``parsed`` of openai-python's ``chat.completions.stream`` is the same partial dict,
so code written for one reads the other. pydantic-ai validates each partial and skips those
that fail, which for a ``BaseModel`` shows nothing until the object is nearly whole; here the
whole growth shows, and the one validated value is ``result.value``. How the partial is read,
and its bounds: ``providers.abstractions.partial_json``.

Nothing of the stream is hidden: each ``StructuredUpdate`` carries its ``ChatResponseUpdate``
(reasoning, usage, the tool loop's calls and results), and the error at the end carries them
all. Leaving early (``break`` inside ``async with``, ``aclose()``, a cancelled task) closes
the underlying stream, so the request ends with it. As ``get_response_as`` does, the stream
tells the wire clients that it validates its format itself (``typed_reading``), so a wrong
answer is one ``StructuredOutputError``, never a ``ConstraintViolationError`` first.
"""

from __future__ import annotations

import dataclasses
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, Self, TypeVar

from providers.abstractions.chat_response import ChatResponseBuilder
from providers.abstractions.contents import FunctionResultContent
from providers.abstractions.limits import DEFAULT_LIMITS, Limits
from providers.abstractions.open_values import ChatRole
from providers.abstractions.options import ChatOptions
from providers.abstractions.partial_json import PartialAnswer
from providers.abstractions.records import value_class
from providers.abstractions.structured_output import (
    StructuredResponse,
    format_of,
    read_answer,
)
from providers.abstractions.type_schema import WRAPPER_KEY, plan_for
from providers.abstractions.typed_reading import read_as_type
from providers.abstractions.update_runs import close_stream

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from providers.abstractions.chat_client import ChatClient, ChatInput
    from providers.abstractions.response_update import ChatResponseUpdate

__all__ = ["StructuredStream", "StructuredUpdate", "get_streaming_response_as"]

T = TypeVar("T")


@value_class(frozen=True)
class StructuredUpdate(Generic[T]):
    """One update of the stream and the answer's JSON read up to it.

    ``partial`` is ``None`` until the answer's JSON has begun (while the model reasons, or
    calls tools), and again after a tool result (the answer is what follows the last one). It
    is the same object as on the update before when this one added no answer text."""

    update: ChatResponseUpdate
    partial: Any


def get_streaming_response_as(
    client: ChatClient,
    output_type: type[T],
    messages: ChatInput,
    options: ChatOptions | None = None,
    *,
    limits: Limits = DEFAULT_LIMITS,
) -> StructuredStream[T]:
    """``client.get_streaming_response`` asked for JSON of ``output_type``: each update with
    the JSON so far, then the validated value (``StructuredStream.result``); see the module
    docstring. ``limits`` bounds the partial reading (``partial_json``). Nothing is sent until
    the stream is first iterated."""
    return StructuredStream(client, output_type, messages, options, limits)


class StructuredStream(Generic[T]):
    """An async iterator of ``StructuredUpdate``, and an async context manager that closes the
    request when left. After the last update, ``result`` is the validated value and the whole
    response; when the answer is not a value of ``T``, the iteration ends by raising
    ``StructuredOutputError`` instead (after every update was yielded)."""

    __slots__ = (
        "_answer",
        "_builder",
        "_client",
        "_format",
        "_inner",
        "_messages",
        "_options",
        "_output_type",
        "_plan",
        "_result",
        "_state",
    )

    def __init__(
        self,
        client: ChatClient,
        output_type: type[T],
        messages: ChatInput,
        options: ChatOptions | None,
        limits: Limits,
    ) -> None:
        self._client = client
        self._output_type = output_type
        self._messages = messages
        self._plan = plan_for(output_type, None, None, None)
        self._format = format_of(self._plan)
        self._options = dataclasses.replace(options or ChatOptions(), response_format=self._format)
        self._inner: AsyncIterator[ChatResponseUpdate] | None = None
        self._answer = PartialAnswer(limits.max_json_depth, limits.max_tool_argument_bytes)
        self._builder = ChatResponseBuilder()
        self._result: StructuredResponse[T] | None = None
        self._state = "new"  # → "streaming" → "done" (result set), or "closed"

    @property
    def result(self) -> StructuredResponse[T]:
        """The validated value and the whole response, once the stream has ended.

        Raises ``RuntimeError`` before that (``final()`` reads the rest of the stream first)."""
        if self._result is None:
            raise RuntimeError(
                f"the stream has not ended ({self._state}): iterate it to the end, or await final()"
            )
        return self._result

    async def final(self) -> StructuredResponse[T]:
        """Read what is left of the stream (its partials unseen) and return ``result``."""
        async for _ in self:
            pass
        return self.result

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> StructuredUpdate[T]:
        if self._state in ("done", "closed"):
            raise StopAsyncIteration
        try:
            with read_as_type(self._format):
                if self._inner is None:
                    self._inner = self._client.get_streaming_response(self._messages, self._options)
                    self._state = "streaming"
                update = await anext(self._inner)
        except StopAsyncIteration:
            self._end()
            raise
        except BaseException:
            # A failure (its partial response is on it) or a cancellation: the stream is over.
            self._state = "closed"
            await close_stream(self._inner)
            raise
        self._builder.add(update)
        return StructuredUpdate(update, self._partial(update))

    def _partial(self, update: ChatResponseUpdate) -> Any:
        answer = self._answer
        plain = update.plain_text
        if plain is None:  # not a lone text or reasoning: look at the contents
            if update.role == ChatRole.TOOL or any(
                isinstance(content, FunctionResultContent) for content in update.contents
            ):
                answer.reset()  # a tool result: the answer is what follows it
            answer.add(update.text)
        elif plain:
            answer.add(update.text)
        value = answer.read()
        if self._plan.wrapped and isinstance(value, dict):
            return value.get(WRAPPER_KEY)
        return value

    def _end(self) -> None:
        """The stream ended: read the whole answer (raising its ``StructuredOutputError``)."""
        self._state = "closed"
        response = self._builder.build()
        value: T = read_answer(self._plan, self._output_type, response)
        self._result = StructuredResponse(value, response)
        self._state = "done"

    async def aclose(self) -> None:
        """End the stream here, closing the request if it is still open."""
        if self._state in ("done", "closed"):
            return
        self._state = "closed"
        await close_stream(self._inner)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()
