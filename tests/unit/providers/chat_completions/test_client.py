"""``OpenAiCompatibleChatClient`` end to end over respx (issue 2 items 2-4; wire.md §2-§4)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import respx

from providers import (
    AuthenticationError,
    BackendUnavailableError,
    ChatFinishReason,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    ContextLengthExceededError,
    FunctionCallContent,
    InvalidResponseError,
    ModelNotFoundError,
    OpenAiCompatibleChatClient,
    ProviderConnectionError,
    RateLimitError,
    ServerError,
    StreamInterruptedError,
    TextContent,
    TextReasoningContent,
    Timeouts,
    ToolDeclaration,
)

BASE = "http://llm.test"
CHAT = f"{BASE}/v1/chat/completions"
SECRET = "sk-very-secret-key-123"


def sse(*payloads: dict[str, Any] | str, done: bool = True) -> bytes:
    lines = [
        f"data: {p if isinstance(p, str) else json.dumps(p, ensure_ascii=False)}\n\n"
        for p in payloads
    ]
    if done:
        lines.append("data: [DONE]\n\n")
    return "".join(lines).encode()


def chunk(delta: dict[str, Any], finish: str | None = None, **top: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **top,
    }


def streaming(body: bytes) -> httpx.Response:
    return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})


async def collect(client: OpenAiCompatibleChatClient, **kwargs: Any) -> list[ChatResponseUpdate]:
    return [u async for u in client.get_streaming_response("hello", **kwargs)]


def sent_body(route: respx.Route) -> dict[str, Any]:
    return json.loads(route.calls.last.request.content)  # type: ignore[no-any-return]


@pytest.fixture
async def client() -> AsyncIterator[OpenAiCompatibleChatClient]:
    async with OpenAiCompatibleChatClient(BASE, "m", api_key=SECRET) as c:
        yield c


# --- non-streamed ---------------------------------------------------------------------------


def completion(message: dict[str, Any], finish: str = "stop", **top: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-2",
        "object": "chat.completion",
        "created": 2,
        "model": "served",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        **top,
    }


@respx.mock
async def test_non_streamed_structured_tool_calls_string_and_object_arguments(
    client: OpenAiCompatibleChatClient,
) -> None:
    body = completion(
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "call_a",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
                },
                {
                    "id": "call_b",
                    "type": "function",
                    "function": {"name": "get_time", "arguments": {"tz": "UTC"}},
                },
            ],
        },
        "tool_calls",
        usage={"prompt_tokens": 9, "completion_tokens": 4, "total_tokens": 13},
    )
    respx.post(CHAT).mock(return_value=httpx.Response(200, json=body))
    offered = ChatOptions(tools=[ToolDeclaration("get_weather"), ToolDeclaration("get_time")])
    result = await client.get_response("weather?", offered)
    assert [(c.call_id, c.name, c.arguments, c.error) for c in result.tool_calls] == [
        ("call_a", "get_weather", {"city": "Oslo"}, None),
        ("call_b", "get_time", {"tz": "UTC"}, None),
    ]
    assert result.tool_calls[0].raw_arguments == '{"city": "Oslo"}'
    assert result.text == ""
    assert result.finish_reason == ChatFinishReason.TOOL_CALLS
    assert result.usage is not None
    assert result.usage.total_token_count == 13
    assert (result.response_id, result.model_id) == ("chatcmpl-2", "served")
    assert result.raw == body


@pytest.mark.parametrize("field", ["reasoning", "reasoning_content"])
@respx.mock
async def test_non_streamed_reasoning(client: OpenAiCompatibleChatClient, field: str) -> None:
    body = completion({"role": "assistant", "content": "4", field: "2 plus 2"})
    respx.post(CHAT).mock(return_value=httpx.Response(200, json=body))
    result = await client.get_response("2+2?")
    assert result.reasoning == "2 plus 2"
    assert result.text == "4"
    assert result.messages[0].contents == [TextReasoningContent("2 plus 2"), TextContent("4")]


@respx.mock
async def test_non_streamed_request_has_no_stream_options(
    client: OpenAiCompatibleChatClient,
) -> None:
    route = respx.post(CHAT).mock(
        return_value=httpx.Response(200, json=completion({"role": "assistant", "content": "x"}))
    )
    await client.get_response("hi")
    body = sent_body(route)
    assert body["stream"] is False
    assert "stream_options" not in body


@respx.mock
async def test_non_streamed_body_that_is_not_json(client: OpenAiCompatibleChatClient) -> None:
    respx.post(CHAT).mock(return_value=httpx.Response(200, content=b"<html>oops</html>"))
    with pytest.raises(InvalidResponseError):
        await client.get_response("hi")


@respx.mock
async def test_streamed_and_non_streamed_give_equal_responses(
    client: OpenAiCompatibleChatClient,
) -> None:
    whole = completion(
        {
            "role": "assistant",
            "content": "It is sunny.",
            "reasoning_content": "Look it up.",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "w", "arguments": '{"c": 1}'}}
            ],
        },
        "tool_calls",
        usage={"prompt_tokens": 5, "completion_tokens": 6, "total_tokens": 11},
    )
    stream = sse(
        chunk({"role": "assistant", "content": ""}),
        chunk({"reasoning_content": "Look "}),
        chunk({"reasoning_content": "it up."}),
        chunk({"content": "It is "}),
        chunk({"content": "sunny."}),
        chunk(
            {"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "w", "arguments": ""}}]}
        ),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"c": 1}'}}]}),
        chunk({}, "tool_calls"),
        {"id": "chatcmpl-1", "choices": [], "usage": whole["usage"]},
    )
    respx.post(CHAT).mock(
        side_effect=lambda request: (
            streaming(stream)
            if json.loads(request.content)["stream"]
            else httpx.Response(200, json=whole)
        )
    )
    non_streamed = await client.get_response("w?")
    streamed = ChatResponse.from_updates(await collect(client))
    assert streamed.messages == non_streamed.messages
    assert streamed.finish_reason == non_streamed.finish_reason
    assert streamed.usage == non_streamed.usage
    assert streamed.text == "It is sunny."


# --- streamed -------------------------------------------------------------------------------


@respx.mock
async def test_stream_text_usage_and_request_body(client: OpenAiCompatibleChatClient) -> None:
    route = respx.post(CHAT).mock(
        return_value=streaming(
            sse(
                chunk({"role": "assistant", "content": ""}),
                chunk({"content": "Hi"}),
                chunk({"content": " there"}, "stop", system_fingerprint="b1-abc"),
                {
                    "id": "chatcmpl-1",
                    "choices": [],
                    "usage": {"prompt_tokens": 3, "completion_tokens": 2},
                },
            )
        )
    )
    result = ChatResponse.from_updates(await collect(client))
    assert result.text == "Hi there"
    assert result.finish_reason == ChatFinishReason.STOP
    assert result.usage is not None
    assert (result.usage.input_token_count, result.usage.total_token_count) == (3, 5)
    assert result.additional_properties["system_fingerprint"] == "b1-abc"
    body = sent_body(route)
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["model"] == "m"
    assert body["messages"] == [{"role": "user", "content": "hello"}]


@respx.mock
async def test_content_with_unicode_line_separators_survives(
    client: OpenAiCompatibleChatClient,
) -> None:
    text = "a\u2028b\u2029c\u0085d"
    # ensure_ascii=False: the characters go raw on the wire, as vLLM and SGLang send them
    respx.post(CHAT).mock(return_value=streaming(sse(chunk({"content": text}, "stop"))))
    result = ChatResponse.from_updates(await collect(client))
    assert result.text == text


@respx.mock
async def test_stream_split_inside_a_utf8_character_and_between_cr_lf() -> None:
    payload = sse(chunk({"content": "h\u00e9\u20ac"}), chunk({}, "stop")).replace(b"\n", b"\r\n")
    cut1 = payload.index("\u20ac".encode()) + 1
    cut2 = payload.index(b"\r\n\r\n") + 1

    async def pieces() -> AsyncIterator[bytes]:
        for piece in (payload[:cut1], payload[cut1:cut2], payload[cut2:]):
            yield piece

    cuts = sorted([cut1, cut2])
    assert cuts[0] != cuts[1]
    respx.post(CHAT).mock(return_value=httpx.Response(200, content=pieces()))
    async with OpenAiCompatibleChatClient(BASE, "m") as client:
        result = ChatResponse.from_updates(await collect(client))
    assert result.text == "h\u00e9\u20ac"
    assert result.finish_reason == ChatFinishReason.STOP


@respx.mock
async def test_keepalive_comments_are_ignored(client: OpenAiCompatibleChatClient) -> None:
    body = b":\n\n: keep-alive\n\n" + sse(chunk({"content": "x"}, "stop"))
    respx.post(CHAT).mock(return_value=streaming(body))
    assert ChatResponse.from_updates(await collect(client)).text == "x"


@respx.mock
async def test_midstream_error_raises_typed_error_with_partial_response(
    client: OpenAiCompatibleChatClient,
) -> None:
    body = sse(
        chunk({"role": "assistant", "content": ""}),
        chunk({"content": "Partial "}),
        chunk({"content": "answer"}),
        {
            "error": {
                "object": "error",
                "message": "preempted",
                "type": "SERVICE_UNAVAILABLE",
                "param": None,
                "code": 503,
            }
        },
        chunk({}, "abort"),
    )
    respx.post(CHAT).mock(return_value=streaming(body))
    received: list[ChatResponseUpdate] = []
    with pytest.raises(BackendUnavailableError) as info:
        async for update in client.get_streaming_response("x"):
            received.append(update)
    error = info.value
    assert error.partial_response is not None
    assert error.partial_response.text == "Partial answer"
    assert error.partial_response.finish_reason is None
    assert ChatResponse.from_updates(received).text == "Partial answer"


@respx.mock
async def test_llamacpp_midstream_error_without_done(client: OpenAiCompatibleChatClient) -> None:
    body = sse(
        chunk({"content": "abc"}),
        {"error": {"code": 500, "message": "Invalid diff", "type": "server_error"}},
        done=False,
    )
    respx.post(CHAT).mock(return_value=streaming(body))
    with pytest.raises(ServerError) as info:
        await collect(client)
    assert info.value.partial_response is not None
    assert info.value.partial_response.text == "abc"


@respx.mock
async def test_midstream_error_keeps_tool_calls_being_assembled(
    client: OpenAiCompatibleChatClient,
) -> None:
    body = sse(
        chunk(
            {
                "tool_calls": [
                    {"index": 0, "id": "c", "function": {"name": "f", "arguments": '{"a": 1}'}}
                ]
            }
        ),
        {"error": {"message": "Internal server error", "type": "InternalServerError", "code": 500}},
    )
    respx.post(CHAT).mock(return_value=streaming(body))
    with pytest.raises(ServerError) as info:
        await collect(client)
    assert info.value.partial_response is not None
    (call,) = info.value.partial_response.tool_calls
    assert (call.name, call.arguments) == ("f", {"a": 1})


@respx.mock
async def test_eof_without_done_and_without_finish_is_interrupted(
    client: OpenAiCompatibleChatClient,
) -> None:
    body = sse(chunk({"content": "half "}), chunk({"content": "done"}), done=False)
    respx.post(CHAT).mock(return_value=streaming(body))
    with pytest.raises(StreamInterruptedError) as info:
        await collect(client)
    assert info.value.partial_response is not None
    assert info.value.partial_response.text == "half done"


@respx.mock
async def test_eof_after_finish_without_done_is_fine(client: OpenAiCompatibleChatClient) -> None:
    respx.post(CHAT).mock(return_value=streaming(sse(chunk({"content": "ok"}, "stop"), done=False)))
    assert ChatResponse.from_updates(await collect(client)).text == "ok"


@respx.mock
async def test_eof_with_last_event_lacking_blank_line(client: OpenAiCompatibleChatClient) -> None:
    body = b"data: " + json.dumps(chunk({"content": "tail"}, "stop")).encode()
    respx.post(CHAT).mock(return_value=streaming(body))
    assert ChatResponse.from_updates(await collect(client)).text == "tail"


@respx.mock
async def test_tool_calls_flushed_when_stream_ends_with_length(
    client: OpenAiCompatibleChatClient,
) -> None:
    body = sse(
        chunk(
            {
                "tool_calls": [
                    {"index": 0, "id": "c", "function": {"name": "f", "arguments": '{"a": '}}
                ]
            }
        ),
        chunk({}, "length"),
    )
    respx.post(CHAT).mock(return_value=streaming(body))
    result = ChatResponse.from_updates(await collect(client))
    (call,) = result.tool_calls
    assert call.raw_arguments == '{"a": '
    assert call.error is not None
    assert result.finish_reason == ChatFinishReason.LENGTH


@respx.mock
async def test_tool_calls_flushed_at_done_without_finish_reason(
    client: OpenAiCompatibleChatClient,
) -> None:
    body = sse(
        chunk(
            {"tool_calls": [{"index": 0, "id": "c", "function": {"name": "f", "arguments": "{}"}}]}
        )
    )
    respx.post(CHAT).mock(return_value=streaming(body))
    offered = ChatOptions(tools=[ToolDeclaration("f")])
    result = ChatResponse.from_updates(await collect(client, options=offered))
    assert result.tool_calls == [FunctionCallContent("c", "f", {}, "{}")]


@respx.mock
async def test_data_that_is_not_json(client: OpenAiCompatibleChatClient) -> None:
    respx.post(CHAT).mock(return_value=streaming(sse(chunk({"content": "a"}), "not json")))
    with pytest.raises(InvalidResponseError) as info:
        await collect(client)
    assert info.value.partial_response is not None
    assert info.value.partial_response.text == "a"


@respx.mock
async def test_connection_error_before_any_output(client: OpenAiCompatibleChatClient) -> None:
    respx.post(CHAT).mock(side_effect=httpx.ConnectError("refused"))
    with pytest.raises(ProviderConnectionError) as info:
        await collect(client)
    assert not isinstance(info.value, StreamInterruptedError)
    assert info.value.partial_response is not None
    assert info.value.partial_response.text == ""


@respx.mock
async def test_connection_error_non_streamed(client: OpenAiCompatibleChatClient) -> None:
    respx.post(CHAT).mock(side_effect=httpx.ConnectError("refused"))
    with pytest.raises(ProviderConnectionError):
        await client.get_response("x")


@respx.mock
async def test_connection_broken_mid_stream_is_interrupted(
    client: OpenAiCompatibleChatClient,
) -> None:
    async def body() -> AsyncIterator[bytes]:
        yield sse(chunk({"content": "so far"}), done=False)
        raise httpx.ReadError("connection reset")

    respx.post(CHAT).mock(return_value=httpx.Response(200, content=body()))
    with pytest.raises(StreamInterruptedError) as info:
        await collect(client)
    assert info.value.partial_response is not None
    assert info.value.partial_response.text == "so far"


# --- HTTP errors ----------------------------------------------------------------------------


@respx.mock
async def test_http_401_bare_string(client: OpenAiCompatibleChatClient) -> None:
    respx.post(CHAT).mock(return_value=httpx.Response(401, json={"error": "Unauthorized"}))
    with pytest.raises(AuthenticationError):
        await client.get_response("x")
    with pytest.raises(AuthenticationError):
        await collect(client)


@respx.mock
async def test_http_400_context_overflow_when_streaming(client: OpenAiCompatibleChatClient) -> None:
    error = {
        "error": {
            "code": 400,
            "message": "request (3030 tokens) exceeds the available context size (2048 tokens)",
            "type": "exceed_context_size_error",
            "n_prompt_tokens": 3030,
            "n_ctx": 2048,
        }
    }
    respx.post(CHAT).mock(return_value=httpx.Response(400, json=error))
    with pytest.raises(ContextLengthExceededError) as info:
        await collect(client)
    assert (info.value.prompt_tokens, info.value.context_window) == (3030, 2048)


@respx.mock
async def test_http_404_model(client: OpenAiCompatibleChatClient) -> None:
    error = {
        "error": {
            "message": "The model `x` does not exist.",
            "type": "NotFoundError",
            "param": "model",
            "code": 404,
        }
    }
    respx.post(CHAT).mock(return_value=httpx.Response(404, json=error))
    with pytest.raises(ModelNotFoundError):
        await client.get_response("x")


@pytest.mark.parametrize(
    ("header", "value", "expected"), [("Retry-After", "7", 7.0), ("retry-after-ms", "1500", 1.5)]
)
@respx.mock
async def test_http_429_retry_after(
    client: OpenAiCompatibleChatClient, header: str, value: str, expected: float
) -> None:
    respx.post(CHAT).mock(
        return_value=httpx.Response(
            429, json={"error": {"message": "slow"}}, headers={header: value}
        )
    )
    with pytest.raises(RateLimitError) as info:
        await client.get_response("x")
    assert info.value.retry_after == expected


@respx.mock
async def test_http_502_html(client: OpenAiCompatibleChatClient) -> None:
    respx.post(CHAT).mock(
        return_value=httpx.Response(
            502, content=b"<html><body><h1>502 Bad Gateway</h1></body></html>"
        )
    )
    with pytest.raises(BackendUnavailableError) as info:
        await collect(client)
    assert "502 Bad Gateway" in str(info.value)
    assert "<h1>" not in str(info.value)


# --- headers, repr, request body ------------------------------------------------------------


@respx.mock
async def test_authorization_header_sent_and_key_not_in_repr(
    client: OpenAiCompatibleChatClient,
) -> None:
    route = respx.post(CHAT).mock(
        return_value=httpx.Response(200, json=completion({"role": "assistant", "content": "x"}))
    )
    await client.get_response("hi")
    assert route.calls.last.request.headers["authorization"] == f"Bearer {SECRET}"
    assert SECRET not in repr(client)
    assert SECRET not in str(client)


@respx.mock
async def test_no_api_key_no_authorization_header() -> None:
    route = respx.post(CHAT).mock(
        return_value=httpx.Response(200, json=completion({"role": "assistant", "content": "x"}))
    )
    async with OpenAiCompatibleChatClient(BASE) as client:
        await client.get_response("hi")
    assert "authorization" not in route.calls.last.request.headers
    assert "model" not in sent_body(route)


@respx.mock
async def test_additional_properties_do_not_overwrite_core_keys_but_merge_nested(
    client: OpenAiCompatibleChatClient,
) -> None:
    route = respx.post(CHAT).mock(return_value=streaming(sse(chunk({}, "stop"))))
    options = ChatOptions(
        additional_properties={
            "model": "other",
            "messages": [],
            "stream": False,
            "stream_options": {"continuous_usage_stats": True},
            "chat_template_kwargs": {"enable_thinking": False},
        }
    )
    await collect(client, options=options)
    body = sent_body(route)
    assert body["model"] == "m"
    assert body["messages"] == [{"role": "user", "content": "hello"}]
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True, "continuous_usage_stats": True}
    assert body["chat_template_kwargs"] == {"enable_thinking": False}


@respx.mock
async def test_non_streamed_call_drops_stream_options_from_additional_properties(
    client: OpenAiCompatibleChatClient,
) -> None:
    route = respx.post(CHAT).mock(
        return_value=httpx.Response(200, json=completion({"role": "assistant", "content": "x"}))
    )
    options = ChatOptions(
        additional_properties={"stream_options": {"continuous_usage_stats": True}}
    )
    await client.get_response("hi", options)
    assert "stream_options" not in sent_body(route)


@pytest.mark.parametrize(
    ("base_url", "url"),
    [
        ("http://host/llm/v1", "http://host/llm/v1/chat/completions"),
        ("http://host/llm", "http://host/llm/v1/chat/completions"),
        ("http://host/api/paas/v4", "http://host/api/paas/v4/chat/completions"),
    ],
)
@respx.mock
async def test_base_url_with_path_prefix(base_url: str, url: str) -> None:
    route = respx.post(url).mock(
        return_value=httpx.Response(200, json=completion({"role": "assistant", "content": "x"}))
    )
    async with OpenAiCompatibleChatClient(base_url, "m") as client:
        assert (await client.get_response("hi")).text == "x"
    assert route.called
    assert route.calls.last.request.url.path == httpx.URL(url).path


@respx.mock
async def test_redact_fingerprint() -> None:
    respx.post(CHAT).mock(
        return_value=streaming(sse(chunk({"content": "x"}, "stop", system_fingerprint="fp_1")))
    )
    async with OpenAiCompatibleChatClient(BASE, "m", redact_fingerprint=True) as client:
        result = ChatResponse.from_updates(await collect(client))
    assert "system_fingerprint" not in result.additional_properties


async def test_brought_http_client_is_not_closed() -> None:
    http = httpx.AsyncClient()
    async with OpenAiCompatibleChatClient(BASE, http_client=http):
        pass
    assert not http.is_closed
    await http.aclose()


async def test_each_request_hands_httpx_the_connect_budget_in_extensions_of_its_own() -> None:
    # The extensions are built once per client; what a caller's event hook adds to one
    # request's must still not reach the next.
    seen: list[dict[str, Any]] = []

    async def tag(request: httpx.Request) -> None:
        seen.append(dict(request.extensions))
        request.extensions["trace"] = "from the first request"

    def answer(request: httpx.Request) -> httpx.Response:
        return streaming(sse(chunk({"content": "ok"}, "stop")))

    http = httpx.AsyncClient(transport=httpx.MockTransport(answer), event_hooks={"request": [tag]})
    budgets = Timeouts(connect=3.0, first_token=5.0, idle=7.0, total=9.0)
    async with http, OpenAiCompatibleChatClient(BASE, "m", http_client=http, timeouts=budgets) as c:
        await collect(c)
        await collect(c)
    assert [extensions.get("trace") for extensions in seen] == [None, None]
    # httpx enforces connect only; the other budgets are the watchdog's.
    assert seen[1]["timeout"] == {"connect": 3.0, "read": None, "write": None, "pool": None}


async def test_own_http_client_is_closed() -> None:
    client = OpenAiCompatibleChatClient(BASE)
    http = client._http  # (this loop's pool: the client keeps one per event loop)
    await client.aclose()
    assert http.is_closed


@pytest.mark.parametrize("piece_size", [1, 7, 10_000])
@respx.mock
async def test_updates_before_an_error_reach_the_caller_whatever_the_chunking(
    client: OpenAiCompatibleChatClient, piece_size: int
) -> None:
    payload = sse(
        chunk({"content": "one "}),
        chunk({"content": "two"}),
        {"error": {"code": 500, "message": "boom", "type": "server_error"}},
        done=False,
    )

    async def pieces() -> AsyncIterator[bytes]:
        for start in range(0, len(payload), piece_size):
            yield payload[start : start + piece_size]

    respx.post(CHAT).mock(return_value=httpx.Response(200, content=pieces()))
    received: list[str] = []
    with pytest.raises(ServerError) as info:
        async for update in client.get_streaming_response("x"):
            received.append(update.text)
    assert "".join(received) == "one two"
    assert info.value.partial_response is not None
    assert info.value.partial_response.text == "one two"
