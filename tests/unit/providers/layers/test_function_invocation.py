"""``FunctionInvokingChatClient`` over a scripted inner client: the tool loop's rules."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from providers import (
    AIFunction,
    ChatFinishReason,
    ChatInput,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    ChatRole,
    ChatToolMode,
    ConfigurationError,
    FunctionCallContent,
    FunctionInvokingChatClient,
    FunctionResultContent,
    TextContent,
)
from providers.builder import ChatClientBuilder
from providers.layers.function_invocation import FUNCTION_EXCEPTION, FUNCTION_INVOCATION_STOPPED
from tests.unit.scripted_client import ScriptedClient, answer, role, text


class Recorded(ScriptedClient):
    """A ``ScriptedClient`` that also records the options of every call."""

    def __init__(self, *steps: Any) -> None:
        super().__init__(*steps)
        self.options: list[ChatOptions | None] = []

    async def get_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> ChatResponse:
        self.options.append(options)
        return await super().get_response(messages, options)

    def get_streaming_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        self.options.append(options)
        return super().get_streaming_response(messages, options)


def call(name: str, call_id: str = "c1", **arguments: Any) -> FunctionCallContent:
    return FunctionCallContent(call_id, name, arguments, json.dumps(arguments))


def calling(*calls: FunctionCallContent) -> ChatResponse:
    return ChatResponse(
        [ChatMessage(ChatRole.ASSISTANT, list(calls))], finish_reason=ChatFinishReason.TOOL_CALLS
    )


def streamed_calls(*calls: FunctionCallContent) -> list[ChatResponseUpdate]:
    updates = [role(), *(ChatResponseUpdate([c]) for c in calls)]
    updates[-1].finish_reason = ChatFinishReason.TOOL_CALLS
    return updates


class Tools:
    """Functions that record how they were called."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def weather(self) -> AIFunction:
        async def get_weather(city: str, unit: str = "celsius") -> str:
            """The weather."""
            self.calls.append(("get_weather", {"city": city, "unit": unit}))
            return f"21 degrees {unit} in {city}"

        return AIFunction.from_callable(get_weather)

    def time(self) -> AIFunction:
        def get_time(tz: str) -> dict[str, str]:
            """The time."""
            self.calls.append(("get_time", {"tz": tz}))
            return {"tz": tz, "time": "12:00"}

        return AIFunction.from_callable(get_time)

    def failing(self) -> AIFunction:
        def explode() -> None:
            """Always fails."""
            self.calls.append(("explode", {}))
            raise RuntimeError("disk on fire at /srv/secret")

        return AIFunction.from_callable(explode)


PARALLEL = (call("get_weather", "w", city="Paris"), call("get_time", "t", tz="Europe/Paris"))


async def test_parallel_calls_run_once_each_and_the_final_answer_is_returned() -> None:
    tools = Tools()
    inner = Recorded(calling(*PARALLEL), answer("Sunny, and noon."))
    client = FunctionInvokingChatClient(inner)
    history = [ChatMessage.user("Weather and time in Paris?")]
    response = await client.get_response(
        history, ChatOptions(tools=[tools.weather(), tools.time()])
    )

    assert sorted(tools.calls) == [
        ("get_time", {"tz": "Europe/Paris"}),
        ("get_weather", {"city": "Paris", "unit": "celsius"}),
    ]
    assert response.text == "Sunny, and noon."
    assert [m.role for m in response.messages] == [
        ChatRole.ASSISTANT,
        ChatRole.TOOL,
        ChatRole.ASSISTANT,
    ]
    results = response.messages[1].contents
    assert results == [
        FunctionResultContent("w", "21 degrees celsius in Paris"),
        FunctionResultContent("t", {"tz": "Europe/Paris", "time": "12:00"}),
    ]
    # The second request carries the whole exchange; the caller's list is left alone.
    assert inner.calls[1] == [history[0], *response.messages[:2]]
    assert len(history) == 1


