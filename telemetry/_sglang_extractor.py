"""``SglangTimingsExtractor``: see ``telemetry.extractors``, which exports it.

One module per extractor kind, because a client needs only its backend's: ``extractor_for`` loads
just that one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from providers.abstractions.records import value_class
from telemetry.extractors import TimingsSource, read_report

if TYPE_CHECKING:
    from telemetry.timings import ServerTimings

__all__ = ["SglangTimingsExtractor"]


@value_class(frozen=True)
class SglangTimingsExtractor:
    """SGLang: cached tokens (with the flag) and the top-level ``usage.reasoning_tokens``."""

    backend: str = "sglang"
    cache_flag: str = "--enable-cache-report"

    def extract(self, source: TimingsSource) -> ServerTimings | None:
        return read_report(source, self.backend, False, self.cache_flag)
