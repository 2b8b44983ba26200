"""Event names emitted by ``capabilities`` (through ``providers.abstractions.logs``), under the
names this module has always given them. They are defined, with their levels and keys, in
``providers.abstractions.event_names`` (``oaicompat.capabilities.*``), where every event name of
the library lives in one scheme. Stable API: dashboards and tests match on these strings.

Every event is a dict (``structlog.testing.capture_logs()`` in tests). The library configures no
logging. A ``url`` or ``base_url`` never carries the base URL's user info (``Endpoint`` splits it
off), nor do ``evidence`` strings.
"""

from __future__ import annotations

from typing import Final

from providers.abstractions import event_names as _names

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

BACKEND_DETECTED: Final = _names.CAPABILITIES_BACKEND_DETECTED
PROBE_ANSWERED: Final = _names.CAPABILITIES_PROBE_ANSWERED
PROBE_FAILED: Final = _names.CAPABILITIES_PROBE_FAILED
RESOLVED: Final = _names.CAPABILITIES_RESOLVED
OVERRIDE_EXCEEDS_SERVER: Final = _names.CAPABILITIES_OVERRIDE_EXCEEDS_SERVER
MODEL_CHECK_SKIPPED: Final = _names.CAPABILITIES_MODEL_CHECK_SKIPPED
BACKEND_NOT_READY: Final = _names.CAPABILITIES_BACKEND_NOT_READY
BACKEND_READY: Final = _names.CAPABILITIES_BACKEND_READY
