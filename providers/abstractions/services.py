"""Service lookup through a stack of layers: MEAI's ``GetService``, in Python.

A framework holding the outermost client of a pipeline sometimes needs something deeper: the
wire client (to read its endpoint), one layer (to adjust its policy), or a description of the
backend (``ChatClientMetadata``) to label its own telemetry. ``get_service(service_type)`` asks
each layer in turn, outermost first: a layer that is, or holds, the service answers; any other
passes the question inward. ``None`` means nothing in the stack offers it.
"""

from __future__ import annotations

from typing import Any, TypeVar

from providers.abstractions.records import value_class

__all__ = ["ChatClientMetadata", "capabilities_of", "service_of"]

_T = TypeVar("_T")


@value_class(frozen=True)
class ChatClientMetadata:
    """What a framework may ask about the backend behind a client (MEAI's
    ``ChatClientMetadata``): the server software, the API root (never with user info), and the
    model the client asks for."""

    provider_name: str | None = None
    """The backend (``llamacpp``, ``vllm``, ``sglang``, ``generic``…)."""
    base_url: str | None = None
    model_id: str | None = None


def service_of(client: Any, service_type: type[_T]) -> _T | None:
    """``client`` itself if it is a ``service_type``, else what its own ``get_service`` finds;
    for a client of the caller's own without ``get_service``, only the first test applies."""
    if isinstance(client, service_type):
        return client
    lookup = getattr(client, "get_service", None)
    if lookup is None:
        return None
    found = lookup(service_type)
    return found if isinstance(found, service_type) else None


async def capabilities_of(client: Any, *, refresh: bool = False) -> Any:
    """``client.get_capabilities()``: a layer passes the question to the client it wraps, down
    to the wire client that probes the server."""
    lookup = getattr(client, "get_capabilities", None)
    if lookup is None:
        raise NotImplementedError(f"{type(client).__name__} reports no capabilities")
    return await lookup(refresh=refresh)
