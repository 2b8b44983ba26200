"""Per-request time budgets (``Timeouts``) and the one re-arming wake-up that enforces them
(``Watchdog``).

httpx enforces only the connect budget; first-token, idle and total are one lazily re-armed
wake-up per request (all of a loop's share one asyncio timer:
``providers.transport.wake_ups``), so a healthy stream pays a clock read and one comparison
per network read, not a timer per chunk.
Shared by every client that streams (chat completions, Responses).
"""

from __future__ import annotations

import asyncio
import math
import time
from typing import Any, Protocol

import httpx

from providers.abstractions.errors import ConfigurationError, ProviderTimeoutError, TimeoutPhase
from providers.abstractions.records import value_class
from providers.transport.wake_ups import WakeUp, wake_ups

__all__ = ["OutputProgress", "Timeouts", "Watchdog", "budget_error"]


class OutputProgress(Protocol):
    """What a stream's parsing state tells the timers: has the server started writing output
    (a substantive update, or a tool call still being written)?"""

    def has_token(self) -> bool: ...


@value_class(frozen=True)
class Timeouts:
    """Per-request time budgets in seconds; ``None`` switches one off.

    ``connect`` (default 10 s, enforced by httpx): TCP/TLS set-up. openai-python uses 5 s for its
    cloud; 10 s is the previous ``DEFAULT_TIMEOUT`` and only matters for a dead host. The one phase
    a retry is safe after, since the server has seen nothing.

    ``first_token`` (default 600 s): from sending the request to the first *substantive* update
    (text, reasoning or a tool call); the pool wait, upload, queueing and prefill all count, and
    keepalives, role-only chunks and prefill progress do not stop it. A long prompt on a CPU or
    busy single-slot server legitimately takes minutes; 600 s is openai-python's read timeout
    and the previous ``DEFAULT_TIMEOUT.read``.

    ``idle`` (default 120 s): the longest silence between two network reads once output has
    started; keepalive comments count as activity. llama.cpp pings after 30 s of silence; a
    server that buffers a whole tool call or recomputes a preempted request may be silent for
    a minute, and a false expiry loses an answer that cannot be retried, so it is generous.

    ``total`` (default 3600 s, Netclaw's HTTP timeout): the whole request. A non-streamed call
    has only ``connect`` and ``total``: no byte flows until its answer is complete, so there is
    no first token or gap to time.
    """

    connect: float | None = 10.0
    first_token: float | None = 600.0
    idle: float | None = 120.0
    total: float | None = 3600.0

    def __post_init__(self) -> None:
        for name in ("connect", "first_token", "idle", "total"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, int | float) and value > 0):
                raise ConfigurationError(f"Timeouts.{name} must be > 0 seconds or None: {value!r}")

    @classmethod
    def from_httpx(cls, timeout: httpx.Timeout | float | None) -> Timeouts:
        """The old ``timeout=`` argument: its read timeout bounds the first token and each gap."""
        if not isinstance(timeout, httpx.Timeout):
            timeout = httpx.Timeout(timeout)
        return cls(timeout.connect, timeout.read, timeout.read, None)

    def httpx_timeout(self) -> httpx.Timeout:
        """What each request hands httpx: connect only; the watchdog owns the other budgets."""
        return httpx.Timeout(connect=self.connect, read=None, write=None, pool=None)

    def request_extensions(self) -> dict[str, Any]:
        """``httpx_timeout`` as the request extensions every request of a client can share.

        Made once per client: ``build_request(timeout=...)`` makes a ``Timeout`` copy and its
        dict per request, which every stream waiting for its server would then hold. Each
        ``httpx.Request`` copies the outer dict, so a hook adding to one request's extensions
        does not reach the next; httpcore only reads the timeout mapping.
        """
        return {"timeout": self.httpx_timeout().as_dict()}


_INF = math.inf


