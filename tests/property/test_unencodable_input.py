"""Caller input that cannot be encoded is a typed error before anything is sent.

A request body is JSON in UTF-8: a lone surrogate in any string, NaN or an infinity in any
number, a structure that contains itself, or an object JSON has no form for cannot be encoded.
httpx would raise ``UnicodeEncodeError`` or ``ValueError`` while building the request (the
first holding the whole body, prompt included). Both request builders refuse such input with an
``InvalidRequestError`` naming where in the body it is, and never quoting the text. A ``base_url``
or header with a line break is a ``ConfigurationError`` at construction.

For random well-formed text the builders never refuse, and what they build encodes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from datetime import datetime
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from providers import (
    ChatMessage,
    ChatOptions,
    ChatResponseFormat,
    ConfigurationError,
    FunctionCallContent,
    FunctionResultContent,
    InvalidRequestError,
    OpenAiCompatibleChatClient,
    TextContent,
    ToolDeclaration,
)
from providers.abstractions.open_values import ChatRole
from providers.responses import OpenAiCompatibleResponsesClient

SETTINGS = settings(max_examples=150, deadline=None)
Client = OpenAiCompatibleChatClient | OpenAiCompatibleResponsesClient
CLIENTS: dict[str, Callable[[], Client]] = {
    "chat": lambda: OpenAiCompatibleChatClient("http://127.0.0.1:9/v1", "m"),
    "responses": lambda: OpenAiCompatibleResponsesClient("http://127.0.0.1:9/v1", "m"),
}
SECRET_TEXT = "secret-prompt-3b9a"

_WELL_FORMED = st.text(st.characters(exclude_categories=["Cs"]), max_size=30)
_SURROGATE = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)


@st.composite
def broken_text(draw: st.DrawFn) -> str:
    """Well-formed text with one lone surrogate somewhere in it."""
    before, after = draw(_WELL_FORMED), draw(_WELL_FORMED)
    return SECRET_TEXT + before + draw(_SURROGATE) + after


def _places(text: str) -> list[list[ChatMessage]]:
    """The same bad text wherever a conversation can carry it."""
    call = FunctionCallContent("call_1", "lookup", {"query": text})
    return [
        [ChatMessage(ChatRole.USER, [TextContent(text)])],
        [ChatMessage(ChatRole.SYSTEM, [TextContent(text)]), ChatMessage.user("hi")],
        [
            ChatMessage.user("hi"),
            ChatMessage(ChatRole.ASSISTANT, [call]),
            ChatMessage(ChatRole.TOOL, [FunctionResultContent("call_1", text)]),
        ],
        [ChatMessage.user("hi"), ChatMessage(ChatRole.ASSISTANT, [call])],
    ]


def assert_refused(client: Client, messages: Any, options: ChatOptions | None = None) -> str:
    for stream in (True, False):
        with pytest.raises(InvalidRequestError) as caught:
            client.build_request_body(messages, options, stream=stream)
    message = str(caught.value)
    message.encode("ascii")  # printable anywhere, whatever the input held
    assert SECRET_TEXT not in message
    assert caught.value.__cause__ is None  # no chained exception holding the body
    return message


@pytest.mark.parametrize("kind", CLIENTS)
@SETTINGS
@given(text=broken_text(), place=st.integers(0, 3))
def test_a_lone_surrogate_anywhere_is_refused(kind: str, text: str, place: int) -> None:
    message = assert_refused(CLIENTS[kind](), _places(text)[place])
    assert "surrogate" in message


@pytest.mark.parametrize("kind", CLIENTS)
@SETTINGS
@given(
    value=st.sampled_from([math.nan, math.inf, -math.inf]),
    field=st.sampled_from(["temperature", "top_p", "frequency_penalty", "presence_penalty"]),
)
def test_a_non_finite_option_is_refused(kind: str, value: float, field: str) -> None:
    options = ChatOptions()
    setattr(options, field, value)
    message = assert_refused(CLIENTS[kind](), "hi", options)
    assert field in message


@pytest.mark.parametrize("kind", CLIENTS)
@SETTINGS
@given(value=st.sampled_from([math.nan, math.inf, -math.inf]), depth=st.integers(0, 4))
def test_a_non_finite_number_in_extra_body_keys_is_refused(
    kind: str, value: float, depth: int
) -> None:
    nested: Any = value
    for level in range(depth):
        nested = {f"k{level}": nested} if level % 2 else [nested]
    assert_refused(CLIENTS[kind](), "hi", ChatOptions(additional_properties={"extra": nested}))


def _circular_schema() -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    schema["properties"]["child"] = schema
    return schema


@pytest.mark.parametrize("kind", CLIENTS)
def test_a_circular_tool_schema_is_refused(kind: str) -> None:
    tool = ToolDeclaration("walk", "a tree", _circular_schema())
    message = assert_refused(CLIENTS[kind](), "hi", ChatOptions(tools=[tool]))
    assert "circular" in message
    assert "tools[0]" in message


@pytest.mark.parametrize("kind", CLIENTS)
def test_circular_structures_elsewhere_are_refused(kind: str) -> None:
    loop: list[Any] = [1]
    loop.append(loop)
    schema = ChatResponseFormat("json_schema", schema=_circular_schema(), schema_name="s")
    client = CLIENTS[kind]()
    assert_refused(client, "hi", ChatOptions(additional_properties={"extra": loop}))
    assert_refused(client, "hi", ChatOptions(response_format=schema))


@pytest.mark.parametrize("kind", CLIENTS)
def test_circular_call_arguments_and_results_in_the_history_are_refused(kind: str) -> None:
    loop: dict[str, Any] = {}
    loop["self"] = loop
    call = FunctionCallContent("call_1", "lookup", loop)
    with_call = [ChatMessage.user("hi"), ChatMessage(ChatRole.ASSISTANT, [call])]
    assert "arguments" in assert_refused(CLIENTS[kind](), with_call)
    fine = FunctionCallContent("call_1", "lookup", {"q": 1})
    with_result = [
        ChatMessage.user("hi"),
        ChatMessage(ChatRole.ASSISTANT, [fine]),
        ChatMessage(ChatRole.TOOL, [FunctionResultContent("call_1", loop)]),
    ]
    assert "result" in assert_refused(CLIENTS[kind](), with_result)


@pytest.mark.parametrize("kind", CLIENTS)
def test_values_json_has_no_form_for_are_refused(kind: str) -> None:
    options = ChatOptions(additional_properties={"when": datetime(2025, 1, 1)})
    message = assert_refused(CLIENTS[kind](), "hi", options)
    assert "datetime" in message


@pytest.mark.parametrize("kind", CLIENTS)
def test_a_shared_but_acyclic_structure_is_fine(kind: str) -> None:
    shared = {"type": "string"}
    schema = {"type": "object", "properties": {"a": shared, "b": shared}}
    options = ChatOptions(tools=[ToolDeclaration("f", None, schema)], temperature=0.5)
    body = CLIENTS[kind]().build_request_body("hi", options, stream=True)
    sent = json.loads(json.dumps(body, allow_nan=False, ensure_ascii=False).encode())
    (tool,) = sent["tools"]
    parameters = (tool.get("function") or tool)["parameters"]
    assert parameters["properties"] == {"a": shared, "b": shared}  # both copies, not refused


@pytest.mark.parametrize("kind", CLIENTS)
@SETTINGS
@given(
    texts=st.lists(_WELL_FORMED, min_size=1, max_size=4),
    temperature=st.floats(0, 2),
    extra=st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False, allow_infinity=False)
        | _WELL_FORMED,
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(_WELL_FORMED, inner, max_size=3)
        ),
        max_leaves=8,
    ),
)
def test_well_formed_input_is_never_refused_and_always_encodes(
    kind: str, texts: list[str], temperature: float, extra: Any
) -> None:
    messages = [ChatMessage(ChatRole.USER, [TextContent(t) for t in texts])]
    options = ChatOptions(temperature=temperature, additional_properties={"extra": extra})
    body = CLIENTS[kind]().build_request_body(messages, options, stream=True)
    sent = json.loads(json.dumps(body, allow_nan=False, ensure_ascii=False).encode("utf-8"))
    assert sent["extra"] == extra  # the value itself went out, not a cleaned copy
    assert sent["temperature"] == temperature
    assert all(text in json.dumps(sent, ensure_ascii=False) for text in map(_json_text, texts))


def _json_text(text: str) -> str:
    """A text as it appears inside an encoded JSON string (quotes and escapes stripped)."""
    return json.dumps(text, ensure_ascii=False)[1:-1]


@pytest.mark.parametrize("kind", CLIENTS)
async def test_nothing_is_sent_for_input_that_cannot_be_encoded(kind: str) -> None:
    sent: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(500)

    async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as http:
        cls = OpenAiCompatibleChatClient if kind == "chat" else OpenAiCompatibleResponsesClient
        client = cls("http://127.0.0.1:9/v1", "m", http_client=http)
        with pytest.raises(InvalidRequestError):
            await client.get_response(SECRET_TEXT + "\ud800")
        with pytest.raises(InvalidRequestError):
            async for _ in client.get_streaming_response(
                "hi", ChatOptions(temperature=float("nan"))
            ):
                pass
    assert sent == []


_CONTROL = st.sampled_from(["\r", "\n", "\r\n", "\x00", "\t", "\x7f"])
_URL = "http://user:pw-secret-91@gpu.test:8080/llm/v1"


@pytest.mark.parametrize("kind", CLIENTS)
@SETTINGS
@given(control=_CONTROL, cut=st.integers(1, len(_URL) - 1))
def test_a_control_character_in_base_url_is_a_configuration_error(
    kind: str, control: str, cut: int
) -> None:
    """Inside the URL, that is: surrounding whitespace (a trailing newline read from a file) is
    stripped, as before."""
    url = _URL
    cls = OpenAiCompatibleChatClient if kind == "chat" else OpenAiCompatibleResponsesClient
    with pytest.raises(ConfigurationError, match="base_url") as caught:
        cls(url[:cut] + control + url[cut:], "m")
    assert "pw-secret" not in str(caught.value)
