"""``TextRecoveryChatClient`` makes its parsers only when a text needs them.

Most answers hold no marker, and a server streaming to many callers at once should not hold
three idle parsers per stream; but the first marker, wherever it falls, must still be recovered
exactly as if the parsers had been there from the start.
"""

from __future__ import annotations

import pytest

from providers import (
    AIContent,
    ChatFinishReason,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    FunctionCallContent,
    TextContent,
    TextReasoningContent,
    TextRecoveryChatClient,
    UsageContent,
    UsageDetails,
)
from providers.abstractions.options import ToolDeclaration
from providers.abstractions.response_update import NO_HEAD
from providers.layers.choice_recovery import ChoiceRecovery
from tests.unit.scripted_client import ScriptedClient, collect

TOOLS = [ToolDeclaration("f")]
"""Offered, so the tool-call parser is in play (with none, no call is recovered at all)."""


def _made(recovery: ChoiceRecovery) -> tuple[bool, bool, bool]:
    return (
        recovery._reasoning is not None,
        recovery._tools is not None,
        recovery._edges is not None,
    )


def test_plain_text_and_usage_make_no_parser() -> None:
    recovery = ChoiceRecovery("auto", "auto", TOOLS, block_whitespace=True)
    for piece in ["The", " weather", " in", " Paris", " is", " mild."]:
        contents: list[AIContent] = [TextContent(piece)]
        assert recovery.process(contents) is contents  # handed on as it is
    usage: list[AIContent] = [UsageContent(UsageDetails(input_token_count=3))]
    assert recovery.process(usage) == usage
    assert _made(recovery) == (False, False, False)
    assert recovery.finish() == []


def test_a_marker_after_usage_is_still_recovered() -> None:
    recovery = ChoiceRecovery("auto", "auto", TOOLS, block_whitespace=True)
    recovery.process([UsageContent(UsageDetails(input_token_count=3))])
    out = recovery.process([TextContent("<think>x</think>y")]) + recovery.finish()
    assert [(type(c).__name__, getattr(c, "text", None)) for c in out] == [
        ("TextReasoningContent", "x"),
        ("TextContent", "y"),
    ]


def test_trailing_whitespace_makes_only_the_edges_stage() -> None:
    recovery = ChoiceRecovery("auto", "auto", TOOLS, block_whitespace=True)
    # (the edges stage holds trailing whitespace until the next piece shows what it was)
    assert [getattr(c, "text", None) for c in recovery.process([TextContent("Hello ")])] == [
        "Hello"
    ]
    assert _made(recovery) == (False, False, True)
    assert [getattr(c, "text", None) for c in recovery.process([TextContent("world")])] == [
        " world"
    ]
    assert _made(recovery) == (False, False, True)


_MARKED = ["<think>", "why", "</think>", " Sure.", "<tool_call>", '{"name": "f", ']
_MARKED += ['"arguments": {"x": 1}}', "</tool_call>", " Done. "]


def _run(recovery: ChoiceRecovery, pieces: list[str]) -> list[tuple[str, object]]:
    out = []
    for piece in pieces:
        out += recovery.process([TextContent(piece)])
    out += recovery.finish()
    return [
        (type(c).__name__, (c.name, c.raw_arguments) if isinstance(c, FunctionCallContent) else c)
        for c in out
    ]


@pytest.mark.parametrize("plain_before", [0, 1, 2, 50])
@pytest.mark.parametrize("space", ["", " ", "\n"])
def test_a_late_marker_gives_what_parsers_made_at_the_start_give(
    plain_before: int, space: str
) -> None:
    pieces = [f"w{i}{space}" for i in range(plain_before)] + _MARKED
    lazy = ChoiceRecovery("auto", "auto", TOOLS, block_whitespace=True)
    eager = ChoiceRecovery("auto", "auto", TOOLS, block_whitespace=True)
    eager._start()
    eager._fresh = False
    eager._update_guards()
    assert _run(lazy, pieces) == _run(eager, pieces)
    assert _made(lazy)[:2] == (False, False)  # finished: the parsers are let go


