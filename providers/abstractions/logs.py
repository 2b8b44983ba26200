"""The library's event logger: quiet until the application asks to hear it.

A library embedded in someone else's application must print nothing unless that application
configured logging. structlog's defaults print every event to stdout, so an unconfigured
structlog would put a line per request on the terminal of every script that sends one. So each
event goes, at the moment it is logged:

* through structlog, when the application configured structlog (``structlog.configure``, and
  ``structlog.testing.capture_logs`` in tests): events keep their names and keys as dicts;
* otherwise through the standard library's ``logging``, to the logger ``oaicompat.<module>``,
  whose root ``oaicompat`` has a ``NullHandler``: silent until the application adds a handler
  or calls ``logging.basicConfig``, then one line per event, ``event key=value …``, with the
  keys also in the record's ``oaicompat`` attribute for structured handlers.

Turn the events on with ``logging.basicConfig(level=logging.INFO)`` (or a handler on the
``oaicompat`` logger), or by configuring structlog.
"""

from __future__ import annotations

import logging
import sys
from typing import Any, Protocol

__all__ = ["ROOT_LOGGER", "EventLogger", "EventSink", "get_logger"]

ROOT_LOGGER = "oaicompat"

logging.getLogger(ROOT_LOGGER).addHandler(logging.NullHandler())

_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}


class EventSink(Protocol):
    """What a layer that takes a ``logger=`` argument logs through: ``EventLogger`` (the default),
    a structlog logger, or a test's recorder. An event is a name (``providers.abstractions.
    event_names``) and keyword values, never a formatted message."""

    def debug(self, event: str, **keys: Any) -> object: ...

    def info(self, event: str, **keys: Any) -> object: ...

    def warning(self, event: str, **keys: Any) -> object: ...

    def error(self, event: str, **keys: Any) -> object: ...


class EventLogger:
    """``debug/info/warning/error(event, **keys)``, routed as the module docstring says."""

    __slots__ = ("_name", "_stdlib")

    def __init__(self, name: str) -> None:
        self._name = name
        stdlib_name = name if name.startswith(ROOT_LOGGER + ".") else f"{ROOT_LOGGER}.{name}"
        self._stdlib = logging.getLogger(stdlib_name)

    def _log(self, method: str, event: str, keys: dict[str, Any]) -> None:
        # structlog is configured only by code that imported it, so a process that never did
        # need not load it (a fifth of the first request's imports, issue 21).
        structlog = sys.modules.get("structlog")
        if structlog is not None and structlog.is_configured():
            getattr(structlog.get_logger(self._name), method)(event, **keys)
            return
        level = _LEVELS[method]
        if self._stdlib.isEnabledFor(level):
            text = " ".join([event, *(f"{key}={value!r}" for key, value in keys.items())])
            self._stdlib.log(level, text, extra={"oaicompat": {"event": event, **keys}})

    def debug(self, event: str, **keys: Any) -> None:
        self._log("debug", event, keys)

    def info(self, event: str, **keys: Any) -> None:
        self._log("info", event, keys)

    def warning(self, event: str, **keys: Any) -> None:
        self._log("warning", event, keys)

    def error(self, event: str, **keys: Any) -> None:
        self._log("error", event, keys)


def get_logger(name: str) -> EventLogger:
    """The event logger for a module (pass ``__name__``)."""
    return EventLogger(name)
