"""``SyncChatClient`` (issue #22 part 2): the async clients from blocking code, on a private loop
thread, against a real loopback HTTP server (its own thread) so that connections, hang-ups and
the stream's deadlines are real."""

from __future__ import annotations

import asyncio
import gc
import signal
import threading
import time
from collections.abc import AsyncIterator, Iterator
from types import FrameType
from typing import Any

import pytest

from providers import (
    ChatClientMetadata,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    EventLoopError,
    FallbackChatClient,
    OpenAiCompatibleChatClient,
    ProviderError,
    ProviderTimeoutError,
    ServerError,
    StreamInterruptedError,
    StructuredOutputError,
    SyncChatClient,
    Timeouts,
    create_chat_client,
)
from providers.abstractions.chat_client import ChatInput
from tests.unit.loopback_http import LoopbackChat, loopback_chat


@pytest.fixture
def chat() -> Iterator[LoopbackChat]:
    with loopback_chat() as server:
        yield server


def _sync_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("oaicompat-sync-")]


def _client(chat: LoopbackChat, **kwargs: Any) -> OpenAiCompatibleChatClient:
    return OpenAiCompatibleChatClient(chat.base_url, "m", **kwargs)


def test_get_response_and_stream_from_a_plain_script(chat: LoopbackChat) -> None:
    with SyncChatClient(_client(chat)) as client:
        assert client.get_response("hi").text == "Hello there!"
        updates = list(client.get_streaming_response("hi"))
        assert all(isinstance(update, ChatResponseUpdate) for update in updates)
        assert ChatResponse.from_updates(updates).text == "Hello there!"
        assert client.get_response("hi", ChatOptions(max_output_tokens=5)).text == "Hello there!"
    assert chat.requests == 3


def test_nothing_is_sent_before_the_first_update_is_asked_for(chat: LoopbackChat) -> None:
    with SyncChatClient(_client(chat)) as client:
        stream = client.get_streaming_response("hi")
        time.sleep(0.05)
        assert chat.requests == 0
        next(stream)
        assert chat.requests == 1
        stream.close()


def _long_stream(chat: LoopbackChat) -> None:
    chat.words = ["w"] * 400
    chat.gap = 0.01


@pytest.mark.parametrize("how", ["break", "close", "drop"])
def test_leaving_a_stream_early_closes_the_upstream_request(chat: LoopbackChat, how: str) -> None:
    _long_stream(chat)
    with SyncChatClient(_client(chat)) as client:
        stream = client.get_streaming_response("hi")
        if how == "break":
            for number, _ in enumerate(stream):
                if number == 2:
                    break
            del stream  # (a for loop's own iterator is dropped with the loop)
        elif how == "close":
            next(stream), next(stream)
            stream.close()
        else:
            next(stream), next(stream)
            del stream
            gc.collect()
        # The server notices the hang-up on its next writes, long before the 4 s stream ends.
        assert chat.hang_ups.wait(3.0)


def test_an_error_is_raised_in_the_callers_thread_with_its_partial_response(
    chat: LoopbackChat,
) -> None:
    chat.cut = True
    with SyncChatClient(_client(chat)) as client:
        seen: list[str] = []
        with pytest.raises(StreamInterruptedError) as caught:
            for update in client.get_streaming_response("hi"):
                seen.append(update.text)
        assert "".join(seen) == "Hello there!"
        assert caught.value.partial_response is not None
        assert caught.value.partial_response.text == "Hello there!"
        chat.cut, chat.status = False, 500
        with pytest.raises(ServerError) as status:
            client.get_response("hi")
        assert status.value.status == 500


