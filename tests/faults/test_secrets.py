"""Credentials stay secret: a password in ``base_url`` and the API key never reach a repr, an
error, a structlog event or httpx's own log line, and a key the caller cannot send is refused at
construction with a message that names the problem, not the key.

Against the loopback ``FaultServer``, so the request really carries the credentials and the
server really echoes them back.
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import socket
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from structlog.testing import capture_logs

from capabilities import OpenAiCompatibleCapabilityResolver, wait_until_ready
from providers import (
    AuthenticationError,
    BackendUnavailableError,
    ConfigurationError,
    InvalidResponseError,
    ModelNotFoundError,
    OpenAiCompatibleChatClient,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    ServerError,
)
from providers.chat_completions.client import Timeouts
from providers.responses import OpenAiCompatibleResponsesClient
from providers.transport.endpoint import Endpoint
from tests.faults.helpers import HELLO, PROMPT, consume, error_reply, stream_reply, whole
from tests.faults.server import FaultServer, Reply

PASSWORD = "hunter2-pw-7c1e"
API_KEY = "sk-live-0123456789abcdef"
# Generous enough that a loaded machine does not time out an error reply; the stall case waits
# out the first-token budget, so it stays a few seconds.
FAST = Timeouts(connect=5, first_token=2.0, idle=2.0, total=4.0)

Client = OpenAiCompatibleChatClient | OpenAiCompatibleResponsesClient
KINDS = ["chat", "responses"]


def with_password(server: FaultServer) -> str:
    return f"http://user:{PASSWORD}@127.0.0.1:{server.port}/v1"


def make(kind: str, base_url: str, api_key: str | None = None, **kwargs: Any) -> Client:
    cls = OpenAiCompatibleChatClient if kind == "chat" else OpenAiCompatibleResponsesClient
    return cls(base_url, "m", api_key, timeouts=FAST, **kwargs)


def assert_clean(error: ProviderError, *secrets: str) -> None:
    texts = [str(error), error.user_message, error.body or "", repr(error.args)]
    for secret in secrets:
        for text in texts:
            assert secret not in text


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


@pytest.fixture
def httpx_log(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    with caplog.at_level(logging.DEBUG, logger="httpx"):
        yield caplog


# --- a password in base_url ---------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_repr_hides_the_password(kind: str) -> None:
    client = make(kind, f"http://user:{PASSWORD}@gpu.test:8080/llm/v1", API_KEY)
    assert PASSWORD not in repr(client)
    assert API_KEY not in repr(client)
    assert "gpu.test:8080/llm/v1" in repr(client)
    endpoint = Endpoint.from_base_url(f"http://user:{PASSWORD}@gpu.test/v1")
    assert PASSWORD not in repr(endpoint)
    assert PASSWORD not in endpoint.display
    assert endpoint.display == "http://gpu.test/v1"
    resolver = OpenAiCompatibleCapabilityResolver(f"http://user:{PASSWORD}@gpu.test/v1")
    assert PASSWORD not in repr(resolver)


@pytest.mark.parametrize("kind", KINDS)
async def test_the_password_authenticates_but_httpx_never_logs_it(
    kind: str, httpx_log: pytest.LogCaptureFixture
) -> None:
    body = stream_reply(*HELLO) if kind == "chat" else error_reply(500, {"error": "x"})
    async with FaultServer([body]) as server, make(kind, with_password(server)) as client:
        await consume(client.get_streaming_response(PROMPT))  # an error is returned, not raised
    assert server.requests[0].headers["authorization"] == basic("user", PASSWORD)
    lines = [record.getMessage() for record in httpx_log.records]
    assert any("HTTP Request" in line for line in lines)
    assert not [line for line in lines if PASSWORD in line]


async def test_an_api_key_wins_over_the_password_in_the_url() -> None:
    """Decision: both are credentials for the Authorization header, which holds one; the
    explicit ``api_key`` wins and the user info is not sent (httpx used to send the user info,
    silently dropping the key)."""
    async with (
        FaultServer([whole()]) as server,
        make("chat", with_password(server), API_KEY) as client,
    ):
        await client.get_response(PROMPT)
    assert server.requests[0].headers["authorization"] == f"Bearer {API_KEY}"


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (error_reply(401, {"error": {"message": "no", "type": "auth"}}), AuthenticationError),
        (error_reply(500, {"error": {"message": "boom"}}), ServerError),
        (
            error_reply(404, {"error": {"message": "The model `m` does not exist."}}),
            ModelNotFoundError,
        ),
        (Reply(pieces=[], end="stall"), ProviderTimeoutError),
    ],
    ids=["401", "500", "model-404", "first-token-timeout"],
)
async def test_errors_never_quote_the_password(
    kind: str, reply: Reply, expected: type[ProviderError]
) -> None:
    async with FaultServer([reply]) as server, make(kind, with_password(server)) as client:
        for streaming in (True, False):
            if streaming:
                _, error = await consume(client.get_streaming_response(PROMPT))
            else:
                with pytest.raises(ProviderError) as caught:
                    await client.get_response(PROMPT)
                error = caught.value
            assert isinstance(error, expected), error
            assert_clean(error, PASSWORD)


@pytest.mark.parametrize("kind", KINDS)
async def test_connection_refused_never_quotes_the_password(kind: str) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    async with make(kind, f"http://user:{PASSWORD}@127.0.0.1:{port}") as client:
        with pytest.raises(ProviderConnectionError) as caught:
            await client.get_response(PROMPT)
        assert_clean(caught.value, PASSWORD)
        with capture_logs() as logs:
            await client.get_capabilities()
    assert logs
    assert PASSWORD not in repr(logs)


async def test_capability_events_and_readiness_never_carry_the_password(
    httpx_log: pytest.LogCaptureFixture,
) -> None:
    models = json.dumps({"object": "list", "data": [{"id": "m", "owned_by": "vllm"}]}).encode()
    async with FaultServer([whole(models)]) as server:
        async with make("chat", with_password(server), validate_model=True) as client:
            with capture_logs() as logs:
                caps = await client.get_capabilities()
                with contextlib.suppress(InvalidResponseError):  # a listing is no completion
                    await client.get_response(PROMPT)  # validate_model: readiness, the check
        assert caps.backend.value == "vllm"
        assert {"oaicompat.capabilities.backend_detected", "oaicompat.capabilities.resolved"} <= {
            e["event"] for e in logs
        }
        assert PASSWORD not in repr(logs)
        assert PASSWORD not in json.dumps(caps.to_dict())
        # Every request, probes included, authenticated with the user info.
        assert {r.headers.get("authorization") for r in server.requests} == {
            basic("user", PASSWORD)
        }
    assert not [r for r in httpx_log.records if PASSWORD in r.getMessage()]


async def test_readiness_waiting_and_its_error_never_carry_the_password() -> None:
    loading = error_reply(503, {"error": {"message": "Loading model", "code": 503}})
    async with FaultServer([loading]) as server, httpx.AsyncClient() as http:
        endpoint = Endpoint.from_base_url(with_password(server))
        with capture_logs() as logs, pytest.raises(BackendUnavailableError) as caught:
            await wait_until_ready(http, endpoint, budget_seconds=0.3, poll_interval=0.05)
    assert [e["event"] for e in logs] == ["oaicompat.capabilities.backend_not_ready"]
    assert PASSWORD not in repr(logs)
    assert_clean(caught.value, PASSWORD)
    assert server.requests[0].headers["authorization"] == basic("user", PASSWORD)


# --- the API key --------------------------------------------------------------------------------

ECHO = {
    "error": {
        "message": f"Incorrect API key provided: {API_KEY}. You can find your API key at x.",
        "type": "invalid_request_error",
        "code": "invalid_api_key",
    }
}


@pytest.mark.parametrize("kind", KINDS)
async def test_a_key_the_server_echoes_is_masked(kind: str) -> None:
    async with (
        FaultServer([error_reply(401, ECHO)]) as server,
        make(kind, server.base_url, API_KEY) as client,
    ):
        _, streamed = await consume(client.get_streaming_response(PROMPT))
        with pytest.raises(AuthenticationError) as caught:
            await client.get_response(PROMPT)
    for error in (streamed, caught.value):
        assert isinstance(error, AuthenticationError)
        assert_clean(error, API_KEY)
        assert "Incorrect API key provided" in str(error)
        assert error.code == "invalid_api_key"


async def test_a_password_the_server_echoes_is_masked() -> None:
    echo = {"error": {"message": f"user 'user' with password '{PASSWORD}' is not allowed"}}
    async with (
        FaultServer([error_reply(403, echo)]) as server,
        make("chat", with_password(server)) as client,
    ):
        with pytest.raises(ProviderError) as caught:
            await client.get_response(PROMPT)
    assert_clean(caught.value, PASSWORD)
    assert "is not allowed" in str(caught.value)


@pytest.mark.parametrize("kind", KINDS)
async def test_a_key_echoed_in_an_error_inside_the_stream_is_masked(kind: str) -> None:
    """An error event mid-stream (HTTP 200, ``data: {"error": …}``) quoting the API key: no
    status-error path masked it before it was parsed."""
    message = f"Incorrect API key provided: {API_KEY}"
    event = json.dumps({"error": {"message": message, "type": "invalid_request_error"}})
    reply = stream_reply(f"data: {event}\n\n".encode())
    async with (
        FaultServer([reply]) as server,
        make(kind, server.base_url, API_KEY) as client,
    ):
        _, error = await consume(client.get_streaming_response(PROMPT))
    assert error is not None
    assert_clean(error, API_KEY)
    assert "Incorrect API key provided" in str(error)


BAD_KEYS = {
    "crlf": "sk-abc\r\nX-Injected: 1",
    "lf": "sk-abc\nsecond-line",
    "nul": "sk-abc\x00def",
    "non-ascii": "sk-clé-secrète",
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("key", BAD_KEYS.values(), ids=BAD_KEYS.keys())
def test_a_key_that_cannot_be_sent_is_refused_at_construction(kind: str, key: str) -> None:
    with pytest.raises(ConfigurationError, match="api_key") as caught:
        make(kind, "http://127.0.0.1:9/v1", key)
    message = str(caught.value)
    assert "sk-" not in message
    assert "secr" not in message
    message.encode("ascii")


@pytest.mark.parametrize("key", BAD_KEYS.values(), ids=BAD_KEYS.keys())
def test_the_resolver_refuses_such_a_key_too(key: str) -> None:
    with pytest.raises(ConfigurationError, match="api_key"):
        OpenAiCompatibleCapabilityResolver("http://127.0.0.1:9/v1", api_key=key)


@pytest.mark.parametrize("kind", KINDS)
def test_a_header_value_that_cannot_be_sent_is_refused_by_name(kind: str) -> None:
    with pytest.raises(ConfigurationError, match="X-Api-Key") as caught:
        make(kind, "http://127.0.0.1:9/v1", headers={"X-Api-Key": "k-123\r\nEvil: 1"})
    assert "k-123" not in str(caught.value)
