"""``CacheReportHint``: the one-time "start the server with --enable-…" warning.

Apart from ``telemetry.cache`` because every ``TelemetryChatClient`` holds one, while the
multi-turn table there (``CacheEvolution`` and its ``CacheTurn`` rows, a frozen dataclass about
1 ms to build on first import) is for callers who ask for it: a first request need not load it.
``telemetry.cache`` re-exports the class, and its log events keep that module's logger name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from providers.abstractions.logs import EventSink, get_logger
from telemetry import events

if TYPE_CHECKING:
    from telemetry.timings import ServerTimings

__all__ = ["CacheReportHint"]

_LOG = get_logger("telemetry.cache")


class CacheReportHint:
    """Logs, at most once per instance, that the backend needs a flag to report cached tokens.

    Give one instance to both a ``TelemetryChatClient`` and a ``CacheEvolution`` to log it once
    for both. Once any report carried cached tokens, the hint is never logged.
    """

    __slots__ = ("_done", "_logger")

    def __init__(self, logger: EventSink | None = None) -> None:
        self._logger = logger if logger is not None else _LOG
        self._done = False

    @property
    def logged(self) -> bool:
        return self._done

    def check(self, server: ServerTimings | None) -> None:
        if self._done or server is None:
            return
        if server.cached_input_tokens is not None:
            self._done = True  # the server does report them: nothing to hint
            return
        flag = server.missing_cache_flag
        if flag is None:
            return
        self._done = True
        self._logger.warning(
            events.CACHE_REPORT_UNAVAILABLE,
            **{
                events.BACKEND: server.backend,
                events.SERVER_FLAG: flag,
                events.HINT: f"{server.backend} reports cached prompt tokens only when started "
                f"with {flag}; until then they show as n/a, not 0",
            },
        )
