"""``get_streaming_response_as`` over scripted streams (issue 34, item 8): partials as the JSON
arrives, the validated value at the end, the typed error with everything kept, and the request
closed when the caller leaves early."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic import BaseModel

from providers import (
    ChatInput,
    ChatOptions,
    ChatResponseFormat,
    ChatResponseUpdate,
    ChatRole,
    FunctionCallContent,
    FunctionResultContent,
    Limits,
    ServerError,
    StructuredOutputError,
    TextReasoningContent,
    get_streaming_response_as,
)
from providers.abstractions.typed_reading import read_by_caller
from tests.unit.scripted_client import ScriptedClient, role, text


class Forecast(BaseModel):
    city: str
    celsius: int


def script(*pieces: str | ChatResponseUpdate) -> list[ChatResponseUpdate | BaseException]:
    return [role(), *(text(p) if isinstance(p, str) else p for p in pieces)]


def reasoning(value: str) -> ChatResponseUpdate:
    return ChatResponseUpdate([TextReasoningContent(value)])


class Recorded(ScriptedClient):
    """Records the options of each stream and whether the stream's end was read as typed."""

    def __init__(self, *steps: Any) -> None:
        super().__init__(*steps)
        self.options: list[ChatOptions | None] = []
        self.read_by_caller_at_end: list[bool] = []

    async def get_streaming_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        self.options.append(options)
        async for update in super().get_streaming_response(messages, options):
            yield update
        # where a wire client checks the answer against the format it was asked under
        assert options is not None and options.response_format is not None
        self.read_by_caller_at_end.append(read_by_caller(options.response_format))


async def test_partials_grow_as_the_json_arrives_and_the_value_is_validated_at_the_end() -> None:
    client = Recorded(
        script(
            reasoning("Paris "),
            reasoning("in spring."),
            '{"ci',
            'ty": "Pa',
            'ris", "cel',
            'sius": 2',
            "1}",
        )
    )
    seen: list[tuple[str, str, Any]] = []
    async with get_streaming_response_as(client, Forecast, "Weather?") as stream:
        async for item in stream:
            seen.append((item.update.reasoning, item.update.text, item.partial))

    assert seen == [
        ("", "", None),
        ("Paris ", "", None),
        ("in spring.", "", None),
        ("", '{"ci', {}),
        ("", 'ty": "Pa', {"city": "Pa"}),
        ("", 'ris", "cel', {"city": "Paris"}),
        ("", 'sius": 2', {"city": "Paris", "celsius": 2}),
        ("", "1}", {"city": "Paris", "celsius": 21}),
    ]
    assert stream.result.value == Forecast(city="Paris", celsius=21)
    assert stream.result.response.messages[-1].contents[0] == TextReasoningContent(
        "Paris in spring."
    )
    assert stream.result.text == '{"city": "Paris", "celsius": 21}'
    assert client.closed_streams == 1
    assert client.read_by_caller_at_end == [True]


async def test_the_types_format_replaces_the_callers_and_the_other_options_are_sent() -> None:
    client = Recorded(script('{"city": "Paris", "celsius": 21}'))
    options = ChatOptions(temperature=0.2, response_format=ChatResponseFormat.JSON)
    result = await get_streaming_response_as(client, Forecast, "Weather?", options).final()

    assert result.value.celsius == 21
    (sent,) = client.options
    assert sent is not None and sent.temperature == 0.2
    assert sent.response_format == ChatResponseFormat.for_type(Forecast)
    assert options.response_format == ChatResponseFormat.JSON  # the caller's are left alone


async def test_nothing_is_sent_until_the_stream_is_iterated() -> None:
    client = Recorded(script("{}"))
    stream = get_streaming_response_as(client, Forecast, "Weather?")
    assert client.options == []
    with pytest.raises(RuntimeError, match="has not ended"):
        stream.result  # noqa: B018
    await stream.aclose()
    assert client.options == []


async def test_a_non_object_type_is_shown_unwrapped() -> None:
    client = ScriptedClient(script('{"data": [1, ', "2, 3", "]}"))
    stream = get_streaming_response_as(client, list[int], "Numbers?")
    partials = [item.partial async for item in stream]

    assert partials == [None, [1], [1, 2, 3], [1, 2, 3]]
    assert stream.result.value == [1, 2, 3]


async def test_a_think_block_and_a_fence_are_read_through() -> None:
    client = ScriptedClient(
        script("<think>hm", "m</think>\n", "```js", 'on\n{"city": "Ro', 'me", "celsius": 3}\n```')
    )
    stream = get_streaming_response_as(client, Forecast, "Weather?")
    partials = [item.partial async for item in stream]

    assert partials == [None, None, None, None, {"city": "Ro"}, {"city": "Rome", "celsius": 3}]
    assert stream.result.value == Forecast(city="Rome", celsius=3)


