"""How long the server asked to wait before a retry, read from its response headers.

The retry layer honours the wait (up to its own cap); the transport reads it because only the
transport sees the headers.
"""

from __future__ import annotations

import email.utils
import math
import time
from collections.abc import Mapping
from datetime import UTC

__all__ = ["retry_after_from_headers"]


def retry_after_from_headers(
    headers: Mapping[str, str], *, now: float | None = None
) -> float | None:
    """Seconds the server asked to wait, in openai-python's order: ``retry-after-ms``, then
    ``Retry-After`` as seconds, then as an HTTP-date (relative to ``now``, default
    ``time.time()``). ``None`` when absent or unreadable; a date in the past gives ``0.0``.
    """
    lowered = {key.lower(): value for key, value in headers.items()}
    value = lowered.get("retry-after-ms")
    if value:
        seconds = _finite(value)
        if seconds is not None:
            return max(0.0, seconds / 1000.0)
    value = lowered.get("retry-after")
    if not value:
        return None
    seconds = _finite(value)
    if seconds is not None:
        return max(0.0, seconds)
    try:
        when = email.utils.parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)  # asctime and "-0000" forms: HTTP-dates are always GMT
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _finite(value: str) -> float | None:
    try:
        number = float(value.strip())
    except ValueError:
        return None
    return number if math.isfinite(number) else None
