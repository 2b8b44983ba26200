"""The text-recovery layer's fast path (a delta every stage would hand on unchanged is passed as
it is) changes nothing: for random streams of markup, code fences, whitespace and plain tokens,
in every mode, with and without tools offered, each update comes out exactly as the full path
makes it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from providers import (
    ChatFinishReason,
    ChatOptions,
    ChatResponseUpdate,
    ChatRole,
    TextContent,
    TextReasoningContent,
    TextRecoveryChatClient,
    ToolDeclaration,
)
from providers.abstractions.contents import AIContent
from providers.abstractions.response_update import UpdateHead
from providers.layers.choice_recovery import ChoiceRecovery

SETTINGS = settings(max_examples=150, deadline=None)

_TOKENS = st.sampled_from(
    [
        " the",
        " café",
        " 東京",
        "x",
        "x ",
        "\n",
        "\n\n",
        " the\n",
        "x\n the",
        "\n  ",
        "\n x",
        "a\n`b",
        " ~\n",
        "\n<",
        " ",
        "\t",
        "",
        "<",
        "[",
        "{",
        "<think>",
        "</think>",
        "think>",
        "◁think▷",
        "◁/think▷",
        "<tool_call>",
        "</tool_call>",
        '{"name": "get_weather", "arguments": {"city": "Paris"}}',
        "[TOOL_CALLS]",
        '[{"name": "f", "arguments": {}}]',
        "<|channel|>",
        "analysis<|message|>",
        "<|end|>",
        "<|",
        "```",
        "```json\n",
        "\n```\n",
        "`",
        "~~~",
        "  ",
    ]
)
_UPDATE = st.one_of(
    _TOKENS.map(lambda t: ("text", t)),
    _TOKENS.map(lambda t: ("reasoning", t)),
    _TOKENS.map(lambda t: ("plain text", t)),
    _TOKENS.map(lambda t: ("plain reasoning", t)),
    st.lists(_TOKENS, min_size=2, max_size=3).map(lambda ts: ("texts", ts)),
)
_MODES = [
    ("auto", "auto", True),
    ("auto", "auto", False),
    ("think", "hermes", True),
    ("off", "auto", True),
    ("auto", "off", True),
    ("deepseek_r1", "mistral", True),
    ("off", "off", True),
]


def _update(kind: str, value: Any) -> ChatResponseUpdate:
    if kind.startswith("plain "):  # (as the wire client makes them: no contents list)
        text_kind = TextContent if kind == "plain text" else TextReasoningContent
        return ChatResponseUpdate.of_text(value, UpdateHead(None, None, None, text_kind), 0, None)
    if kind == "text":
        return ChatResponseUpdate([TextContent(value)])
    if kind == "reasoning":
        return ChatResponseUpdate([TextReasoningContent(value)])
    return ChatResponseUpdate([TextContent(v) for v in value])


def _full_path(self: ChoiceRecovery, contents: list[AIContent]) -> list[AIContent]:
    out = self._process(contents)
    self._update_guards()
    return out


def _no_fast_path(patch: pytest.MonkeyPatch) -> None:
    """Every update through the stages: no run taken inline, no text edited as a string."""
    patch.setattr(ChoiceRecovery, "process", _full_path)
    patch.setattr(ChoiceRecovery, "take_passing", lambda self, run, start, *rest: start)
    patch.setattr(ChoiceRecovery, "edit_text", lambda self, text: None)
    patch.setattr(ChoiceRecovery, "edit_reasoning", lambda self, text: None)


OFFERED = ChatOptions(tools=[ToolDeclaration("get_weather"), ToolDeclaration("f")])


class _AsGiven:
    """Streams its updates as they are: a plain one stays plain, as the wire client makes it
    (``ScriptedClient`` rebuilds each update from its fields, so none would be)."""

    def __init__(self, updates: list[ChatResponseUpdate]) -> None:
        self._updates = updates

    async def get_response(self, messages: Any, options: ChatOptions | None = None) -> Any:
        raise NotImplementedError

    async def get_streaming_response(
        self, messages: Any, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        for update in self._updates:
            yield update

    async def aclose(self) -> None:
        return None


def _run(
    items: list[tuple[str, Any]],
    mode: tuple[str, str, bool],
    options: ChatOptions | None,
) -> list[Any]:
    """The updates ``items`` make (between a role and a finish update) through text recovery:
    each update's contents and finish reason as the caller sees them."""
    script = [ChatResponseUpdate(role=ChatRole.ASSISTANT)]
    script += [_update(kind, value) for kind, value in items]
    script.append(ChatResponseUpdate(finish_reason=ChatFinishReason.STOP))
    reasoning, tools, edges = mode
    client = TextRecoveryChatClient(
        _AsGiven(script),
        reasoning_tags=reasoning,
        text_tool_calls=tools,
        block_whitespace=edges,
    )

    async def collect() -> list[Any]:
        seen = []
        async for update in client.get_streaming_response("x", options):
            contents = [
                (type(c).__name__, getattr(c, "text", None) or getattr(c, "raw_arguments", None))
                for c in update.contents
            ]
            seen.append((contents, update.finish_reason))
        return seen

    return asyncio.run(collect())


