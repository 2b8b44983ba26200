"""Issue #20: a call recovered from text is executable only if it was asked for.

* With no tools offered (``options=None``, ``tools=None`` or ``tools=[]``), no recovered call
  is ever returned without ``error``: random texts with the markup of every format, cut
  anywhere, streamed and whole.
* Markup inside a ``<think>…</think>`` block is reasoning: no call comes out of it, and the
  reasoning after it stays reasoning.
* A call quoted inside a Markdown code fence is text, not a call.
"""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from providers import (
    ChatFinishReason,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    ChatRole,
    FunctionCallContent,
    TextContent,
    TextRecoveryChatClient,
)
from providers.abstractions.options import ToolDeclaration
from tests.property.test_text_tool_calls_property import FRAGMENTS, TEXT
from tests.unit.providers.text_tool_calls.helpers import cut
from tests.unit.scripted_client import ScriptedClient

SETTINGS = settings(max_examples=120, deadline=None)

WEATHER = ToolDeclaration(
    "get_weather", parameters={"type": "object", "properties": {"city": {"type": "string"}}}
)
NOTHING_OFFERED: list[ChatOptions | None] = [
    None,
    ChatOptions(),
    ChatOptions(tools=[]),
]
CALLS = (
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
    "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n"
    "</tool_call>",
    '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}]',
    '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}',
    "[get_weather(city='Paris')]",
)
THINK = ("<think>", "</think>", "\n", "I should call a tool. ")
POOL = tuple(f for fragments in FRAGMENTS.values() for f in fragments) + CALLS + TEXT + THINK
FORMATS = ("auto", *FRAGMENTS)


def _script(pieces: list[str]) -> list[ChatResponseUpdate | BaseException]:
    script: list[ChatResponseUpdate | BaseException] = [ChatResponseUpdate(role=ChatRole.ASSISTANT)]
    script += [ChatResponseUpdate([TextContent(piece)]) for piece in pieces if piece]
    script.append(ChatResponseUpdate(finish_reason=ChatFinishReason.STOP))
    return script


def _whole(text: str) -> ChatResponse:
    return ChatResponse.from_updates(
        [ChatResponseUpdate([TextContent(text)], ChatRole.ASSISTANT, ChatFinishReason.STOP)]
    )


def _responses(
    text: str, pieces: list[str], options: ChatOptions | None, fmt: str
) -> tuple[ChatResponse, ChatResponse]:
    """The streamed and the whole answer through the recovery layer."""

    async def run() -> tuple[ChatResponse, ChatResponse]:
        streamed = TextRecoveryChatClient(ScriptedClient(_script(pieces)), text_tool_calls=fmt)
        updates = [u async for u in streamed.get_streaming_response("x", options)]
        whole = TextRecoveryChatClient(ScriptedClient(_whole(text)), text_tool_calls=fmt)
        return ChatResponse.from_updates(updates), await whole.get_response("x", options)

    return asyncio.run(run())


def _calls(response: ChatResponse) -> list[FunctionCallContent]:
    return [c for m in response.messages for c in m.contents if isinstance(c, FunctionCallContent)]


@st.composite
def _text(draw: st.DrawFn, pool: tuple[str, ...] = POOL) -> tuple[str, list[str]]:
    text = "".join(draw(st.lists(st.sampled_from(pool), max_size=12)))
    return text, cut(text, draw(st.lists(st.integers(0, len(text)), max_size=20)))


@pytest.mark.parametrize("options", NOTHING_OFFERED, ids=["none", "no-tools", "empty"])
@SETTINGS
@given(case=_text(), fmt=st.sampled_from(FORMATS))
def test_with_no_tools_offered_no_recovered_call_is_executable(
    options: ChatOptions | None, case: tuple[str, list[str]], fmt: str
) -> None:
    text, pieces = case
    for response in _responses(text, pieces, options, fmt):
        assert [c for c in _calls(response) if c.error is None] == []
        assert response.finish_reason != ChatFinishReason.TOOL_CALLS


@SETTINGS
@given(
    inside=st.lists(st.sampled_from(CALLS + TEXT + ("I will call ",)), min_size=1, max_size=6),
    after=st.sampled_from(("", " then done.", CALLS[0])),
    data=st.data(),
)
def test_markup_inside_a_think_block_stays_reasoning(
    inside: list[str], after: str, data: st.DataObject
) -> None:
    reasoning = "".join(inside) + "and more thinking."
    text = f"<think>{reasoning}</think>Answer.{after}"
    pieces = cut(text, data.draw(st.lists(st.integers(0, len(text)), max_size=20)))
    options = ChatOptions(tools=[WEATHER])
    for response in _responses(text, pieces, options, "auto"):
        assert response.reasoning == reasoning.strip()
        calls = _calls(response)
        assert len(calls) == (1 if after == CALLS[0] else 0)  # only the call after the block
        assert response.text.startswith("Answer.")


FENCES = ("```\n", "```json\n", "~~~\n", "  ```python\n")


@SETTINGS
@given(
    fence=st.sampled_from(FENCES),
    call=st.sampled_from(CALLS),
    before=st.sampled_from(("", "Example:\n", "Call it like this:\n\n")),
    data=st.data(),
)
def test_a_call_quoted_in_a_code_fence_is_text(
    fence: str, call: str, before: str, data: st.DataObject
) -> None:
    closing = fence.strip()[:3]
    text = f"{before}{fence}{call}\n{closing}\nThat is how."
    pieces = cut(text, data.draw(st.lists(st.integers(0, len(text)), max_size=20)))
    for response in _responses(text, pieces, ChatOptions(tools=[WEATHER]), "auto"):
        assert _calls(response) == []
        assert response.text == text
        assert response.finish_reason != ChatFinishReason.TOOL_CALLS


def test_a_call_after_a_closed_fence_is_still_a_call() -> None:
    text = f"```\n{CALLS[0]}\n```\n{CALLS[0]}"
    for response in _responses(text, [text], ChatOptions(tools=[WEATHER]), "auto"):
        [call] = _calls(response)
        assert (call.name, call.arguments, call.error) == ("get_weather", {"city": "Paris"}, None)
        assert response.text == f"```\n{CALLS[0]}\n```"
        assert response.finish_reason == ChatFinishReason.TOOL_CALLS