async def test_streaming_yields_the_turns_and_each_result_as_it_completes() -> None:
    tools = Tools()
    inner = Recorded(streamed_calls(*PARALLEL), [role(), text("Sunny, "), text("and noon.")])
    client = FunctionInvokingChatClient(inner)
    options = ChatOptions(tools=[tools.weather(), tools.time()])
    updates = [u async for u in client.get_streaming_response("Weather and time?", options)]

    assert [u.role for u in updates if u.role is not None] == [
        ChatRole.ASSISTANT,
        ChatRole.TOOL,
        ChatRole.TOOL,
        ChatRole.ASSISTANT,
    ]
    results = [c for u in updates for c in u.contents if isinstance(c, FunctionResultContent)]
    assert sorted(r.call_id for r in results) == ["t", "w"]
    after_results = updates[[u.role for u in updates].index(ChatRole.TOOL) + 2 :]
    assert "".join(u.text for u in after_results) == "Sunny, and noon."
    assert len(tools.calls) == 2
    assert inner.closed_streams == 2
    assert [m.role for m in inner.calls[1]] == [ChatRole.USER, ChatRole.ASSISTANT, ChatRole.TOOL]


def slow(name: str, seconds: float, finished: list[str]) -> AIFunction:
    async def wait() -> str:
        await asyncio.sleep(seconds)
        finished.append(name)
        return name

    return AIFunction.from_callable(wait, name=name)


class InFlight:
    """Counts the calls running at once: overlap is proven by the peak, not by a clock."""

    def __init__(self) -> None:
        self.now = 0
        self.peak = 0
        self._lock = threading.Lock()

    def __enter__(self) -> None:
        with self._lock:
            self.now += 1
            self.peak = max(self.peak, self.now)

    def __exit__(self, *exc_info: object) -> None:
        with self._lock:
            self.now -= 1


def overlapping(name: str, flight: InFlight, *, blocking: bool) -> AIFunction:
    """A tool that stays in flight for a while: on the event loop (``await``) or blocking its
    thread (``time.sleep``, as a sync tool doing I/O would)."""

    async def wait_async() -> str:
        with flight:
            await asyncio.sleep(0.05)
        return name

    def wait_blocking() -> str:
        with flight:
            time.sleep(0.05)
        return name

    return AIFunction.from_callable(wait_blocking if blocking else wait_async, name=name)


@pytest.mark.parametrize("blocking", [False, True], ids=["async", "sync-blocking"])
@pytest.mark.parametrize("concurrent", [True, False])
async def test_parallel_calls_overlap_unless_told_not_to(concurrent: bool, blocking: bool) -> None:
    flight = InFlight()
    tools = [overlapping(n, flight, blocking=blocking) for n in ("a", "b", "c")]
    inner = Recorded(calling(call("a", "1"), call("b", "2"), call("c", "3")), answer())
    client = FunctionInvokingChatClient(inner, allow_concurrent_invocation=concurrent)
    response = await client.get_response("go", ChatOptions(tools=list(tools)))
    results = [
        c
        for m in response.messages
        for c in m.contents
        if type(c).__name__ == "FunctionResultContent"
    ]
    assert len(results) == 3
    assert flight.peak == (3 if concurrent else 1)


async def test_a_streamed_result_comes_when_its_call_completes_and_history_keeps_call_order() -> (
    None
):
    finished: list[str] = []
    tools = [slow("late", 0.2, finished), slow("early", 0.0, finished)]
    inner = Recorded(streamed_calls(call("late", "1"), call("early", "2")), [text("done")])
    client = FunctionInvokingChatClient(inner)
    updates = [u async for u in client.get_streaming_response("go", ChatOptions(tools=list(tools)))]
    order = [c.call_id for u in updates for c in u.contents if isinstance(c, FunctionResultContent)]
    assert order == ["2", "1"]
    tool_message = inner.calls[1][-1]
    assert [c.call_id for c in tool_message.contents] == ["1", "2"]  # type: ignore[attr-defined]


async def test_the_iteration_limit_returns_the_last_answer_with_its_calls_unrun() -> None:
    tools = Tools()
    inner = Recorded(calling(call("get_weather", city="Paris")))  # calls, forever
    client = FunctionInvokingChatClient(inner, max_iterations=2)
    response = await client.get_response("go", ChatOptions(tools=[tools.weather()]))
    assert len(inner.calls) == 3
    assert len(tools.calls) == 2
    assert response.additional_properties[FUNCTION_INVOCATION_STOPPED] == "max_iterations"
    assert response.messages[-1].tool_calls  # the last answer, as it came
    assert [m.role for m in response.messages] == [ChatRole.ASSISTANT, ChatRole.TOOL] * 2 + [
        ChatRole.ASSISTANT
    ]


