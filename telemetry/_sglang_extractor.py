"""``SglangTimingsExtractor``: see ``telemetry.extractors``, which exports it.

One module per extractor kind, because a client needs only its backend's: ``extractor_for`` loads
just that one. A record (``providers.abstractions.records``), not a dataclass: no import cost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from providers.abstractions.records import FrozenRecord
from telemetry.extractors import TimingsSource, read_report

if TYPE_CHECKING:
    from telemetry.timings import ServerTimings

__all__ = ["SglangTimingsExtractor"]


class SglangTimingsExtractor(FrozenRecord):
    """SGLang: cached tokens (with the flag) and the top-level ``usage.reasoning_tokens``."""

    __slots__ = ("backend", "cache_flag")
    backend: str
    cache_flag: str

    def __init__(self, backend: str = "sglang", cache_flag: str = "--enable-cache-report") -> None:
        object.__setattr__(self, "backend", backend)
        object.__setattr__(self, "cache_flag", cache_flag)

    def extract(self, source: TimingsSource) -> ServerTimings | None:
        return read_report(source, self.backend, False, self.cache_flag)
