"""Per-request credentials stay at the origin they were given for (issue 32, item 2).

``ChatOptions.headers`` holding ``Authorization``, ``X-Api-Key``, ``Cookie`` or a header the
configuration names (``sensitive_headers``) were resent to the fallback backend at another
origin. Now the fallback gets its own configured key and the other per-request headers, and the
chat path follows no redirect (whatever a borrowed client's ``follow_redirects`` says), so a
server cannot send them elsewhere either. Two loopback ``FaultServer``s on different ports are
two origins; the same server behind two clients is one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from structlog.testing import capture_logs

from providers import (
    ChatOptions,
    FallbackChatClient,
    InvalidResponseError,
    OpenAiCompatibleChatClient,
)
from providers.config import client_for, load_config
from providers.layers.fallback import CREDENTIALS_DROPPED_EVENT
from providers.responses import OpenAiCompatibleResponsesClient
from tests.faults.helpers import FAST, HELLO, consume, error_reply, stream_reply, whole
from tests.faults.server import FaultServer, Reply

MAIN_KEY = "sk-main-0000aaaa"
FALLBACK_KEY = "sk-fallback-1111bbbb"
PER_REQUEST = {
    "Authorization": "Bearer user-token-2222cccc",
    "X-Api-Key": "user-apikey-3333dddd",
    "Cookie": "session=user-session-4444eeee",
    "X-Tenant": "tenant-secret-5555ffff",
    "X-Trace-Id": "trace-6666",
}
SECRETS = [v for k, v in PER_REQUEST.items() if k != "X-Trace-Id"]
FAILED = error_reply(503, {"error": {"message": "overloaded", "type": "server_error"}})


def wire(server: FaultServer, key: str, **kwargs: Any) -> OpenAiCompatibleChatClient:
    return OpenAiCompatibleChatClient(f"{server.base_url}/v1", "m", key, timeouts=FAST, **kwargs)


def assert_kept_home(fallback: FaultServer) -> None:
    [request] = fallback.requests
    assert request.headers["authorization"] == f"Bearer {FALLBACK_KEY}"  # its own key
    assert request.headers["x-trace-id"] == "trace-6666"  # not a credential: it goes along
    sent = repr(request.headers)
    assert not [secret for secret in SECRETS if secret in sent]


@pytest.mark.parametrize("streamed", [False, True])
async def test_the_fallback_at_another_origin_gets_its_own_key_not_the_callers(
    streamed: bool,
) -> None:
    async with (
        FaultServer([FAILED]) as main_server,
        FaultServer([stream_reply(*HELLO) if streamed else whole()]) as fallback_server,
    ):
        client = FallbackChatClient(
            wire(main_server, MAIN_KEY, sensitive_headers=["X-Tenant"]),
            wire(fallback_server, FALLBACK_KEY),
        )
        options = ChatOptions(headers=PER_REQUEST)
        with capture_logs() as events:
            async with client:
                if streamed:
                    updates, error = await consume(client.get_streaming_response("hi", options))
                    assert error is None
                    assert "".join(u.text for u in updates) == "Hello"
                else:
                    assert (await client.get_response("hi", options)).text == "Hello"
    assert main_server.requests[0].headers["cookie"] == PER_REQUEST["Cookie"]  # given for main
    assert_kept_home(fallback_server)
    [dropped] = [e for e in events if e["event"] == CREDENTIALS_DROPPED_EVENT]
    assert dropped["headers"] == sorted(["Authorization", "Cookie", "X-Api-Key", "X-Tenant"])
    assert not [secret for secret in SECRETS if secret in repr(events)]


async def test_without_configuration_the_named_credentials_stay_home() -> None:
    headers = {k: v for k, v in PER_REQUEST.items() if k != "X-Tenant"}
    async with FaultServer([FAILED]) as main_server, FaultServer([whole()]) as fallback_server:
        main, fallback = wire(main_server, MAIN_KEY), wire(fallback_server, FALLBACK_KEY)
        async with FallbackChatClient(main, fallback) as client:
            await client.get_response("hi", ChatOptions(headers=headers))
    assert_kept_home(fallback_server)


async def test_a_fallback_at_the_same_origin_gets_the_same_headers() -> None:
    async with FaultServer([FAILED, whole()]) as server:
        main = wire(server, MAIN_KEY)
        fallback = OpenAiCompatibleChatClient(f"{server.base_url}/v1", "other-model", FALLBACK_KEY)
        async with FallbackChatClient(main, fallback) as client:
            await client.get_response("hi", ChatOptions(headers=PER_REQUEST))
    assert server.requests[1].headers["cookie"] == PER_REQUEST["Cookie"]
    assert server.requests[1].headers["authorization"] == PER_REQUEST["Authorization"]


async def test_a_configured_role_fallback_keeps_the_credentials_home(tmp_path: Path) -> None:
    async with FaultServer([FAILED]) as main_server, FaultServer([whole()]) as fallback_server:
        path = tmp_path / "oaicompat.yaml"
        path.write_text(
            "defaults: {retry: {max_attempts: 1}, sensitive_headers: [x-tenant]}\n"
            "backends:\n"
            f"  a: {{base_url: '{main_server.base_url}', model_id: m, api_key: {MAIN_KEY}}}\n"
            f"  b: {{base_url: '{fallback_server.base_url}', model_id: m,"
            f" api_key: {FALLBACK_KEY}}}\n"
            "roles: {main: a, fallback: b}\n",
            encoding="utf-8",
        )
        client = client_for(load_config(path), "main")
        try:
            await client.get_response("hi", ChatOptions(headers=PER_REQUEST))
        finally:
            await client.aclose()
    assert_kept_home(fallback_server)


# --- redirects on the chat path --------------------------------------------------------------


def redirect(location: str, status: int) -> Reply:
    return Reply(status, headers={"Location": location}, content_type="text/plain")


@pytest.mark.parametrize("api", ["chat", "responses"])
@pytest.mark.parametrize("streamed", [False, True])
@pytest.mark.parametrize("status", [302, 307, 308])
async def test_a_redirect_to_another_origin_is_not_followed_even_by_a_following_client(
    api: str, streamed: bool, status: int
) -> None:
    path = "/v1/chat/completions" if api == "chat" else "/v1/responses"
    async with (
        FaultServer([whole()]) as elsewhere,
        FaultServer([redirect(f"{elsewhere.base_url}{path}", status)]) as server,
        httpx.AsyncClient(follow_redirects=True) as http,
    ):
        cls = OpenAiCompatibleChatClient if api == "chat" else OpenAiCompatibleResponsesClient
        client = cls(f"{server.base_url}/v1", "m", MAIN_KEY, http_client=http, timeouts=FAST)
        options = ChatOptions(headers=PER_REQUEST)
        with pytest.raises(InvalidResponseError):
            if streamed:
                async for _ in client.get_streaming_response("hi", options):
                    pass
            else:
                await client.get_response("hi", options)
    assert server.attempts == 1
    assert elsewhere.requests == []  # nothing, and so no header, left the origin