async def test_a_streamed_loop_says_which_limit_stopped_it() -> None:
    tools = Tools()
    inner = Recorded(streamed_calls(call("get_weather", city="Paris")))
    client = FunctionInvokingChatClient(inner, max_iterations=1)
    updates = [
        u async for u in client.get_streaming_response("go", ChatOptions(tools=[tools.weather()]))
    ]
    assert len(inner.calls) == 2
    assert len(tools.calls) == 1
    assert updates[-1].contents == []
    assert updates[-1].additional_properties == {FUNCTION_INVOCATION_STOPPED: "max_iterations"}


async def test_consecutive_failing_rounds_stop_the_loop_after_the_limit() -> None:
    tools = Tools()
    inner = Recorded(calling(call("explode")))
    client = FunctionInvokingChatClient(inner, max_consecutive_errors=2)
    response = await client.get_response("go", ChatOptions(tools=[tools.failing()]))
    assert len(tools.calls) == 3  # rounds 1 and 2 are reported back; the third is one too many
    assert len(inner.calls) == 3
    assert response.additional_properties[FUNCTION_INVOCATION_STOPPED] == "max_consecutive_errors"
    assert response.messages[-1].role == ChatRole.TOOL


async def test_a_streamed_loop_stops_on_consecutive_errors_too() -> None:
    tools = Tools()
    inner = Recorded(streamed_calls(call("explode")))
    client = FunctionInvokingChatClient(inner, max_consecutive_errors=1)
    options = ChatOptions(tools=[tools.failing()])
    updates = [u async for u in client.get_streaming_response("go", options)]
    assert len(tools.calls) == 2
    assert len(inner.calls) == 2
    results = [c for u in updates for c in u.contents if isinstance(c, FunctionResultContent)]
    assert [r.result for r in results] == ["Error: the function failed."] * 2
    assert updates[-1].additional_properties == {
        FUNCTION_INVOCATION_STOPPED: "max_consecutive_errors"
    }


async def test_a_round_without_errors_resets_the_count() -> None:
    tools = Tools()
    inner = Recorded(
        calling(call("explode")),
        calling(call("get_time", tz="UTC")),
        calling(call("explode")),
        answer("gave up"),
    )
    client = FunctionInvokingChatClient(inner, max_consecutive_errors=1)
    response = await client.get_response("go", ChatOptions(tools=[tools.failing(), tools.time()]))
    assert response.text == "gave up"
    assert FUNCTION_INVOCATION_STOPPED not in response.additional_properties


@pytest.mark.parametrize(
    "bad_call",
    [
        call("delete_everything"),
        FunctionCallContent("c1", "get_weather", {}, '{"city": "Par', error="not a JSON object"),
    ],
    ids=["not offered", "unparseable"],
)
async def test_calls_that_cannot_run_are_answered_with_an_error_never_run(
    bad_call: FunctionCallContent,
) -> None:
    tools = Tools()
    inner = Recorded(calling(bad_call), answer("sorry"))
    client = FunctionInvokingChatClient(inner)
    response = await client.get_response("go", ChatOptions(tools=[tools.weather()]))
    assert tools.calls == []
    (result,) = response.messages[1].contents
    assert isinstance(result, FunctionResultContent)
    assert result.call_id == "c1"
    assert str(result.result).startswith("Error: ")
    assert response.text == "sorry"


async def test_calls_that_cannot_run_count_as_errors() -> None:
    tools = Tools()
    inner = Recorded(calling(call("delete_everything")))
    client = FunctionInvokingChatClient(inner, max_consecutive_errors=0)
    response = await client.get_response("go", ChatOptions(tools=[tools.weather()]))
    assert len(inner.calls) == 1
    assert response.additional_properties[FUNCTION_INVOCATION_STOPPED] == "max_consecutive_errors"


