"""The text-recovery layer's fast path (a delta every stage would hand on unchanged is passed as
it is) changes nothing: for random streams of markup, whitespace and plain tokens, in every mode,
each update comes out exactly as the full path makes it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from providers import (
    ChatFinishReason,
    ChatResponseUpdate,
    ChatRole,
    TextContent,
    TextReasoningContent,
    TextRecoveryChatClient,
)
from providers.abstractions.contents import AIContent
from providers.layers.choice_recovery import ChoiceRecovery
from tests.unit.scripted_client import ScriptedClient

SETTINGS = settings(max_examples=150, deadline=None)

_TOKENS = st.sampled_from(
    [
        " the",
        " café",
        " 東京",
        "x",
        "x ",
        "\n",
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
    ]
)
_UPDATE = st.one_of(
    _TOKENS.map(lambda t: ("text", t)),
    _TOKENS.map(lambda t: ("reasoning", t)),
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
    if kind == "text":
        return ChatResponseUpdate([TextContent(value)])
    if kind == "reasoning":
        return ChatResponseUpdate([TextReasoningContent(value)])
    return ChatResponseUpdate([TextContent(v) for v in value])


def _full_path(self: ChoiceRecovery, contents: list[AIContent]) -> list[AIContent]:
    out = self._process(contents)
    self._update_guards()
    return out


def _run(
    script: list[ChatResponseUpdate | BaseException], mode: tuple[str, str, bool]
) -> list[Any]:
    reasoning, tools, edges = mode
    client = TextRecoveryChatClient(
        ScriptedClient(script),
        reasoning_tags=reasoning,
        text_tool_calls=tools,
        block_whitespace=edges,
    )

    async def collect() -> list[Any]:
        seen = []
        async for update in client.get_streaming_response("x"):
            contents = [
                (type(c).__name__, getattr(c, "text", None) or getattr(c, "raw_arguments", None))
                for c in update.contents
            ]
            seen.append((contents, update.finish_reason))
        return seen

    return asyncio.run(collect())


@pytest.mark.parametrize("mode", _MODES, ids=str)
@SETTINGS
@given(items=st.lists(_UPDATE, max_size=25))
def test_fast_path_gives_what_the_full_path_gives(
    mode: tuple[str, str, bool], items: list[tuple[str, Any]]
) -> None:
    script: list[ChatResponseUpdate | BaseException] = [ChatResponseUpdate(role=ChatRole.ASSISTANT)]
    script += [_update(kind, value) for kind, value in items]
    script.append(ChatResponseUpdate(finish_reason=ChatFinishReason.STOP))
    fast = _run(script, mode)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ChoiceRecovery, "process", _full_path)
        full = _run(script, mode)
    assert fast == full