async def test_the_answer_is_what_follows_the_last_tool_result() -> None:
    call = FunctionCallContent("c1", "lookup", {}, "{}")
    client = ScriptedClient(
        script(
            '{"city": "Nowhere", "celsius": 0}',
            ChatResponseUpdate([call]),
            ChatResponseUpdate([FunctionResultContent("c1", "Paris")], role=ChatRole.TOOL),
            ChatResponseUpdate(role=ChatRole.ASSISTANT),
            '{"city": "Paris", ',
            '"celsius": 21}',
        )
    )
    stream = get_streaming_response_as(client, Forecast, "Weather?")
    partials = [item.partial async for item in stream]

    assert partials[1] == {"city": "Nowhere", "celsius": 0}
    assert partials[3] is None, "the tool result starts the answer anew"
    assert partials[-2:] == [{"city": "Paris"}, {"city": "Paris", "celsius": 21}]
    assert stream.result.value == Forecast(city="Paris", celsius=21)


async def test_an_answer_that_is_not_the_type_raises_with_every_update_kept() -> None:
    client = ScriptedClient(
        script(reasoning("thinking"), '{"city": "Paris", ', '"celsius": "hot"}')
    )
    stream = get_streaming_response_as(client, Forecast, "Weather?")
    seen: list[Any] = []
    with pytest.raises(StructuredOutputError) as caught:
        async for item in stream:
            seen.append(item.partial)

    assert seen[-1] == {"city": "Paris", "celsius": "hot"}, "every partial reached the caller"
    error = caught.value
    assert error.reason == "schema_mismatch"
    assert error.text == '{"city": "Paris", "celsius": "hot"}'
    assert error.response.text == error.text
    assert error.response.messages[-1].contents[0] == TextReasoningContent("thinking")
    assert error.partial_response is error.response
    with pytest.raises(RuntimeError):
        stream.result  # noqa: B018
    assert [item async for item in stream] == [], "the stream is over"


async def test_json_cut_short_is_invalid_json_and_its_partial_was_shown() -> None:
    client = ScriptedClient(script('{"city": "Par'))
    stream = get_streaming_response_as(client, Forecast, "Weather?")
    partials: list[Any] = []
    with pytest.raises(StructuredOutputError) as caught:
        async for item in stream:
            partials.append(item.partial)

    assert partials[-1] == {"city": "Par"}
    assert caught.value.reason == "invalid_json"
    assert caught.value.text == '{"city": "Par'


async def test_a_mid_stream_failure_passes_through_and_ends_the_stream() -> None:
    failure = ServerError("upstream died", status=502)
    client = ScriptedClient([*script('{"city": "Pa'), failure])
    stream = get_streaming_response_as(client, Forecast, "Weather?")
    partials: list[Any] = []
    with pytest.raises(ServerError) as caught:
        async for item in stream:
            partials.append(item.partial)

    assert partials[-1] == {"city": "Pa"}
    assert caught.value.partial_response is not None
    assert caught.value.partial_response.text == '{"city": "Pa'
    assert client.closed_streams == 1
    assert [item async for item in stream] == []


async def test_leaving_early_closes_the_underlying_stream() -> None:
    client = ScriptedClient(script('{"city": ', '"Paris", ', '"celsius": 21}'))
    async with get_streaming_response_as(client, Forecast, "Weather?") as stream:
        async for item in stream:
            if item.partial:
                break
    assert client.closed_streams == 1
    assert [item async for item in stream] == []
    with pytest.raises(RuntimeError, match="closed"):
        stream.result  # noqa: B018


async def test_aclose_closes_the_underlying_stream() -> None:
    client = ScriptedClient(script('{"city": ', '"Paris"}'))
    stream = get_streaming_response_as(client, Forecast, "Weather?")
    await anext(stream)
    assert client.closed_streams == 0
    await stream.aclose()
    assert client.closed_streams == 1


class Stalled(ScriptedClient):
    """Sends one update, then waits for ever: only cancelling the task ends it."""

    def __init__(self) -> None:
        super().__init__([])
        self.started = asyncio.Event()

    async def get_streaming_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        try:
            yield text('{"city": ')
            self.started.set()
            await asyncio.Event().wait()
            yield text("never")
        finally:
            self.closed_streams += 1


async def test_cancelling_the_task_closes_the_underlying_stream() -> None:
    client = Stalled()
    stream = get_streaming_response_as(client, Forecast, "Weather?")

    async def consume() -> None:
        async for _ in stream:
            pass

    task = asyncio.create_task(consume())
    await client.started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert client.closed_streams == 1
    assert [item async for item in stream] == []


async def test_partials_are_bounded_by_the_limits_and_the_whole_answer_still_validated() -> None:
    deep = ScriptedClient(script('{"a": [[[[', "1]]]]}"))
    stream = get_streaming_response_as(deep, dict[str, Any], "x", limits=Limits(max_json_depth=3))
    assert [item.partial async for item in stream] == [None, None, None]
    assert stream.result.value == {"a": [[[[1]]]]}

    long = ScriptedClient(script('{"city": "Paris", ', '"celsius": 21}'))
    limits = Limits(max_tool_argument_bytes=20)
    stream2 = get_streaming_response_as(long, Forecast, "x", limits=limits)
    # 33 characters in all: the partial stops at the first 18, the value is read from all 33
    assert [item.partial async for item in stream2] == [None, {"city": "Paris"}, {"city": "Paris"}]
    assert stream2.result.value == Forecast(city="Paris", celsius=21)
