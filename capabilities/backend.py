"""The discovery view of the backend table: what to ask each backend after detection.

The facts live in ``providers.backends.PROFILES`` (one row per backend, every concern, and the
``Backend`` name constants); this module projects the discovery columns out of it, so code here
reads ``traits_for(name).probes`` and never compares a backend's name. The probe names there are
plain strings because that module cannot import this package; they are ``Source`` values,
and ``tests/unit/providers/test_backends_table.py`` checks that each is a probe
``capabilities.probes`` runs.
"""

from __future__ import annotations

from providers.abstractions.records import value_class
from providers.backends import PROFILES, Backend, BackendProfile

__all__ = ["TRAITS", "Backend", "BackendTraits", "traits_for"]


@value_class(frozen=True)
class BackendTraits:
    """What the capability resolver needs of a backend's ``BackendProfile`` row (which probes
    to ask, whether ``model`` is ignored), so capabilities depends on the table, not the reverse."""

    name: str

    probes: tuple[str, ...] = ()
    """See ``BackendProfile.probes``: ``Source`` names, keys of ``probes.PROBES``."""

    model_field_ignored: bool = False
    """See ``BackendProfile.model_field_ignored``."""

    @classmethod
    def of(cls, row: BackendProfile) -> BackendTraits:
        return cls(row.name, probes=row.probes, model_field_ignored=row.model_field_ignored)


TRAITS: dict[str, BackendTraits] = {name: BackendTraits.of(row) for name, row in PROFILES.items()}


def traits_for(backend: str) -> BackendTraits:
    """The row for a backend name; unknown names get the cautious generic row."""
    return TRAITS.get(backend.lower(), BackendTraits(backend.lower()))
