"""``LlamaCppTimingsExtractor``: see ``telemetry.extractors``, which exports it.

One module per extractor kind, because a client needs only its backend's: ``extractor_for`` loads
just that one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from providers.abstractions.records import value_class
from telemetry.extractors import TimingsSource, read_report

if TYPE_CHECKING:
    from telemetry.timings import ServerTimings

__all__ = ["LlamaCppTimingsExtractor"]


@value_class(frozen=True)
class LlamaCppTimingsExtractor:
    """llama.cpp: the ``timings`` object first, ``usage`` for what it lacks."""

    backend: str = "llamacpp"

    def extract(self, source: TimingsSource) -> ServerTimings | None:
        return read_report(source, self.backend, True, None)