async def test_a_call_to_a_declaration_only_tool_goes_back_to_the_caller() -> None:
    tools = Tools()
    declared = {"type": "function", "function": {"name": "ask_user", "parameters": {}}}
    turn = calling(call("get_weather", "w", city="Paris"), call("ask_user", "a"))
    inner = Recorded(turn, answer("never asked"))
    client = FunctionInvokingChatClient(inner)
    response = await client.get_response("go", ChatOptions(tools=[tools.weather(), declared]))
    assert len(inner.calls) == 1
    assert tools.calls == []
    assert [c.name for c in response.tool_calls] == ["get_weather", "ask_user"]


async def test_without_functions_the_layer_passes_requests_through() -> None:
    inner = Recorded(calling(call("get_weather")), [text("hi")])
    client = FunctionInvokingChatClient(inner)
    declared = ChatOptions(tools=[{"type": "function", "function": {"name": "get_weather"}}])
    response = await client.get_response("go", declared)
    assert len(inner.calls) == 1 and response.tool_calls
    stream = client.get_streaming_response("go")
    assert stream.__qualname__ == "ScriptedClient.get_streaming_response"  # type: ignore[attr-defined]
    assert [u.text async for u in stream] == ["hi"]
    assert len(inner.calls) == 2


@pytest.mark.parametrize("detailed", [False, True])
async def test_an_exception_is_detailed_only_when_asked(detailed: bool) -> None:
    tools = Tools()
    inner = Recorded(calling(call("explode")), answer())
    client = FunctionInvokingChatClient(inner, include_detailed_errors=detailed)
    response = await client.get_response("go", ChatOptions(tools=[tools.failing()]))
    (result,) = response.messages[1].contents
    assert isinstance(result, FunctionResultContent)
    if detailed:
        assert result.result == (
            "Error: the function failed. RuntimeError: disk on fire at /srv/secret"
        )
    else:
        assert result.result == "Error: the function failed."
    assert result.additional_properties is not None
    assert isinstance(result.additional_properties[FUNCTION_EXCEPTION], RuntimeError)


async def test_invalid_arguments_are_described_to_the_model_and_not_run() -> None:
    tools = Tools()
    inner = Recorded(calling(call("get_weather", city=["not", "a", "city"])), answer())
    client = FunctionInvokingChatClient(inner)  # detailed errors off: these are the model's own
    response = await client.get_response("go", ChatOptions(tools=[tools.weather()]))
    assert tools.calls == []
    (result,) = response.messages[1].contents
    assert isinstance(result, FunctionResultContent)
    assert (
        result.result
        == 'Error: invalid arguments for "get_weather": city: Input should be a valid string'
    )


async def test_sync_and_async_functions_both_run_in_the_loop() -> None:
    tools = Tools()
    inner = Recorded(calling(*PARALLEL), answer())
    client = FunctionInvokingChatClient(inner, allow_concurrent_invocation=False)
    await client.get_response("go", ChatOptions(tools=[tools.weather(), tools.time()]))
    assert [name for name, _ in tools.calls] == ["get_weather", "get_time"]


async def test_a_function_returning_none_reports_success() -> None:
    def noop() -> None:
        return None

    inner = Recorded(calling(call("noop")), answer())
    client = FunctionInvokingChatClient(inner)
    response = await client.get_response("go", ChatOptions(tools=[AIFunction.from_callable(noop)]))
    assert response.messages[1].contents == [
        FunctionResultContent("c1", "Success: the function completed.")
    ]


@pytest.mark.parametrize("asynchronous", [False, True])
async def test_the_approval_hook_decides_which_calls_run(asynchronous: bool) -> None:
    tools = Tools()
    asked: list[str] = []

    def decide(c: FunctionCallContent) -> bool:
        asked.append(c.name)
        return c.name == "get_time"

    async def decide_later(c: FunctionCallContent) -> bool:
        await asyncio.sleep(0)
        return decide(c)

    approve = decide_later if asynchronous else decide
    inner = Recorded(calling(*PARALLEL), answer("ok"))
    # A refusal is a decision, not an error: with no errors allowed the loop still goes on.
    client = FunctionInvokingChatClient(inner, approve=approve, max_consecutive_errors=0)
    response = await client.get_response("go", ChatOptions(tools=[tools.weather(), tools.time()]))
    assert asked == ["get_weather", "get_time"]
    assert [name for name, _ in tools.calls] == ["get_time"]
    refused = response.messages[1].contents[0]
    assert isinstance(refused, FunctionResultContent)
    assert refused.result == "Error: the call was not approved; the function was not run."
    assert response.text == "ok"


