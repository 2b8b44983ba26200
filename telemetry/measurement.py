"""``Measurement``: one number with its unit and its source (see ``telemetry.timings``).

Apart from ``telemetry.timings``, which re-exports it, because it is a frozen dataclass (about
1 ms to build on first import) that a request's timings and its log event never make: only
``measurements()`` and the cache table do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from providers.abstractions.records import value_class

if TYPE_CHECKING:
    from telemetry.timings import Source

__all__ = ["Measurement"]


@value_class(frozen=True)
class Measurement:
    """One number, its unit and where it came from."""

    value: float
    unit: str
    source: Source

    def to_dict(self) -> dict[str, float | str]:
        return {"value": self.value, "unit": self.unit, "source": self.source}
