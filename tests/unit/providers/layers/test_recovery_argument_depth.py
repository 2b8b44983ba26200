"""A call recovered from text is held to the layer's ``Limits.max_json_depth``, as a server's
own calls are: arguments nested deeper come back with ``error`` set, never executable."""

from __future__ import annotations

import pytest

from providers import (
    ChatFinishReason,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    FunctionCallContent,
    Limits,
    TextContent,
    TextRecoveryChatClient,
    ToolDeclaration,
)
from tests.unit.scripted_client import ScriptedClient, collect

DEPTH = 6
TOOLS = ChatOptions(tools=[ToolDeclaration("get_weather")])


def _call(nesting: int) -> str:
    value = "[" * nesting + "]" * nesting
    return f'<tool_call>\n{{"name": "get_weather", "arguments": {{"a": {value}}}}}\n</tool_call>'


@pytest.mark.parametrize(("nesting", "executable"), [(DEPTH - 2, True), (DEPTH + 2, False)])
async def test_a_recovered_call_nested_past_the_limit_is_flagged(
    nesting: int, executable: bool
) -> None:
    script: list[ChatResponseUpdate | BaseException] = [
        ChatResponseUpdate([TextContent(_call(nesting))], finish_reason=ChatFinishReason.STOP)
    ]
    client = TextRecoveryChatClient(ScriptedClient(script), limits=Limits(max_json_depth=DEPTH))
    seen, error = await collect(client.get_streaming_response("weather?", TOOLS))
    assert error is None
    contents = [c for m in ChatResponse.from_updates(seen).messages for c in m.contents]
    calls = [c for c in contents if isinstance(c, FunctionCallContent)]
    assert len(calls) == 1
    assert (calls[0].error is None) is executable