async def test_a_failing_approval_hook_is_an_error_result() -> None:
    tools = Tools()

    def broken(c: FunctionCallContent) -> bool:
        raise LookupError("no policy")

    inner = Recorded(calling(call("get_weather", city="Paris")), answer())
    client = FunctionInvokingChatClient(inner, approve=broken)
    response = await client.get_response("go", ChatOptions(tools=[tools.weather()]))
    assert tools.calls == []
    (result,) = response.messages[1].contents
    assert isinstance(result, FunctionResultContent)
    assert result.result == "Error: the approval check failed."


@pytest.mark.parametrize("mode", [ChatToolMode.REQUIRED, ChatToolMode.require("get_weather")])
async def test_a_required_tool_mode_applies_to_the_first_request_only(mode: ChatToolMode) -> None:
    tools = Tools()
    inner = Recorded(calling(call("get_weather", city="Paris")), answer())
    client = FunctionInvokingChatClient(inner)
    options = ChatOptions(tools=[tools.weather()], tool_mode=mode, temperature=0.5)
    await client.get_response("go", options)
    first, second = inner.options
    assert first is options
    assert second is not None and second.tool_mode is None and second.temperature == 0.5
    assert options.tool_mode is mode  # the caller's options are not changed


async def test_an_auto_tool_mode_is_kept() -> None:
    tools = Tools()
    inner = Recorded(calling(call("get_weather", city="Paris")), answer())
    client = FunctionInvokingChatClient(inner)
    options = ChatOptions(tools=[tools.weather()], tool_mode=ChatToolMode.AUTO)
    await client.get_response("go", options)
    assert inner.options == [options, options]


async def test_a_reader_that_stops_mid_round_cancels_the_running_calls() -> None:
    cancelled: list[str] = []

    async def quick() -> str:
        return "quick"

    async def stuck() -> str:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.append("stuck")
            raise
        return "never"

    tools = [AIFunction.from_callable(quick), AIFunction.from_callable(stuck)]
    inner = Recorded(streamed_calls(call("stuck", "1"), call("quick", "2")), [text("no")])
    client = FunctionInvokingChatClient(inner)
    stream = client.get_streaming_response("go", ChatOptions(tools=list(tools)))
    async for update in stream:
        if update.role == ChatRole.TOOL:
            break
    await stream.aclose()  # type: ignore[attr-defined]
    assert cancelled == ["stuck"]
    assert len(inner.calls) == 1


async def test_streamed_usage_is_a_running_total_over_the_turns() -> None:
    from providers import UsageContent, UsageDetails

    def usage(tokens: int) -> ChatResponseUpdate:
        return ChatResponseUpdate([UsageContent(UsageDetails(tokens, 1, tokens + 1))])

    tools = Tools()
    first = [*streamed_calls(call("get_time", tz="UTC")), usage(10)]
    inner = Recorded(first, [text("noon"), usage(20)])
    client = FunctionInvokingChatClient(inner)
    updates = [
        u async for u in client.get_streaming_response("go", ChatOptions(tools=[tools.time()]))
    ]
    total = ChatResponse.from_updates(updates).usage
    assert total is not None
    assert (total.input_token_count, total.output_token_count, total.total_token_count) == (
        30,
        2,
        32,
    )


def test_limits_are_checked() -> None:
    inner = Recorded(answer())
    for bad in ({"max_iterations": 0}, {"max_consecutive_errors": -1}, {"max_iterations": True}):
        with pytest.raises(ConfigurationError):
            FunctionInvokingChatClient(inner, **bad)


async def test_the_builder_adds_the_loop() -> None:
    tools = Tools()
    inner = Recorded(calling(call("get_time", tz="UTC")), answer("noon"))
    client = ChatClientBuilder(inner).use_function_invocation(max_iterations=3).build()
    assert isinstance(client, FunctionInvokingChatClient)
    assert client.max_iterations == 3
    response = await client.get_response("go", ChatOptions(tools=[tools.time()]))
    assert response.text == "noon"
    assert isinstance(response.messages[-1].contents[0], TextContent)