def test_several_threads_share_one_loop_thread(chat: LoopbackChat) -> None:
    chat.gap = 0.01
    texts: list[str] = []
    errors: list[BaseException] = []
    with SyncChatClient(_client(chat)) as client:

        def ask() -> None:
            try:
                texts.append(client.get_response("hi").text)
                texts.append(ChatResponse.from_updates(client.get_streaming_response("hi")).text)
            except BaseException as exc:  # (reported below)
                errors.append(exc)

        workers = [threading.Thread(target=ask) for _ in range(8)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        assert len(_sync_threads()) == 1
    assert errors == []
    assert texts == ["Hello there!"] * 16


def test_it_works_inside_a_running_event_loop(chat: LoopbackChat) -> None:
    """A notebook cell: a coroutine on a running loop calls the blocking API."""
    client = SyncChatClient(_client(chat))

    async def cell() -> tuple[str, str]:
        answer = client.get_response("hi").text
        streamed = ChatResponse.from_updates(client.get_streaming_response("hi")).text
        return answer, streamed

    try:
        assert asyncio.run(cell()) == ("Hello there!", "Hello there!")
    finally:
        client.close()


def test_no_thread_is_left_after_close_and_a_closed_client_says_so(chat: LoopbackChat) -> None:
    before = set(threading.enumerate())
    client = SyncChatClient(_client(chat))
    assert set(threading.enumerate()) == before  # (the thread starts on first use)
    client.get_response("hi")
    assert len(_sync_threads()) == 1
    client.close()
    client.close()  # (idempotent)
    assert _sync_threads() == []
    with pytest.raises(EventLoopError):
        client.get_response("hi")


def test_a_stream_open_when_the_client_closes_ends_with_a_typed_error(chat: LoopbackChat) -> None:
    _long_stream(chat)
    client = SyncChatClient(_client(chat))
    stream = client.get_streaming_response("hi")
    next(stream)
    client.close()
    assert chat.hang_ups.wait(3.0)
    with pytest.raises(EventLoopError):
        next(stream)
    assert _sync_threads() == []


def test_a_client_dropped_without_close_ends_its_thread(chat: LoopbackChat) -> None:
    client = SyncChatClient(_client(chat))
    client.get_response("hi")
    (thread,) = _sync_threads()
    del client
    gc.collect()
    thread.join(5.0)
    assert not thread.is_alive()


def test_the_callers_timeout_cancels_the_request(chat: LoopbackChat) -> None:
    _long_stream(chat)
    with SyncChatClient(_client(chat)) as client:
        stream = client.get_streaming_response("hi", timeout=0.5)
        next(stream)
        chat.gap = 2.0  # (the next word comes too late for the caller)
        with pytest.raises(ProviderTimeoutError):
            list(stream)
        assert chat.hang_ups.wait(5.0)


def test_ctrl_c_while_waiting_cancels_the_request(chat: LoopbackChat) -> None:
    chat.delay = 20.0

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        with SyncChatClient(_client(chat)) as client:
            signal.setitimer(signal.ITIMER_REAL, 0.3)
            with pytest.raises(KeyboardInterrupt):
                client.get_response("hi")  # (the answer comes in 20 s)
            assert chat.hang_ups.wait(5.0)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_the_streams_own_deadlines_still_apply(chat: LoopbackChat) -> None:
    """One task iterates the stream, so its idle watchdog cancels the right one."""
    chat.words = ["a", "b", "c"]
    chat.gap = 1.0
    budgets = Timeouts(idle=0.2, first_token=5)
    with (
        SyncChatClient(_client(chat, timeouts=budgets)) as client,
        pytest.raises(ProviderTimeoutError) as caught,
    ):
        list(client.get_streaming_response("hi"))
    assert caught.value.phase == "idle"


def test_as_sync_on_the_wire_client_the_pipeline_and_the_fallback(chat: LoopbackChat) -> None:
    pipeline = create_chat_client(chat.base_url, "m")
    fallback = FallbackChatClient(_client(chat), _client(chat))
    for async_client in (_client(chat), pipeline, fallback):
        with async_client.as_sync() as client:  # type: ignore[attr-defined]
            assert isinstance(client, SyncChatClient)
            assert client.get_response("hi").text == "Hello there!"
            assert ChatResponse.from_updates(client.get_streaming_response("hi")).text
            metadata = client.metadata
            assert metadata is not None and metadata.model_id == "m"
            assert client.get_service(ChatClientMetadata) == metadata
            assert client.get_service(SyncChatClient) is client


class _Calling:
    """A client whose request calls back into the sync wrapper from its loop thread."""

    sync: SyncChatClient

    async def get_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> ChatResponse:
        return self.sync.get_response(messages)

    async def _nothing(self) -> AsyncIterator[ChatResponseUpdate]:
        return
        yield

    def get_streaming_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        return self._nothing()

    async def aclose(self) -> None:
        pass

    async def get_response_as(
        self, output_type: type[Any], messages: ChatInput, options: ChatOptions | None = None
    ) -> Any:
        return output_type(7)


def test_a_call_from_its_own_loop_thread_is_refused_not_deadlocked() -> None:
    inner = _Calling()
    with SyncChatClient(inner) as client:
        inner.sync = client
        with pytest.raises(EventLoopError) as caught:
            client.get_response("hi")
    assert isinstance(caught.value, ProviderError)
    assert isinstance(caught.value, RuntimeError)


def test_get_response_as_reaches_the_wrapped_clients_own() -> None:
    with SyncChatClient(_Calling()) as client:
        own: Any = client.get_response_as(int, "hi")  # (the fake answers a bare value)
        assert own == 7
        assert list(client.get_streaming_response("hi")) == []


class _PlainClient:
    """A client of the caller's own with ``get_response`` only."""

    async def get_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> ChatResponse:
        assert options is not None and options.response_format is not None
        return ChatResponse([ChatMessage.assistant('{"data": 5}')])

    def get_streaming_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        raise NotImplementedError

    async def aclose(self) -> None:
        pass


def test_get_response_as_works_over_a_client_without_its_own() -> None:
    with SyncChatClient(_PlainClient()) as client:
        assert client.get_response_as(int, "five").value == 5


def test_get_response_as_through_the_wire_client_gives_a_validated_value(
    chat: LoopbackChat,
) -> None:
    """The sync wrapper reaches the wire client's own ``get_response_as`` (issue #22 part 6):
    the server's JSON comes back as a validated instance in the caller's thread, and a reply
    that does not fit the type is the typed error, raised there too."""
    chat.words = ['{"data": [1, 2', ", 3]}"]
    with SyncChatClient(_client(chat)) as client:
        result = client.get_response_as(list[int], "count to three")
        assert result.value == [1, 2, 3]
        assert result.response.text == '{"data": [1, 2, 3]}'
        chat.words = ["not json"]
        with pytest.raises(StructuredOutputError) as caught:
            client.get_response_as(list[int], "count to three")
        assert caught.value.text == "not json"