async def test_a_late_marker_is_recovered_in_a_stream() -> None:
    pieces = [f"w{i}," for i in range(40)] + _MARKED
    updates: list[ChatResponseUpdate | BaseException] = [
        ChatResponseUpdate([TextContent(piece)]) for piece in pieces
    ]
    updates.append(ChatResponseUpdate([], finish_reason=ChatFinishReason.STOP))
    client = TextRecoveryChatClient(ScriptedClient(updates))
    seen, error = await collect(client.get_streaming_response("go", ChatOptions(tools=TOOLS)))
    assert error is None
    response = ChatResponse.from_updates(seen)
    assert response.reasoning == "why"
    assert response.text == "".join(f"w{i}," for i in range(40)) + "Sure.Done. "
    assert [(c.name, c.arguments) for c in response.tool_calls] == [("f", {"x": 1})]
    assert response.finish_reason == ChatFinishReason.TOOL_CALLS


async def test_a_second_choice_gets_its_own_recovery() -> None:
    updates: list[ChatResponseUpdate | BaseException] = [
        ChatResponseUpdate([TextContent("<think>a")], choice_index=0),
        ChatResponseUpdate([TextContent("plain")], choice_index=1),
        ChatResponseUpdate([TextContent("</think>b")], choice_index=0),
        ChatResponseUpdate([], finish_reason=ChatFinishReason.STOP, choice_index=1),
        ChatResponseUpdate([], finish_reason=ChatFinishReason.STOP, choice_index=0),
    ]
    client = TextRecoveryChatClient(ScriptedClient(updates))
    seen, error = await collect(client.get_streaming_response("go"))
    assert error is None
    response = ChatResponse.from_updates(seen)
    first, second = response.messages
    assert (first.reasoning, first.text) == ("a", "b")
    assert (second.reasoning, second.text) == ("", "plain")


def test_the_servers_reasoning_and_calls_make_no_parser_and_prose_lines_neither() -> None:
    """No parser reads what the server split off (its reasoning, its calls), and prose across
    lines needs none: only the edges stage is made, and the output is the full path's."""
    recovery = ChoiceRecovery("auto", "auto", TOOLS, block_whitespace=True)
    out = recovery.process([TextReasoningContent("\nLet me think.\n")])
    out += recovery.process([TextContent("\n\nIt is")])
    out += recovery.process([TextContent(" mild.\nTomorrow")])
    out += recovery.process([FunctionCallContent("c1", "f", raw_arguments="{}")])
    assert _made(recovery) == (False, False, True)
    assert [(type(c).__name__, getattr(c, "text", "call")) for c in out] == [
        ("TextReasoningContent", "Let me think."),
        ("TextContent", "It is"),
        ("TextContent", " mild.\nTomorrow"),
        ("FunctionCallContent", "call"),
    ]


def test_tool_call_fragments_and_a_runs_prose_are_taken_inline() -> None:
    """The updates of a server's tool-call fragments carry nothing (plain and empty), and are
    passed a run at a time even at a line's start, where no text may pass inline: none of
    them costs an ``edit`` of its own."""
    recovery = ChoiceRecovery("auto", "auto", TOOLS, block_whitespace=True)
    fragments = [ChatResponseUpdate.of_text("", NO_HEAD, 0, None) for _ in range(5)]
    texts: list[str] = []
    assert recovery.take_passing(fragments, 0, 0, TextContent, texts) == 5
    prose = [ChatResponseUpdate.of_text(t, NO_HEAD, 0, None) for t in ("It", " is", "\n")]
    assert recovery.take_passing(prose, 0, 0, TextContent, texts) == 0  # (a line's start)
    assert recovery.process([TextContent("It")]) == [TextContent("It")]
    assert recovery.take_passing(prose, 1, 0, TextContent, texts) == 2  # (" is"; "\n" waits)
    assert texts == [" is"]