_CALL = '{"name": "get_weather", "arguments": {"city": "Paris"}}'


@pytest.mark.parametrize("options", [OFFERED, None], ids=["tools", "no-tools"])
@pytest.mark.parametrize("mode", _MODES, ids=str)
@SETTINGS
@given(items=st.lists(_UPDATE, max_size=25))
# A text that ends a line skips the parsers: the fence opened on the next line still quotes.
@example(
    items=[
        ("text", " x\n"),
        ("text", "```"),
        ("text", "\n<tool_call>"),
        ("text", _CALL),
        ("text", "</tool_call>"),
    ]
)
# The same, as the wire client makes its updates (plain: no contents list).
@example(
    items=[
        ("plain text", " x\n"),
        ("plain text", "```"),
        ("plain text", "\n<tool_call>"),
        ("plain text", _CALL),
        ("plain text", "</tool_call>"),
    ]
)
# The server's reasoning taken a run at a time: its trailing whitespace is still held.
@example(
    items=[
        ("plain reasoning", " the"),
        ("plain reasoning", " x"),
        ("plain reasoning", "\n"),
        ("plain text", " x"),
    ]
)
# A closing fence's run still being counted: the newline after it must close the fence.
@example(
    items=[
        ("text", "```"),
        ("text", "\n"),
        ("text", "```"),
        ("text", "\n x"),
        ("text", "<tool_call>"),
        ("text", _CALL),
        ("text", "</tool_call>"),
    ]
)
def test_fast_path_gives_what_the_full_path_gives(
    mode: tuple[str, str, bool], options: ChatOptions | None, items: list[tuple[str, Any]]
) -> None:
    fast = _run(items, mode, options)
    with pytest.MonkeyPatch.context() as patch:
        _no_fast_path(patch)
        full = _run(items, mode, options)
    assert fast == full


@example(
    items=[
        ("text", "```"),
        ("text", " the"),
        ("reasoning", " the"),
        ("texts", [" the", "\n```\n"]),
        ("text", "<"),
    ]
)
@SETTINGS
@given(items=st.lists(_UPDATE, max_size=25))
def test_a_fence_opener_followed_by_a_skipped_info_string_still_closes(
    items: list[tuple[str, Any]],
) -> None:
    """Found by the property above: the fast path skipped " the" right after an opening
    "```" (the run of backticks not yet ended), and the fence tracker, told only that the line
    had begun, counted the closing "```" as more of the opening run; the fence never closed
    and a later "<" passed as fenced text where the full path holds it as a possible marker."""
    mode = ("auto", "auto", False)
    fast = _run(items, mode, OFFERED)
    with pytest.MonkeyPatch.context() as patch:
        _no_fast_path(patch)
        full = _run(items, mode, OFFERED)
    assert fast == full
