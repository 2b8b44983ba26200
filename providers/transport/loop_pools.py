"""A wire client's own connection pools: one ``httpx.AsyncClient`` per event loop that uses it.

A pooled connection belongs to the event loop that opened it: its socket is registered with that
loop's selector and its transport calls back into that loop. Carried into another loop (a script
calling ``asyncio.run`` twice, a test's fresh loop, a ``SyncChatClient`` beside the caller's own
loop) the reused connection fails with asyncio's bare ``RuntimeError('Event loop is closed')``.
So a client keeps one pool per loop, made on the loop's first request.

A pool must also end with its loop, and while that loop still runs, since closing a connection
awaits its transport. asyncio gives no hook on a loop's end, but every loop that ends properly
(``asyncio.run``, ``asyncio.Runner``, ``SyncChatClient``'s thread) first closes the async
generators it has seen (``shutdown_asyncgens``). Each pool is therefore watched by a small async
generator, started on its loop (which registers it) and suspended until then: its ``finally``
closes the pool on the still-running loop. ``aclose()`` closes the calling loop's pool the same
way, and asks the other running loops to close theirs.

A loop closed without that shutdown (one made and closed by hand) leaves its pool's sockets
open, and asyncio has no public way to close a transport whose loop has gone. Such a pool is
released when the client next meets a new loop, is closed, or is collected: its sockets are
closed through the transports' own cleanup (``_release_sockets``), never through the dead loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import weakref
from collections.abc import AsyncGenerator, Callable

import httpx

from providers.transport.deferred_tls import DeferredTlsTransport

__all__ = ["LoopPools"]


class _Pool:
    __slots__ = ("abandoned", "http", "keeper", "loop")

    def __init__(self, http: httpx.AsyncClient, loop: asyncio.AbstractEventLoop) -> None:
        self.http = http
        self.loop = loop
        self.abandoned = False
        self.keeper: AsyncGenerator[None, None] | None = None


class _Registry:
    """The pools by loop. Apart from ``LoopPools`` so that the watchers, which refer to it,
    do not keep the client's ``LoopPools`` alive (its collection releases dead loops' pools)."""

    __slots__ = ("lock", "pools")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pools: dict[asyncio.AbstractEventLoop, _Pool] = {}

    def forget(self, pool: _Pool) -> None:
        with self.lock:
            if self.pools.get(pool.loop) is pool:
                del self.pools[pool.loop]


class LoopPools:
    """The pools of one client, by event loop; ``current()`` is the running loop's."""

    __slots__ = ("__weakref__", "_make", "_pools", "_registry", "_spare")

    def __init__(self, make: Callable[[], httpx.AsyncClient]) -> None:
        self._make = make
        # The first loop's pool is made now, with the client, as before pools were per loop:
        # making one costs milliseconds (httpx builds its TLS context), which a request's
        # time budget should not pay. It holds nothing of any loop until a request uses it.
        self._spare: httpx.AsyncClient | None = make()
        self._registry = _Registry()
        self._pools = self._registry.pools  # (read without the lock: one lookup per request)
        finalizer = weakref.finalize(self, _release_all, self._registry)
        finalizer.atexit = False  # (at exit the loops are gone or going: nothing to do well)

    def current(self) -> httpx.AsyncClient:
        """The running loop's pool, made on its first use (``RuntimeError`` outside a loop)."""
        loop = asyncio.get_running_loop()
        pool = self._pools.get(loop)
        if pool is None:
            pool = self._open(loop)
        return pool.http

    def __len__(self) -> int:
        return len(self._pools)

    def _open(self, loop: asyncio.AbstractEventLoop) -> _Pool:
        with self._registry.lock:
            http, self._spare = self._spare, None
        if http is None:
            http = self._make()  # (outside the lock: another thread's loop need not wait)
        with self._registry.lock:
            dead = [pool for pool in self._pools.values() if pool.loop.is_closed()]
            for pool in dead:
                del self._pools[pool.loop]
            pool = self._pools[loop] = _Pool(http, loop)
        for gone in dead:
            _release(gone)
        keeper = pool.keeper = _keep(self._registry, pool)
        # One step, here on the loop: the loop's first-iteration hook registers the generator,
        # and it waits at its `yield` until the loop shuts its async generators down.
        with contextlib.suppress(StopIteration):
            keeper.asend(None).send(None)
        return pool

    async def aclose(self) -> None:
        """Closes the calling loop's pool; asks the other running loops to close theirs and
        releases those of closed loops. The client stays usable: a later request opens a new
        pool."""
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        with self._registry.lock:
            pools = list(self._pools.values())
        for pool in pools:
            if pool.loop is loop:
                if pool.keeper is not None:
                    await pool.keeper.aclose()
            elif pool.loop.is_closed():
                self._registry.forget(pool)
                _release(pool)
            elif pool.loop.is_running():
                with contextlib.suppress(RuntimeError):  # (closed meanwhile)
                    pool.loop.call_soon_threadsafe(_close_on_its_loop, pool)
            # (a loop that exists but is not running: its own shutdown closes the pool)


