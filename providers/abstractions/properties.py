"""Well-known ``additional_properties`` keys, and the one way to set an entry on an update.

A key that one layer writes and another reads (the retry layer writes ``retry_attempts``,
telemetry reads it and logs it under the same name) is spelled once, here at the bottom of the
import graph, so the writer and the readers cannot drift apart.
"""

from __future__ import annotations

from typing import Final

from providers.abstractions.chat_response import ChatResponse, ChatResponseUpdate

__all__ = ["RETRY_ATTEMPTS", "set_property"]

RETRY_ATTEMPTS: Final = "retry_attempts"
"""How many retries were made: on a response, on the first update of a stream, and as the
attribute of a ``ProviderError`` that ended the call. Written by ``RetryingChatClient``, read
by the telemetry layers."""


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