class Watchdog(WakeUp):
    """The first-token, idle and total budgets of one streamed request, on one wake-up.

    The read loop records when it starts waiting on the network (``since``) and clears it when
    data arrives: a clock read, one comparison with ``due`` and two stores per network read. The
    timer sleeps until the earliest moment a budget could run out (and, until output starts, at
    most one idle period, to notice the first token) and re-arms when it finds progress, so a
    healthy stream costs a wake-up per idle period. Whether output has started is looked up
    lazily at those wake-ups, never per update. The timer cancels the task only while the task
    waits on the network (``since`` set), never while the caller holds an update; a deadline
    that passes meanwhile is raised by the next read (``due``). Cancellation follows
    ``asyncio.timeout``: the expiry is claimed with ``Task.uncancel`` only if nobody else
    cancelled the task too. The wake-ups of all of a loop's watchdogs share one asyncio timer
    (``providers.transport.wake_ups``).
    """

    __slots__ = (
        "_backend",
        "_cancelling",
        "_first",
        "_idle",
        "_progress",
        "_task",
        "_timeouts",
        "_token_seen",
        "_total",
        "_wake_ups",
        "due",
        "expired",
        "since",
    )

    def __init__(
        self, timeouts: Timeouts, progress: OutputProgress, backend: str, now: float
    ) -> None:
        super().__init__()
        self._timeouts = timeouts
        # (the object, not a bound method: one less per open stream; dropped when closed)
        self._progress: OutputProgress | None = progress
        self._backend = backend
        self._first = _INF if timeouts.first_token is None else now + timeouts.first_token
        self._total = _INF if timeouts.total is None else now + timeouts.total
        self._idle = timeouts.idle
        self._token_seen = False
        self._wake_ups = wake_ups()
        self._task = asyncio.current_task()
        self._cancelling = self._task.cancelling() if self._task is not None else 0
        self.since: float | None = now  # the header wait is a network wait too
        self.due = min(self._first, self._total)
        self.expired: TimeoutPhase | None = None
        self._arm(now)

    def _deadline(self, since: float | None) -> tuple[float, TimeoutPhase]:
        when = self._total
        phase: TimeoutPhase = "total"
        if not self._token_seen:
            if self._first < when:
                when, phase = self._first, "first_token"
        elif self._idle is not None and since is not None and since + self._idle < when:
            when, phase = since + self._idle, "idle"
        return when, phase

    def _arm(self, now: float) -> None:
        when, _ = self._deadline(self.since)
        if not self._token_seen and self._idle is not None:
            when = min(when, now + self._idle)  # look for the first token once per idle period
        if when != _INF and self._task is not None:
            self._wake_ups.schedule(self, when)

    def _token_check(self) -> None:
        progress = self._progress
        if not self._token_seen and progress is not None and progress.has_token():
            self._token_seen = True
            self.due = self._total

    def wake(self) -> None:
        if self.since is None:
            self.due = -_INF  # the caller holds the task: the next read re-arms
            return
        now = time.monotonic()
        self._token_check()
        when, phase = self._deadline(self.since)
        if now >= when and self._task is not None:
            self.expired = phase
            self._task.cancel()
        else:
            self._arm(now)

    def overdue(self, now: float) -> None:
        """The read loop found ``now >= due``: raise a passed deadline, or re-arm the timer."""
        self._token_check()
        when, phase = self._deadline(None)
        self.due = when
        if now >= when:
            raise self._error(phase)
        if not self.queued:
            self.since = now
            self._arm(now)

    def expiry_error(self) -> ProviderTimeoutError | None:
        """The timeout a ``CancelledError`` stands for, or ``None`` if someone else cancelled."""
        if self.expired is None or self._task is None:
            return None
        if self._task.uncancel() > self._cancelling:
            return None
        return self._error(self.expired)

    def _error(self, phase: TimeoutPhase) -> ProviderTimeoutError:
        budgets = self._timeouts
        budget = {"first_token": budgets.first_token, "idle": budgets.idle}.get(
            phase, budgets.total
        )
        return budget_error(phase, budget, self._backend)

    def close(self) -> None:
        """The stream has ended. A cancelled wake-up may stay in the shared heap for a while,
        so what the stream received and its task are let go now."""
        self._wake_ups.cancel(self)
        self._progress = None
        self._task = None


_BUDGET_MESSAGES: dict[str, str] = {
    "connect": "could not connect within the {budget} connect budget",
    "first_token": "no text, reasoning or tool call within the {budget} first-token budget",
    "idle": "the stream was silent for longer than the {budget} idle budget",
    "total": "the request ran past its {budget} overall deadline",
}


def budget_error(phase: TimeoutPhase, budget: float | None, backend: str) -> ProviderTimeoutError:
    text = "unlimited" if budget is None else f"{budget:g} s"
    return ProviderTimeoutError(
        _BUDGET_MESSAGES[phase].format(budget=text), phase=phase, budget=budget, backend=backend
    )
