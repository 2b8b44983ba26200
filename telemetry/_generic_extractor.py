"""``GenericTimingsExtractor``: see ``telemetry.extractors``, which exports it.

One module per extractor kind, because a client needs only its backend's: ``extractor_for`` loads
just that one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from providers.abstractions.records import value_class
from telemetry.extractors import TimingsSource, read_report

if TYPE_CHECKING:
    from telemetry.timings import ServerTimings

__all__ = ["GenericTimingsExtractor"]


@value_class(frozen=True)
class GenericTimingsExtractor:
    """OpenAI and unknown servers: standard ``usage``, plus a llama.cpp-style ``timings`` object
    if one is there (an undetected llama.cpp, or a server derived from it). Its keys are checked
    by name and type, so an unrelated ``timings`` field yields nothing rather than nonsense."""

    backend: str = "generic"

    def extract(self, source: TimingsSource) -> ServerTimings | None:
        return read_report(source, self.backend, True, None)
