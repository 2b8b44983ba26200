"""Capability probes stay on the configured origin.

A probe carries the client's credentials (``Authorization``, and whatever extra headers the
caller configured, such as ``X-Api-Key``). A server, or something pretending to be one, that
redirects a probe to another origin must not receive them: the redirect is not followed and the
probe counts as absent. A redirect within the origin (``/props`` → ``/props/``) is followed.

Two loopback ``FaultServer``s on different ports are two origins.
"""

from __future__ import annotations

import json

import httpx
import pytest

from capabilities import OpenAiCompatibleCapabilityResolver, detect_backend, wait_until_ready
from providers import OpenAiCompatibleChatClient
from providers.transport.endpoint import Endpoint
from tests.faults.helpers import whole
from tests.faults.server import FaultServer, Reply

API_KEY = "sk-probe-secret-1234"
EXTRA = {"X-Api-Key": "extra-secret-5678"}
MODELS = json.dumps({"object": "list", "data": [{"id": "m", "owned_by": "vllm"}]}).encode()


def redirect(location: str, status: int = 302) -> Reply:
    return Reply(status, headers={"Location": location}, content_type="text/plain")


@pytest.mark.parametrize("status", [301, 302, 307, 308])
async def test_the_resolver_does_not_follow_a_redirect_to_another_origin(status: int) -> None:
    async with (
        FaultServer([whole(MODELS)]) as elsewhere,
        FaultServer([redirect(f"{elsewhere.base_url}/v1/models", status)]) as server,
        OpenAiCompatibleChatClient(f"{server.base_url}/v1", "m", API_KEY, headers=EXTRA) as client,
    ):
        caps = await client.get_capabilities()
    assert server.requests  # the probes were made…
    assert elsewhere.requests == []  # …and none left the origin
    assert caps.backend.value == "generic"


async def test_detection_with_a_redirecting_server_keeps_the_headers_at_home() -> None:
    headers = {"Authorization": f"Bearer {API_KEY}", **EXTRA}
    async with (
        FaultServer([whole(MODELS)]) as elsewhere,
        FaultServer([redirect(f"{elsewhere.base_url}/v1/models")]) as server,
        httpx.AsyncClient(follow_redirects=True) as http,
    ):
        found = await detect_backend(http, Endpoint.from_base_url(server.base_url), headers=headers)
    assert server.requests  # the probe did ask: the test would pass on no request at all
    assert elsewhere.requests == []
    assert found.backend == "generic"


async def test_readiness_does_not_follow_a_redirect_to_another_origin() -> None:
    async with (
        FaultServer([whole(b"{}")]) as elsewhere,
        FaultServer([redirect(f"{elsewhere.base_url}/health")]) as server,
        httpx.AsyncClient(follow_redirects=True) as http,
    ):
        endpoint = Endpoint.from_base_url(server.base_url)
        ready = await wait_until_ready(http, endpoint, budget_seconds=1, headers=EXTRA)
    assert elsewhere.requests == []
    assert ready.status == 302  # something answered: the server is up


async def test_a_redirect_within_the_origin_is_followed_with_the_headers() -> None:
    async with FaultServer([redirect("/llm/v1/models/"), whole(MODELS)]) as server:
        resolver = OpenAiCompatibleCapabilityResolver(
            f"{server.base_url}/llm/v1", api_key=API_KEY, headers=EXTRA
        )
        async with resolver:
            caps = await resolver.resolve("m")
    assert caps.backend.value == "vllm"
    first, second = server.requests[:2]
    assert (first.path, second.path) == ("/llm/v1/models", "/llm/v1/models/")
    assert second.headers["authorization"] == f"Bearer {API_KEY}"
    assert second.headers["x-api-key"] == EXTRA["X-Api-Key"]


async def test_a_redirect_from_http_to_https_on_the_same_host_is_another_origin() -> None:
    seen: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        if request.url.scheme == "http":
            target = request.url.copy_with(scheme="https")
            return httpx.Response(302, headers={"Location": str(target)})
        return httpx.Response(200, content=MODELS, headers={"Content-Type": "application/json"})

    async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as http:
        resolver = OpenAiCompatibleCapabilityResolver(
            "http://gpu.test/v1", http_client=http, api_key=API_KEY
        )
        caps = await resolver.resolve("m")
    assert seen
    assert not [url for url in seen if url.startswith("https:")]
    assert caps.backend.value == "generic"