async def _keep(registry: _Registry, pool: _Pool) -> AsyncGenerator[None, None]:
    """A pool's watcher: waits at its ``yield`` until its loop shuts down (or ``aclose``)."""
    try:
        yield
    finally:
        registry.forget(pool)
        if pool.abandoned:
            _release_sockets(pool.http)
        else:
            try:
                await pool.http.aclose()
            except BaseException:  # (cancelled by its loop's shutdown: close them anyway)
                _release_sockets(pool.http)
                raise


def _close_on_its_loop(pool: _Pool) -> None:
    if pool.keeper is not None:
        asyncio.get_running_loop().create_task(_close_keeper(pool.keeper))


async def _close_keeper(keeper: AsyncGenerator[None, None]) -> None:
    await keeper.aclose()


def _release(pool: _Pool) -> None:
    """A pool whose loop has closed: its watcher ends without awaiting (the generator is
    finished, so collecting it later calls no hook of the dead loop) and its sockets close."""
    pool.abandoned = True
    keeper = pool.keeper
    if keeper is None:
        _release_sockets(pool.http)
        return
    with contextlib.suppress(StopIteration, RuntimeError):
        keeper.aclose().send(None)


def _release_all(registry: _Registry) -> None:
    """The client was collected: pools of closed loops are released here; a running loop's
    pool is closed on that loop by asyncio's own finalizer hook once its watcher is dropped."""
    with registry.lock:
        pools = list(registry.pools.values())
        registry.pools.clear()
    for pool in pools:
        if pool.loop.is_closed():
            _release(pool)


def _release_sockets(http: httpx.AsyncClient) -> None:
    """Closes the sockets of a pool that cannot be closed by awaiting (its loop is closed, or
    is shutting down and cancelled the close).

    Neither httpx, httpcore nor anyio offers this, so it follows their private attributes
    (httpx client → our resend transports, the default and one per proxy → its pool per
    scheme → httpcore pool → connection → anyio stream → asyncio transport) to abort each
    transport; on a closed loop it runs the cleanup the abort would have scheduled (closing the
    socket), which schedules nothing. Should any of them move, the sockets are closed by the
    garbage collector instead (with a ``ResourceWarning``):
    ``tests/unit/providers/abstractions/test_event_loops.py`` then fails.
    """
    mounted = getattr(http, "_mounts", {})  # (the proxies' transports: ``new_http_client``)
    for resend in (getattr(http, "_transport", None), *mounted.values()):
        inner = getattr(resend, "_inner", resend)
        made = inner.made if isinstance(inner, DeferredTlsTransport) else (inner,)
        for transport in made:
            _abort_connections(getattr(transport, "_pool", None))


def _abort_connections(pool: object) -> None:
    for connection in list(getattr(pool, "connections", ())):
        inner = getattr(connection, "_connection", None)
        stream = getattr(getattr(inner, "_network_stream", None), "_stream", None)
        socket_transport = getattr(stream, "_transport", None)
        if socket_transport is None or getattr(socket_transport, "_sock", None) is None:
            continue
        try:
            socket_transport.abort()  # (public, and enough while the loop runs)
        except RuntimeError:  # its loop is closed: the cleanup abort would have scheduled
            with contextlib.suppress(Exception):
                socket_transport._call_connection_lost(None)
