"""``FallbackChatClient``: switch backends only before the first substantive update, and say
which backend answered."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from structlog.testing import capture_logs

from providers import (
    AuthenticationError,
    BackendUnavailableError,
    ChatMessage,
    ChatResponse,
    ChatResponseUpdate,
    ContextLengthExceededError,
    ProviderConnectionError,
    StreamInterruptedError,
)
from providers.abstractions.errors import ConfigurationError
from providers.builder import ChatClientBuilder
from providers.layers.fallback import (
    ANSWERED_BY,
    FALLBACK_EVENT,
    FALLBACK_REASON,
    FallbackChatClient,
    falls_back_on,
)
from providers.layers.retry import RetryPolicy
from tests.unit.scripted_client import (
    ScriptedClient,
    answer,
    collect,
    keepalive,
    role,
    text,
    unavailable,
)


def _props(update: ChatResponseUpdate | ChatResponse) -> dict[str, Any]:
    return dict(update.additional_properties or {})


async def test_main_answers_and_fallback_is_never_called() -> None:
    main, fallback = ScriptedClient(answer("from main")), ScriptedClient(answer("from fallback"))
    client = FallbackChatClient(main, fallback, main_name="gpu", fallback_name="local")
    response = await client.get_response("hi")
    assert response.text == "from main"
    assert response.additional_properties[ANSWERED_BY] == "gpu"
    assert FALLBACK_REASON not in response.additional_properties
    assert fallback.calls == []


async def test_non_streamed_failure_switches_and_records_who_answered() -> None:
    main = ScriptedClient(ProviderConnectionError("refused"))
    fallback = ScriptedClient(answer("from fallback"))
    client = FallbackChatClient(main, fallback, main_name="gpu", fallback_name="local")
    with capture_logs() as logs:
        response = await client.get_response("hi")
    assert response.text == "from fallback"
    assert response.additional_properties[ANSWERED_BY] == "local"
    assert response.additional_properties[FALLBACK_REASON] == "ProviderConnectionError"
    assert [m.text for m in fallback.calls[0]] == ["hi"]
    event = next(e for e in logs if e["event"] == FALLBACK_EVENT)
    assert event["main"] == "gpu" and event["fallback"] == "local"
    assert event["error"] == "ProviderConnectionError"


async def test_stream_failing_before_output_switches_and_drops_the_held_back_updates() -> None:
    main = ScriptedClient([role(), keepalive(), unavailable()])
    fallback = ScriptedClient([role(), text("Hel"), text("lo")])
    client = FallbackChatClient(main, fallback)
    seen, error = await collect(client.get_streaming_response("hi"))
    assert error is None
    assert [u.text for u in seen] == ["", "Hel", "lo"]  # one role update: the fallback's
    assert _props(seen[0])[ANSWERED_BY] == "fallback"
    assert _props(seen[0])[FALLBACK_REASON] == "BackendUnavailableError"
    assert main.closed_streams == 1 and fallback.closed_streams == 1


async def test_stream_failing_after_output_started_is_never_switched() -> None:
    main = ScriptedClient([role(), text("Hel"), StreamInterruptedError("reset")])
    fallback = ScriptedClient([text("never")])
    client = FallbackChatClient(main, fallback)
    seen, error = await collect(client.get_streaming_response("hi"))
    assert isinstance(error, StreamInterruptedError)
    assert error.partial_response is not None and error.partial_response.text == "Hel"
    assert "".join(u.text for u in seen) == "Hel"
    assert _props(seen[0])[ANSWERED_BY] == "main"
    assert fallback.calls == []


async def test_a_main_client_that_refuses_the_stream_outright_is_failed_over() -> None:
    """A client of the caller's own may raise from ``get_streaming_response`` itself, before
    returning any iterator; that is a failure before output like any other."""

    class Refusing(ScriptedClient):
        def get_streaming_response(self, *args: Any, **kwargs: Any) -> Any:
            raise BackendUnavailableError("busy", status=503)

    fallback = ScriptedClient([role(), text("ok")])
    client = FallbackChatClient(Refusing([]), fallback)
    stream = client.get_streaming_response("hi")  # nothing is raised before the first anext
    seen, error = await collect(stream)
    assert error is None
    assert "".join(u.text for u in seen) == "ok"
    assert _props(seen[0])[FALLBACK_REASON] == "BackendUnavailableError"


async def test_stream_from_main_is_marked_on_its_first_update_only() -> None:
    client = FallbackChatClient(ScriptedClient([role(), text("a"), text("b")]), ScriptedClient([]))
    seen, error = await collect(client.get_streaming_response("hi"))
    assert error is None
    assert _props(seen[0])[ANSWERED_BY] == "main"
    assert all(ANSWERED_BY not in _props(u) for u in seen[1:])


async def test_both_failing_raises_the_fallbacks_error_noting_the_main_one() -> None:
    main = ScriptedClient(unavailable())
    fallback = ScriptedClient(AuthenticationError("bad key", status=401))
    client = FallbackChatClient(main, fallback, main_name="gpu", fallback_name="local")
    with pytest.raises(AuthenticationError) as info:
        await client.get_response("hi")
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "'gpu'" in notes and "BackendUnavailableError" in notes and "busy" in notes

    main = ScriptedClient([role(), unavailable()])
    fallback = ScriptedClient([ProviderConnectionError("refused")])
    _, error = await collect(FallbackChatClient(main, fallback).get_streaming_response("hi"))
    assert isinstance(error, ProviderConnectionError)
    assert "BackendUnavailableError" in "\n".join(getattr(error, "__notes__", []))


async def test_the_decision_can_be_narrowed() -> None:
    def outages_only(error: Any) -> bool:
        return isinstance(error, ProviderConnectionError | BackendUnavailableError)

    overflow = ContextLengthExceededError("too long", prompt_tokens=9000, context_window=4096)
    main, fallback = ScriptedClient(overflow), ScriptedClient(answer())
    client = FallbackChatClient(main, fallback, should_fall_back=outages_only)
    with pytest.raises(ContextLengthExceededError):
        await client.get_response("hi")
    assert fallback.calls == []


def test_the_default_decision_skips_only_local_configuration_mistakes() -> None:
    assert falls_back_on(unavailable())
    assert falls_back_on(AuthenticationError("bad key", status=401))
    assert falls_back_on(ContextLengthExceededError("too long"))
    assert not falls_back_on(ConfigurationError("bad timeout"))


async def test_cancellation_is_not_caught() -> None:
    main = ScriptedClient(asyncio.CancelledError())
    fallback = ScriptedClient(answer())
    with pytest.raises(asyncio.CancelledError):
        await FallbackChatClient(main, fallback).get_response("hi")
    assert fallback.calls == []


async def test_a_one_shot_message_iterable_reaches_the_fallback_intact() -> None:
    main = ScriptedClient(unavailable())
    fallback = ScriptedClient(answer())
    messages = (ChatMessage.user(m) for m in ["one", "two"])
    await FallbackChatClient(main, fallback).get_response(messages)
    assert [m.text for m in fallback.calls[0]] == ["one", "two"]


async def test_over_http_retry_runs_inside_the_main_backend_before_failing_over() -> None:
    """Two real client pipelines over one mocked transport: the main host answers 503 twice
    (retried once, then given up), the fallback host answers."""
    hosts: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        hosts.append(request.url.host)
        if request.url.host == "main.test":
            return httpx.Response(503, json={"error": {"message": "loading"}})
        body = json.loads(request.content)
        return httpx.Response(
            200,
            json={
                "id": "r",
                "model": body["model"],
                "choices": [{"index": 0, "message": {"content": "ok"}, "finish_reason": "stop"}],
            },
        )

    from providers.factory import create_chat_client

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
        policy = RetryPolicy(max_attempts=2, base_delay=0)
        main = create_chat_client("http://main.test/v1", "m", http_client=http, retry=policy)
        fallback = create_chat_client("http://fb.test/v1", "f", http_client=http, retry=policy)
        client = ChatClientBuilder(main).use_fallback(fallback, fallback_name="fb").build()
        response = await client.get_response("hi")
    assert hosts == ["main.test", "main.test", "fb.test"]
    assert response.text == "ok" and response.model_id == "f"
    assert response.additional_properties[ANSWERED_BY] == "fb"
    assert response.additional_properties[FALLBACK_REASON] == "BackendUnavailableError"


async def test_closing_closes_both() -> None:
    closed: list[str] = []

    class Closing(ScriptedClient):
        def __init__(self, name: str) -> None:
            super().__init__(answer())
            self.name = name

        async def aclose(self) -> None:
            closed.append(self.name)

    async with FallbackChatClient(Closing("a"), Closing("b")):
        pass
    assert closed == ["a", "b"]
