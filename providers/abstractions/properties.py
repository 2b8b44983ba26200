"""Well-known ``additional_properties`` keys, and the one way to set an entry on an update.

A key that one layer writes and another reads (the retry layer writes ``retry_attempts``,
telemetry reads it and logs it under the same name; the wire client writes the transport's
instants, telemetry reads them) is spelled once, here at the bottom of the import graph, so the
writer and the readers cannot drift apart and a reader never imports the writer.
"""

from __future__ import annotations

from typing import Final

from providers.abstractions.chat_response import ChatResponse, ChatResponseUpdate
from providers.abstractions.server_json import REPLACED_SURROGATES

__all__ = [
    "CACHE_HITS",
    "REPLACED_SURROGATES",
    "RETRY_ATTEMPTS",
    "TRANSPORT_TIMESTAMPS",
    "set_property",
]

RETRY_ATTEMPTS: Final = "retry_attempts"
"""How many retries were made: on a response, on the first update of a stream, and as the
attribute of a ``ProviderError`` that ended the call. Written by ``RetryingChatClient``, read
by the telemetry layers."""

CACHE_HITS: Final = "cache_hits"
"""How many values of a ``generate`` call were answered from the cache, on its
``GeneratedEmbeddings``: written by ``CachingEmbeddingGenerator``, read by the telemetry."""

TRANSPORT_TIMESTAMPS: Final = "transport_timestamps"
"""Key of the client-measured ``time.monotonic()`` instants only the transport sees:
``request_sent``, ``response_headers``, ``first_byte`` (and ``response_end`` for a non-streamed
call). On a stream they ride on the first update; the telemetry layer measures the rest (first
substantive token, last token, end) from the updates themselves."""


def set_property(target: ChatResponseUpdate | ChatResponse, key: str, value: object) -> None:
    """Set one ``additional_properties`` entry, making the dict only when there is none.

    Most updates carry no properties, and a stream may hold thousands of them: an empty dict
    on each would cost memory for nothing, so ``ChatResponseUpdate`` defaults to ``None``.
    """
    properties = target.additional_properties
    if properties is None:
        target.additional_properties = {key: value}
    else:
        properties[key] = value
