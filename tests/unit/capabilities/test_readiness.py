"""``wait_until_ready``: llama.cpp's 503 "Loading model" waited out within a budget."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest
import respx
from structlog.testing import capture_logs

from capabilities import events, wait_until_ready
from providers.abstractions.errors import BackendUnavailableError
from providers.transport.endpoint import Endpoint
from tests.unit.capabilities.fakes import discovery

ENDPOINT = Endpoint.from_base_url("http://gpu.test/llm/v1")
HEALTH = "http://gpu.test/llm/health"
HEALTHY = discovery("llamacpp", "qwen25-plain")["/health"]
LOADING = httpx.Response(
    503,
    json={"error": {"message": "Loading model", "type": "unavailable_error", "code": 503}},
    headers={"Server": "llama.cpp"},
)


def healthy() -> httpx.Response:
    return httpx.Response(HEALTHY.status, content=HEALTHY.body, headers=HEALTHY.headers)


async def test_loading_is_waited_out() -> None:
    with respx.mock() as router, capture_logs() as logs:
        route = router.get(HEALTH).mock(side_effect=[LOADING, LOADING, healthy()])
        async with httpx.AsyncClient() as http:
            ready = await wait_until_ready(http, ENDPOINT, budget_seconds=5, poll_interval=0.01)
        assert route.call_count == 3
    assert (ready.attempts, ready.status) == (3, 200)
    assert [e["event"] for e in logs] == [events.BACKEND_NOT_READY, events.BACKEND_READY]
    assert logs[0]["status"] == 503


async def test_a_ready_server_costs_one_request_and_logs_nothing() -> None:
    with respx.mock() as router, capture_logs() as logs:
        router.get(HEALTH).mock(side_effect=[healthy()])
        async with httpx.AsyncClient() as http:
            ready = await wait_until_ready(http, ENDPOINT, budget_seconds=1)
    assert ready.attempts == 1
    assert logs == []


async def test_the_budget_running_out_is_a_clear_error() -> None:
    with respx.mock() as router:
        router.get(HEALTH).mock(return_value=LOADING)
        started = time.monotonic()
        async with httpx.AsyncClient() as http:
            with pytest.raises(BackendUnavailableError) as caught:
                await wait_until_ready(http, ENDPOINT, budget_seconds=0.3, poll_interval=0.05)
        elapsed = time.monotonic() - started
    message = str(caught.value)
    assert "not ready after waiting" in message
    assert "budget 0.3 s" in message
    assert "HTTP 503 'Loading model'" in message
    assert HEALTH in message
    assert caught.value.status == 503
    assert 0.3 <= elapsed < 2.0


async def test_connection_refused_counts_as_not_yet() -> None:
    # vLLM does not listen until its model is loaded (docs/wire.md §1.2).
    with respx.mock() as router:
        router.get(HEALTH).mock(side_effect=[httpx.ConnectError("refused"), healthy()])
        async with httpx.AsyncClient() as http:
            ready = await wait_until_ready(http, ENDPOINT, budget_seconds=5, poll_interval=0.01)
    assert ready.attempts == 2


async def test_nothing_ever_answering_says_so() -> None:
    with respx.mock() as router:
        router.get(HEALTH).mock(side_effect=httpx.ConnectError("refused"))
        async with httpx.AsyncClient() as http:
            with pytest.raises(BackendUnavailableError, match="ConnectError") as caught:
                await wait_until_ready(http, ENDPOINT, budget_seconds=0.1, poll_interval=0.02)
    assert caught.value.status is None


@pytest.mark.parametrize("status", [200, 401, 404])
async def test_any_other_answer_means_the_server_is_up(status: int) -> None:
    # 401: the key is wrong but the server is there; 404: a server without /health.
    with respx.mock() as router:
        router.get(HEALTH).respond(status)
        async with httpx.AsyncClient() as http:
            ready = await wait_until_ready(http, ENDPOINT, budget_seconds=1)
    assert ready.status == status


async def test_a_hanging_health_check_is_bounded_by_the_budget() -> None:
    async def hang(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(10)
        return healthy()

    # Cancelled mid-way, the route never counts as called.
    with respx.mock(assert_all_called=False) as router:
        router.get(HEALTH).mock(side_effect=hang)
        started = time.monotonic()
        async with httpx.AsyncClient() as http:
            with pytest.raises(BackendUnavailableError, match="TimeoutError"):
                await wait_until_ready(
                    http, ENDPOINT, budget_seconds=0.3, poll_interval=0.05, probe_timeout=5
                )
    assert time.monotonic() - started < 2.0
