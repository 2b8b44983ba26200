"""A scripted ``ChatClient`` for unit tests of the delegating layers (retry, failover).

Each call takes the next step of its script, so a test states exactly what the backend does:
answer, fail, or stream some updates and then fail. No sockets, nothing timed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from providers import (
    BackendUnavailableError,
    ChatInput,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    ChatRole,
    ProviderError,
    TextContent,
)

Step = ChatResponse | BaseException | list[ChatResponseUpdate | BaseException]


class ScriptedClient:
    """Each call takes the next step: a response, an error to raise, or a stream script (updates,
    possibly ending with an error). Records the messages of every call."""

    def __init__(self, *steps: Step) -> None:
        self.steps = list(steps)
        self.calls: list[list[ChatMessage]] = []
        self.closed_streams = 0

    def _next(self, messages: ChatInput) -> Step:
        self.calls.append(ChatMessage.coerce_all(messages))
        return self.steps.pop(0) if len(self.steps) > 1 else self.steps[0]

    async def get_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> ChatResponse:
        step = self._next(messages)
        if isinstance(step, BaseException):
            raise step
        assert isinstance(step, ChatResponse)
        return ChatResponse(messages=list(step.messages))  # a fresh object per call

    async def get_streaming_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        step = self._next(messages)
        assert isinstance(step, list)
        received: list[ChatResponseUpdate] = []
        try:
            for item in step:
                if isinstance(item, BaseException):
                    if isinstance(item, ProviderError):
                        item.partial_response = ChatResponse.from_updates(received)
                    raise item
                update = ChatResponseUpdate(
                    list(item.contents),
                    role=item.role,
                    finish_reason=item.finish_reason,
                    choice_index=item.choice_index,
                )
                received.append(update)
                yield update
        finally:
            self.closed_streams += 1

    async def aclose(self) -> None:
        pass


def role() -> ChatResponseUpdate:
    return ChatResponseUpdate(role=ChatRole.ASSISTANT)


def keepalive() -> ChatResponseUpdate:
    return ChatResponseUpdate()


def text(value: str) -> ChatResponseUpdate:
    return ChatResponseUpdate([TextContent(value)])


def answer(value: str = "ok") -> ChatResponse:
    return ChatResponse.from_updates([text(value)])


def unavailable() -> BackendUnavailableError:
    return BackendUnavailableError("busy", status=503)


async def collect(
    stream: AsyncIterator[ChatResponseUpdate],
) -> tuple[list[ChatResponseUpdate], ProviderError | None]:
    seen: list[ChatResponseUpdate] = []
    try:
        async for update in stream:
            seen.append(update)
    except ProviderError as error:
        return seen, error
    return seen, None
