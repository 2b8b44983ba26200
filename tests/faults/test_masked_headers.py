"""What a server echoes of the request's headers never reaches an error (issue 32, item 3).

Only header names holding key/token/secret/password/auth were masked, so a ``Cookie`` a server
quoted in its 401 body came back in ``str(error)``. Now every per-request header value is masked
(only its caller knows what it means), cookies are credentials (and each cookie's value is
masked on its own, since servers quote the session id, not the header), and the configuration
may name more credential headers for the client's own (``sensitive_headers``). Against the
loopback ``FaultServer``, which really receives the headers and really echoes them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from providers import ChatOptions, OpenAiCompatibleChatClient, ProviderError
from providers.config import client_for, load_config
from providers.responses import OpenAiCompatibleResponsesClient
from tests.faults.helpers import FAST, consume, error_reply, stream_reply
from tests.faults.server import FaultServer, Reply, sse

SESSION = "sess-0a1b2c3d4e"
COOKIE = f"session={SESSION}; theme=solarized-dark"
TENANT = "tenant-9f8e7d"
KINDS = ["chat", "responses"]


def echo(*quoted: str, status: int = 401) -> Reply:
    """An error answer quoting ``quoted`` back, as gateways do ("invalid session …")."""
    message = "rejected: " + " / ".join(quoted) + f" (cookie {SESSION} expired)"
    return error_reply(status, {"error": {"message": message, "type": "invalid_request_error"}})


def make(kind: str, base_url: str, **kwargs: Any) -> Any:
    cls = OpenAiCompatibleChatClient if kind == "chat" else OpenAiCompatibleResponsesClient
    return cls(f"{base_url}/v1", "m", "sk-own-key-1234", timeouts=FAST, **kwargs)


def texts_of(error: ProviderError) -> str:
    notes = getattr(error, "__notes__", [])
    return "\n".join([str(error), repr(error), error.user_message, str(error.body), *notes])


async def failure(client: Any, streamed: bool, options: ChatOptions | None) -> ProviderError:
    async with client:
        if streamed:
            _, error = await consume(client.get_streaming_response("hi", options))
            assert error is not None
            return error
        with pytest.raises(ProviderError) as caught:
            await client.get_response("hi", options)
        return caught.value


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("streamed", [False, True])
async def test_a_per_request_cookie_and_every_other_header_value_are_masked(
    kind: str, streamed: bool
) -> None:
    headers = {"Cookie": COOKIE, "X-Tenant-Id": TENANT}
    async with FaultServer([echo(COOKIE, TENANT)]) as server:
        error = await failure(make(kind, server.base_url), streamed, ChatOptions(headers=headers))
    assert server.requests[0].headers["cookie"] == COOKIE  # it was sent…
    shown = texts_of(error)
    assert "<redacted>" in shown
    for secret in (COOKIE, SESSION, TENANT):  # …and nothing of it comes back
        assert secret not in shown


@pytest.mark.parametrize("kind", KINDS)
async def test_the_clients_own_cookie_and_configured_headers_are_masked(kind: str) -> None:
    own = {"Cookie": COOKIE, "X-Tenant": TENANT}
    async with FaultServer([echo(COOKIE, TENANT)]) as server:
        client = make(kind, server.base_url, headers=own, sensitive_headers=["X-Tenant"])
        error = await failure(client, False, None)
    shown = texts_of(error)
    for secret in (COOKIE, SESSION, TENANT):
        assert secret not in shown


async def test_a_cookie_echoed_inside_the_stream_is_masked() -> None:
    event = {"error": {"message": f"session cookie {SESSION} was revoked", "code": 401}}
    async with FaultServer([stream_reply(sse(event))]) as server:
        client = make("chat", server.base_url)
        error = await failure(client, True, ChatOptions(headers={"Cookie": COOKIE}))
    assert SESSION not in texts_of(error)


async def test_yaml_sensitive_headers_reach_the_client(tmp_path: Path) -> None:
    async with FaultServer([echo(TENANT)]) as server:
        path = tmp_path / "oaicompat.yaml"
        path.write_text(
            json.dumps(
                {
                    "defaults": {"retry": {"max_attempts": 1}, "sensitive_headers": ["x-tenant"]},
                    "backends": {"b": {"base_url": server.base_url, "model_id": "m"}},
                }
            ),
            encoding="utf-8",
        )
        client = client_for(load_config(path), "b", headers={"X-Tenant": TENANT})
        error = await failure(client, False, None)
    assert TENANT not in texts_of(error)
