"""Event names emitted by ``capabilities`` (through ``providers.abstractions.logs``). Stable API:
dashboards and tests match on these strings, so they change only with a deprecation.

Every event is a dict (``structlog.testing.capture_logs()`` in tests); keys are listed beside
each name. The library configures no logging. A ``url`` or ``base_url`` never carries the
base URL's user info (``Endpoint`` splits it off), nor do ``evidence`` strings.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "BACKEND_DETECTED",
    "BACKEND_NOT_READY",
    "BACKEND_READY",
    "MODEL_CHECK_SKIPPED",
    "OVERRIDE_EXCEEDS_SERVER",
    "PROBE_ANSWERED",
    "PROBE_FAILED",
    "RESOLVED",
]

BACKEND_DETECTED: Final = "capabilities.backend_detected"
"""info — ``backend``, ``version``, ``evidence``, ``base_url``."""

PROBE_ANSWERED: Final = "capabilities.probe_answered"
"""debug — ``url``, ``status``."""

PROBE_FAILED: Final = "capabilities.probe_failed"
"""debug — ``url``, ``error`` (exception class name; ``CrossOriginRedirect`` for a redirect off
the configured origin, which is not followed), ``unreachable`` when the host could not be
reached at all."""

RESOLVED: Final = "capabilities.resolved"
"""info — ``base_url``, ``model_id``, ``backend``, ``context_window``, ``provenance``."""

OVERRIDE_EXCEEDS_SERVER: Final = "capabilities.override_exceeds_server"
"""warning — ``field``, ``override``, ``server`` (the probed value), ``server_source``. The
override is still used: the operator may know better (a server restarted with a larger ``-c``),
but requests that rely on it may fail."""

MODEL_CHECK_SKIPPED: Final = "capabilities.model_check_skipped"
"""info — ``model_id``, ``backend``, ``reason`` (the server ignores the field, or did not list
its models)."""

BACKEND_NOT_READY: Final = "capabilities.backend_not_ready"
"""info — ``url``, ``status`` (``None`` when nothing answered), ``waited_seconds``. Logged when
waiting starts, not on every poll."""

BACKEND_READY: Final = "capabilities.backend_ready"
"""info — ``url``, ``status``, ``waited_seconds``, ``attempts``."""
