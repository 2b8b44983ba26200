"""The Responses-API view of the backend table: what the request side must do differently.

The facts live in ``providers.backends.PROFILES`` (one row per backend, every concern); this
module only projects the Responses columns out of it, so a backend is never described twice. The
event normaliser accepts every server's events whatever the row says.
"""

from __future__ import annotations

from providers.abstractions.records import value_class
from providers.backends import PROFILES, Backend, BackendProfile

__all__ = ["RESPONSES_QUIRKS", "ResponsesQuirks", "responses_quirks_for"]


@value_class(frozen=True)
class ResponsesQuirks:
    """One backend's Responses-API request rules, projected from its ``BackendProfile`` row so
    the Responses client reads only what concerns it."""

    name: str

    replays_function_calls: bool = True
    """See ``BackendProfile.replays_function_calls``."""

    @classmethod
    def of(cls, row: BackendProfile) -> ResponsesQuirks:
        return cls(row.name, replays_function_calls=row.replays_function_calls)


RESPONSES_QUIRKS: dict[str, ResponsesQuirks] = {
    name: ResponsesQuirks.of(row) for name, row in PROFILES.items()
}


def responses_quirks_for(backend: str) -> ResponsesQuirks:
    """The row for a backend name; unknown names get the generic (OpenAI-like) row."""
    return RESPONSES_QUIRKS.get(backend.lower(), RESPONSES_QUIRKS[Backend.GENERIC])
