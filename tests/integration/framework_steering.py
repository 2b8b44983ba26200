"""The forced first turn of ``test_llamacpp_server_tool_calls`` for a framework's agent loop.

A framework builds its own requests, so the steering that makes the random-weight model call
the tool (the ``<tool_call>`` prefill, ``tool_choice: "required"``, the end-of-turn bias) is
added underneath it, by a layer between the adapter and the real pipeline. The first request
gets all of it. Later ones get a short free answer instead (no bias, 8 tokens): an empty answer
would end Agent Framework's loop just as well, but pydantic-ai rejects an empty final answer and
asks again, so the model must say something, and eight random tokens never spell a call.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

from providers import (
    ChatInput,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    ChatRole,
    DelegatingChatClient,
)
from providers.abstractions.options import ChatToolMode
from tests.integration.test_llamacpp_server_tool_calls import CONVERSATION, steering_bias

PREFILL = CONVERSATION[-1]


class Steering(DelegatingChatClient):
    """Adds the steering to each request and keeps what was sent."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.sent: list[tuple[list[ChatMessage], ChatOptions]] = []
        self._bias = steering_bias()

    def _steer(
        self, messages: ChatInput, options: ChatOptions | None
    ) -> tuple[list[ChatMessage], ChatOptions]:
        history = ChatMessage.coerce_all(messages)
        options = options or ChatOptions()
        steered = replace(options, max_output_tokens=8, allow_multiple_tool_calls=False)
        if not any(m.role == ChatRole.TOOL for m in history):
            history = [*history, PREFILL]
            extras = {**options.additional_properties, "logit_bias": self._bias}
            steered = replace(
                steered,
                max_output_tokens=80,
                tool_mode=ChatToolMode.REQUIRED,
                additional_properties=extras,
            )
        self.sent.append((history, steered))
        return history, steered

    async def get_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> ChatResponse:
        return await super().get_response(*self._steer(messages, options))

    def get_streaming_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        return super().get_streaming_response(*self._steer(messages, options))
