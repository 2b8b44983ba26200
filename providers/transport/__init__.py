"""The HTTP edge both wire clients share: where bytes become events and time is kept.

``Endpoint`` (base URL → API root, credentials kept out of error text), ``SseDecoder`` (bytes →
events, CR/LF/CRLF only), ``Timeouts`` and the ``Watchdog`` that enforces them (one shared timer
per event loop, ``wake_ups``), the stale-connection resend (``stale_connections``) and the one
place httpx exceptions become ``ProviderError``s (``error_mapping``). Nothing here knows a
chat-completions chunk from a Responses event.
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from providers.lazy_exports import lazy_exports as _lazy_exports

if _TYPE_CHECKING:
    from providers.transport.endpoint import Endpoint as Endpoint
    from providers.transport.sse import ServerSentEvent as ServerSentEvent
    from providers.transport.sse import SseDecoder as SseDecoder
    from providers.transport.stale_connections import new_http_client as new_http_client
    from providers.transport.timeouts import Timeouts as Timeouts

_lazy_exports(
    __name__,
    {
        ".endpoint": ("Endpoint",),
        ".sse": ("ServerSentEvent", "SseDecoder"),
        ".stale_connections": ("new_http_client",),
        ".timeouts": ("Timeouts",),
    },
)
