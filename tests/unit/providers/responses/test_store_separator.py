"""``PREVIOUS_RESPONSE_ID`` after a streamed reasoning-then-call turn (found on the real vLLM).

vLLM and SGLang stream ``<think>…</think>\\n\\n<tool_call>…`` as a reasoning item, a message
item holding only ``"\\n\\n"`` and the function_call item, and store all three. The history the
caller passes back leaves that separator out (``messages_to_input``), so continuing by id would
make the server replay a turn the history does not have: vLLM 0.33 rendered it as an empty
assistant turn (``<|im_start|>assistant\\n\\n\\n<|im_end|>``) before the call. The client must
send that continuation statelessly, and chain again from the next stored turn.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import respx

from providers import ChatMessage, ChatResponse
from providers.responses import ConversationMode, OpenAiCompatibleResponsesClient

BASE = "http://llm.test"
URL = f"{BASE}/v1/responses"
QUESTION = "Weather in Paris?"

REASONING = {
    "type": "reasoning",
    "id": "rs_1",
    "summary": [],
    "content": [{"type": "reasoning_text", "text": "\nI should call the tool.\n"}],
}
CALL = {
    "type": "function_call",
    "id": "fc_1",
    "call_id": "call_1",
    "name": "get_weather",
    "arguments": '{"city": "Paris"}',
    "status": "completed",
}


def message(text: str, item_id: str = "msg_1") -> dict[str, Any]:
    return {
        "type": "message",
        "id": item_id,
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text}],
    }


def response(rid: str, output: list[dict[str, Any]]) -> dict[str, Any]:
    return {"id": rid, "object": "response", "model": "m", "status": "completed", "output": output}


def streamed(rid: str, output: list[dict[str, Any]]) -> httpx.Response:
    """The events of a finished response: each item added, its text as one delta, done."""
    events: list[dict[str, Any]] = [{"type": "response.created", "response": response(rid, [])}]
    for index, item in enumerate(output):
        events.append({"type": "response.output_item.added", "output_index": index, "item": item})
        if item["type"] == "message":
            text = item["content"][0]["text"]
            events.append(
                {
                    "type": "response.output_text.delta",
                    "item_id": item["id"],
                    "output_index": index,
                    "content_index": 0,
                    "delta": text,
                }
            )
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    events.append({"type": "response.completed", "response": response(rid, output)})
    body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
    return httpx.Response(200, content=body.encode(), headers={"content-type": "text/event-stream"})


async def ask(client: OpenAiCompatibleResponsesClient, messages: Any) -> ChatResponse:
    return ChatResponse.from_updates([u async for u in client.get_streaming_response(messages)])


def sent(route: respx.Route, index: int) -> dict[str, Any]:
    return json.loads(route.calls[index].request.content)  # type: ignore[no-any-return]


@respx.mock
async def test_a_stored_separator_sends_the_continuation_statelessly() -> None:
    route = respx.post(URL).mock(
        side_effect=[
            streamed("resp_1", [REASONING, message("\n\n"), CALL]),
            streamed("resp_2", [message("Sunny.", "msg_2")]),
            streamed("resp_3", [message("Also sunny.", "msg_3")]),
        ]
    )
    async with OpenAiCompatibleResponsesClient(
        BASE, "m", backend="vllm", conversation_mode=ConversationMode.PREVIOUS_RESPONSE_ID
    ) as client:
        first = await ask(client, QUESTION)
        assert first.text == "\n\n"  # what the server stored, before any recovery layer
        history = [
            ChatMessage.user(QUESTION),
            *first.messages,
            ChatMessage.tool("call_1", "sunny"),
        ]
        second = await ask(client, history)
        third = await ask(client, [*history, *second.messages, ChatMessage.user("Tomorrow?")])
    assert third.text == "Also sunny."
    continuation = sent(route, 1)
    assert "previous_response_id" not in continuation
    assert continuation["store"] is True  # stored, so the chain can restart from it
    assert [item["type"] for item in continuation["input"]] == [
        "message",
        "function_call",
        "function_call_output",
    ]  # no blank assistant message: the same items as a stateless client sends
    follow_up = sent(route, 2)
    assert follow_up["previous_response_id"] == "resp_2"
    assert follow_up["input"] == [{"type": "message", "role": "user", "content": "Tomorrow?"}]


@respx.mock
async def test_without_a_separator_the_continuation_uses_the_id() -> None:
    """The same turn answered without the separator item (as vLLM answers it whole)."""
    route = respx.post(URL).mock(
        side_effect=[
            streamed("resp_1", [REASONING, CALL]),
            streamed("resp_2", [message("Sunny.", "msg_2")]),
        ]
    )
    async with OpenAiCompatibleResponsesClient(
        BASE, "m", backend="vllm", conversation_mode=ConversationMode.PREVIOUS_RESPONSE_ID
    ) as client:
        first = await ask(client, QUESTION)
        history = [
            ChatMessage.user(QUESTION),
            *first.messages,
            ChatMessage.tool("call_1", "sunny"),
        ]
        await ask(client, history)
    continuation = sent(route, 1)
    assert continuation["previous_response_id"] == "resp_1"
    # vLLM's replay drops the call (RESPONSES_QUIRKS), so it goes again ahead of its output.
    assert [item["type"] for item in continuation["input"]] == [
        "function_call",
        "function_call_output",
    ]
