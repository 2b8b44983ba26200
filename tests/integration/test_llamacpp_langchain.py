"""``ChatOaicompat`` under LangChain's ``create_agent`` against a real ``llama-server``.

The model calls a tool the agent did not offer (issue 34 item 6): the grammar makes the
random-weight model write a Hermes ``<tool_call>`` naming ``get_time`` while the agent offers
only ``get_weather`` (``tool_choice: "none"`` keeps the server's own parser out, as in
``test_llamacpp_integrations``). LangChain's loop cannot be told from a chat model (it ends on an
answer without ``tool_calls``), so the user gets the model's text as the answer, with the call in
``invalid_tool_calls``; nothing runs, and the run ends after one request, never with an empty
answer. The session key and ``extra_body`` ride along on the same requests.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from providers import (
    ChatInput,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    DelegatingChatClient,
)
from providers.factory import create_chat_client
from tests.integration.test_llamacpp_text_tool_calls import HERMES_TIME, PROMPT, forced
from tests.integrations.exchanges import require

require("langchain", "langchain")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.messages import AIMessage  # noqa: E402

from providers.integrations.langchain import ChatOaicompat  # noqa: E402


class Counting(DelegatingChatClient):
    """Counts the requests and keeps the options each was sent with."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
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


@pytest.mark.parametrize("streaming", [False, True], ids=["whole", "streamed"])
async def test_a_call_to_a_tool_not_offered_is_the_answer_text_live(
    plain_server: Any, streaming: bool
) -> None:
    ran: list[str] = []

    def get_weather(city: str) -> str:
        """The current weather in a city."""
        ran.append(city)
        return f"sunny in {city}"

    steering = await forced(plain_server.base_url, HERMES_TIME)
    forcing = {**steering.additional_properties, "max_tokens": steering.max_output_tokens}
    counting = Counting(
        create_chat_client(plain_server.base_url, backend="llamacpp", telemetry=False)
    )
    fields: dict[str, Any] = {"streaming": True} if streaming else {}
    model = ChatOaicompat(
        client=counting,
        model_kwargs={**forcing, "tool_choice": "none"},
        extra_body={"chat_template_kwargs": {"enable_thinking": False}},
        owns_client=True,
        **fields,
    )
    agent = create_agent(model, [get_weather])
    state = await agent.ainvoke(
        {"messages": [{"role": "user", "content": PROMPT}]},
        config={"configurable": {"thread_id": "live-thread"}},
    )
    await model.aclose()

    answer = state["messages"][-1]
    assert isinstance(answer, AIMessage)
    assert answer.tool_calls == []
    assert [call["name"] for call in answer.invalid_tool_calls] == ["get_time"]
    if not streaming:  # LangChain re-derives a streamed message's invalid calls, without error
        assert "not offered" in str(answer.invalid_tool_calls[0]["error"])
    assert answer.text == HERMES_TIME
    assert ran == []
    (options,) = counting.options  # one request: the loop ended on the answer
    assert options is not None and options.conversation_id == "live-thread"
    assert options.additional_properties["chat_template_kwargs"] == {"enable_thinking": False}
