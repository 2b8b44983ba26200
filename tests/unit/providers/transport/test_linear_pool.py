"""The library's connection pool plans exactly as httpcore's own does, at a cost linear in its
connections (``providers.transport.linear_pool``).

Both pools are driven through scripted sequences (requests arrive, take their connection, end or
are cancelled; connections drop or expire) with scripted connections, and every plan is
compared: which connections stay, which are closed, which request goes where."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import httpcore
import httpx
import pytest
from httpcore._async.connection_pool import AsyncPoolRequest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from providers.transport.linear_pool import LinearConnectionPool, LinearHTTPProxy, use_linear_pool
from providers.transport.stale_connections import new_http_client


@dataclass
class _Calls:
    is_idle: int = 0


class _Scripted(httpcore.AsyncConnectionInterface):
    """A connection whose state the script sets: connecting, active, idle, expired, closed."""

    def __init__(self, number: int, origin: httpcore.Origin, multiplexed: bool, calls: _Calls):
        self.number = number
        self.origin = origin
        self.multiplexed = multiplexed  # HTTP/2-like: available while connecting or busy
        self.state = "connecting"
        self.calls = calls

    def can_handle_request(self, origin: httpcore.Origin) -> bool:
        return origin == self.origin

    def is_available(self) -> bool:
        busy = self.state in ("connecting", "active")
        return self.state == "idle" or (self.multiplexed and busy)

    def has_expired(self) -> bool:
        return self.state == "expired"

    def is_idle(self) -> bool:
        self.calls.is_idle += 1
        return self.state in ("idle", "expired")

    def is_closed(self) -> bool:
        return self.state == "closed"


@dataclass
class _Maker:
    multiplexed: bool
    calls: _Calls = field(default_factory=_Calls)
    made: list[_Scripted] = field(default_factory=list)

    def __call__(self, origin: httpcore.Origin) -> _Scripted:
        self.made.append(_Scripted(len(self.made), origin, self.multiplexed, self.calls))
        return self.made[-1]


def _pool(cls: type[httpcore.AsyncConnectionPool], most: int, kept: int, multiplexed: bool) -> Any:
    pool: Any = cls(max_connections=most, max_keepalive_connections=kept)
    pool.create_connection = _Maker(multiplexed)
    return pool


def _plan(pool: Any) -> tuple[list[int], list[int], list[int | None]]:
    """One re-plan of ``pool``: the connections it keeps, closes, and gives each request."""
    closing = pool._assign_requests_to_connections()
    for connection in closing:
        connection.state = "closed"  # what the pool's ``_close_connections`` then does
    return (
        [connection.number for connection in pool._connections],
        [connection.number for connection in closing],
        [None if r.connection is None else r.connection.number for r in pool._requests],
    )


def _step(pool: Any, op: str, n: int) -> tuple[list[int], list[int], list[int | None]] | None:
    """Applies one scripted event to ``pool``; answers its re-plan, or ``None`` for an event
    the pool does not see until its next re-plan (a connection that drops or expires)."""
    requests, made = pool._requests, pool.create_connection.made
    if op == "arrive":
        pool._requests.append(AsyncPoolRequest(httpcore.Request("GET", f"http://h{n % 3}/")))
    elif op in ("drop", "expire") and made:
        made[n % len(made)].state = "closed" if op == "drop" else "expired"
        return None
    elif requests and op == "send":
        request = requests[n % len(requests)]
        connection = request.connection
        if connection is not None:
            if connection.is_available() or connection.state == "connecting":
                connection.state = "active"
            else:
                request.clear_connection()  # httpcore's ConnectionNotAvailable path
    elif requests and op in ("end", "cancel"):
        request = requests.pop(n % len(requests))
        if op == "end" and request.connection is not None and request.connection.state == "active":
            request.connection.state = "idle"
    return _plan(pool)


_EVENTS = st.lists(
    st.tuples(
        st.sampled_from(["arrive", "send", "end", "cancel", "drop", "expire"]), st.integers(0, 50)
    ),
    max_size=120,
)


@settings(max_examples=300, deadline=None)
@example(  # two queued for one origin; the first's new connection can take the second too
    events=[("arrive", 0), ("send", 0), ("arrive", 1), ("arrive", 1), ("end", 0)],
    most=1,
    kept=0,
    multiplexed=True,
)
@given(
    events=_EVENTS,
    most=st.integers(1, 6),
    kept=st.integers(0, 6),
    multiplexed=st.booleans(),
)
def test_every_plan_is_httpcores(
    events: list[tuple[str, int]], most: int, kept: int, multiplexed: bool
) -> None:
    asyncio.run(_compare(events, most, kept, multiplexed))  # (a placed request sets an event)


async def _compare(events: list[tuple[str, int]], most: int, kept: int, multiplexed: bool) -> None:
    stock = _pool(httpcore.AsyncConnectionPool, most, kept, multiplexed)
    linear = _pool(LinearConnectionPool, most, kept, multiplexed)
    for op, n in events:
        assert _step(linear, op, n) == _step(stock, op, n), (op, n)
    assert [c.state for c in linear.create_connection.made] == [
        c.state for c in stock.create_connection.made
    ]


async def test_the_scripts_reach_every_kind_of_decision() -> None:
    """Short scripts through httpcore's pool open, reuse, queue, trim surplus idle
    connections, close expired ones and make room at the limit, so the sequences compared
    above (the same events, longer and random) meet every branch of the policy."""
    pool = _pool(httpcore.AsyncConnectionPool, 2, 1, False)
    script = [("arrive", 0), ("send", 0), ("arrive", 1), ("send", 1), ("arrive", 2)]
    assert [_step(pool, op, n) for op, n in script][-1] == ([0, 1], [], [0, 1, None])  # queued
    assert _step(pool, "end", 0) == ([1, 2], [0], [1, 2])  # a surplus idle one closed
    _step(pool, "send", 1)
    assert _step(pool, "end", 1) == ([1], [2], [1])
    assert _step(pool, "end", 0) == ([1], [], [])  # one idle connection kept
    assert _step(pool, "arrive", 1) == ([1], [], [1])  # and reused
    _step(pool, "cancel", 0)
    _step(pool, "expire", 1)
    assert _step(pool, "arrive", 1) == ([3], [1], [3])  # expired: closed, replaced
    roomy = _pool(httpcore.AsyncConnectionPool, 2, 2, False)
    script = [("arrive", 0), ("arrive", 1), ("send", 0), ("send", 1), ("end", 1)]
    assert [_step(roomy, op, n) for op, n in script][-1] == ([0, 1], [], [0])
    assert _step(roomy, "arrive", 2) == ([0, 2], [1], [0, 2])  # an idle one makes room


@pytest.mark.parametrize("pooled", [8, 32, 128])
async def test_a_plan_looks_at_each_connection_a_bounded_number_of_times(pooled: int) -> None:
    """A full pool of idle connections and as many requests queued for another origin: httpcore
    1.0.9 asks each connection ``is_idle`` about 2 x ``pooled`` times per plan (the comparison
    above shows the plans are the same); this pool asks each at most twice."""
    pool = _pool(LinearConnectionPool, pooled, pooled, False)
    for _ in range(pooled):
        connection = pool.create_connection(httpcore.Origin(b"http", b"h0", 80))
        connection.state = "idle"
        pool._connections.append(connection)
    for _ in range(pooled):
        pool._requests.append(AsyncPoolRequest(httpcore.Request("GET", "http://h1/")))
    calls = pool.create_connection.calls
    calls.is_idle = 0
    _, closing, given_to = _plan(pool)
    assert len(closing) == pooled and given_to == list(range(pooled, 2 * pooled))
    assert calls.is_idle <= 2 * pooled


@pytest.mark.parametrize(
    ("scheme", "proxy", "expected"),
    [
        ("http", None, LinearConnectionPool),
        ("https", None, LinearConnectionPool),
        ("http", "http://127.0.0.1:9", LinearHTTPProxy),
    ],
)
async def test_the_librarys_client_uses_the_linear_pool(
    scheme: str, proxy: str | None, expected: type
) -> None:
    async with new_http_client(proxy=proxy) as client:
        transport: Any = client._transport_for_url(httpx.URL(f"{scheme}://example.test/"))
        assert type(transport._inner.pool_for(scheme)._pool) is expected


def test_a_pool_not_shaped_as_expected_stays_httpcores_silently(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Should httpcore rename the state the override reads, the stock pool is kept: slower,
    the same plans, and nothing said about it."""
    transport: Any = httpx.AsyncHTTPTransport()
    del transport._pool._requests
    assert use_linear_pool(transport) is False
    assert type(transport._pool) is httpcore.AsyncConnectionPool
    assert capsys.readouterr() == ("", "")


def test_a_pool_of_another_kind_is_left_as_it_is() -> None:
    transport: Any = httpx.AsyncHTTPTransport()
    transport._pool = _pool(LinearConnectionPool, 1, 1, False)  # (e.g. a SOCKS pool)
    assert use_linear_pool(transport) is False
    assert type(transport._pool) is LinearConnectionPool
    plain: Any = httpx.AsyncHTTPTransport()
    assert use_linear_pool(plain) is True
    assert type(plain._pool) is LinearConnectionPool
