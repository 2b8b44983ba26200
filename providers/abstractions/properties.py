"""Well-known ``additional_properties`` keys that one layer writes and another reads.

They live at the bottom of the import order so a reader (``telemetry``) never has to import the
writer (the wire client) to learn a key's spelling.
"""

from __future__ import annotations

from typing import Final

__all__ = ["TRANSPORT_TIMESTAMPS"]

TRANSPORT_TIMESTAMPS: Final = "transport_timestamps"
"""Key of the client-measured ``time.monotonic()`` instants only the transport sees:
``request_sent``, ``response_headers``, ``first_byte`` (and ``response_end`` for a non-streamed
call). On a stream they ride on the first update; the telemetry layer measures the rest (first
substantive token, last token, end) from the updates themselves."""
