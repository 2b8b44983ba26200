"""httpcore's connection pool, with bookkeeping whose cost grows linearly with the pool.

httpcore's ``AsyncConnectionPool`` re-plans its connections every time a request starts, ends or
is cancelled (``_assign_requests_to_connections``). In httpcore 1.0.9 that plan costs, per call,
one pool-sized list for every idle connection (it counts the pool by building a list of each
connection's ``is_idle()``), and two pool-sized lists for every queued request: n² calls for n
pooled connections. In a 200-stream burst through ``oaicompat serve`` it was 4.8 of the gateway's
7.7 CPU seconds (cProfile, ``benchmarks/README.md``, issue 35), and every request waited for it.

``LinearConnectionPool`` makes the same decisions in one pass over the pool per call, plus one
step per queued request. httpcore's policy, kept as it is (``test_linear_pool.py`` runs scripted
sequences through both and compares every decision):

1. Tidying, in pool order: a closed connection leaves the pool; an expired one leaves and is
   closed; an idle one leaves and is closed while the pool still holds more than
   ``max_keepalive_connections`` connections (counting every connection still in it, busy or
   not, as httpcore does).
2. Placing, oldest queued request first: the first connection in pool order that takes the
   request's origin and is available; else a new connection, while the pool holds fewer than
   ``max_connections``; else the first idle connection is closed and a new one takes its place;
   else the request stays queued. Nothing here changes a connection's state, so two queued
   requests can be given one available connection; the second meets ``ConnectionNotAvailable``
   when it tries to send and is placed again, as with httpcore's own pool.

``use_linear_pool`` re-classes the pool an ``httpx.AsyncHTTPTransport`` made (so every argument
httpx gave it stays as it was), in this one place: it is a private attribute of httpx, and the
override leans on httpcore's private state. If either is not what this module expects, the
transport keeps httpcore's own pool, which is slower and otherwise the same.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpcore
import httpx

if TYPE_CHECKING:
    from httpcore._async.connection_pool import AsyncPoolRequest

__all__ = ["LinearConnectionPool", "LinearHTTPProxy", "use_linear_pool"]

Connection = httpcore.AsyncConnectionInterface


class LinearConnectionPool(httpcore.AsyncConnectionPool):
    """An ``httpcore.AsyncConnectionPool`` whose re-planning costs one pass over its
    connections, whatever their number."""

    def _assign_requests_to_connections(self) -> list[Connection]:
        closing, idle = self._tidy()
        queued = [pool_request for pool_request in self._requests if pool_request.is_queued()]
        if queued:
            self._place(queued, idle, closing)
        return closing

    def _tidy(self) -> tuple[list[Connection], list[Connection]]:
        """Drops closed and expired connections and surplus idle ones (rule 1); answers the
        connections to close and the idle ones that stay, in pool order."""
        closing: list[Connection] = []
        idle: list[Connection] = []
        staying: list[Connection] = []
        held = len(self._connections)  # what the pool holds at each step of the walk
        for connection in self._connections:
            if connection.is_closed():
                held -= 1
            elif connection.has_expired():
                held -= 1
                closing.append(connection)
            elif connection.is_idle():
                if held > self._max_keepalive_connections:
                    held -= 1
                    closing.append(connection)
                else:
                    idle.append(connection)
                    staying.append(connection)
            else:
                staying.append(connection)
        self._connections = staying
        return closing, idle

    def _place(
        self, queued: list[AsyncPoolRequest], idle: list[Connection], closing: list[Connection]
    ) -> None:
        """Gives each queued request a connection (rule 2). ``idle`` is consumed from the
        front (a connection made here is still connecting, so never idle); ``closing`` gains
        the idle connections closed to make room."""
        # Per origin, the first available connection that takes it. Placing a request changes
        # no connection, so an answer holds until a connection joins or leaves the pool.
        first_available: dict[tuple[bytes, bytes, int], Connection | None] = {}
        next_idle = 0
        for pool_request in queued:
            origin = pool_request.request.url.origin
            key = (origin.scheme, origin.host, origin.port)
            if key not in first_available:
                first_available[key] = self._first_available(origin)
            connection = first_available[key]
            if connection is None:
                if len(self._connections) >= self._max_connections:
                    if next_idle == len(idle):
                        continue  # stays queued until a connection frees up
                    making_room = idle[next_idle]
                    next_idle += 1
                    self._connections.remove(making_room)
                    closing.append(making_room)
                    _forget(first_available, making_room)
                connection = self.create_connection(origin)
                self._connections.append(connection)
                if connection.is_available():  # (an HTTP/2-capable one can take more)
                    first_available = {k: v for k, v in first_available.items() if v is not None}
            pool_request.assign_to_connection(connection)

    def _first_available(self, origin: httpcore.Origin) -> Connection | None:
        for connection in self._connections:
            if connection.can_handle_request(origin) and connection.is_available():
                return connection
        return None


class LinearHTTPProxy(LinearConnectionPool, httpcore.AsyncHTTPProxy):
    """httpcore's HTTP(S) proxy pool (``proxies.py``'s routes), with the same bookkeeping."""


def _forget(
    first_available: dict[tuple[bytes, bytes, int], Connection | None], leaving: Connection
) -> None:
    for key in [key for key, connection in first_available.items() if connection is leaving]:
        del first_available[key]


_LINEAR: dict[type, type] = {
    httpcore.AsyncConnectionPool: LinearConnectionPool,
    httpcore.AsyncHTTPProxy: LinearHTTPProxy,
}
"""The pool classes httpx makes, and the replacement for each. (A SOCKS pool stays as it is.)"""

_STATE = ("_connections", "_requests", "_max_connections", "_max_keepalive_connections")
"""The pool's state the override reads; httpcore 1.0 has kept these names since 1.0.0."""


def use_linear_pool(transport: httpx.AsyncHTTPTransport) -> bool:
    """Gives ``transport`` the linear bookkeeping; answers whether it did. The transport must
    not have sent a request yet."""
    pool = getattr(transport, "_pool", None)
    linear = _LINEAR.get(type(pool))
    if linear is None or not _as_expected(pool):
        return False
    pool.__class__ = linear
    return True


def _as_expected(pool: object) -> bool:
    """Whether ``pool`` has the state and the method the override replaces, as httpcore 1.0.9
    does: a list of connections, a list of queued requests, and the two limits as ints."""
    if not callable(getattr(type(pool), "_assign_requests_to_connections", None)):
        return False
    if not all(hasattr(pool, name) for name in _STATE):
        return False
    connections, requests, most, kept = (getattr(pool, name) for name in _STATE)
    return (
        type(connections) is list
        and type(requests) is list
        and not connections
        and isinstance(most, int)
        and isinstance(kept, int)
    )
