"""The wire client for ``POST /v1/chat/completions``.

``OpenAiCompatibleChatClient`` builds the request (``request``: the body, with the backend's
quirks from ``providers.backends``), reads the event stream through the shared transport, and
turns each chunk into updates (``normalize.ChunkNormalizer``, tool-call deltas assembled by
``tool_call_accumulator``); ``stream_state`` is what one stream has received so far, kept for the
partial response an error carries.
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from providers.lazy_exports import lazy_exports as _lazy_exports

if _TYPE_CHECKING:
    from providers.chat_completions.client import DEFAULT_TIMEOUT, OpenAiCompatibleChatClient
    from providers.chat_completions.normalize import ChunkNormalizer
    from providers.chat_completions.request import build_chat_request
    from providers.chat_completions.tool_call_accumulator import ToolCallAccumulator

__all__ = [
    "DEFAULT_TIMEOUT",
    "ChunkNormalizer",
    "OpenAiCompatibleChatClient",
    "ToolCallAccumulator",
    "build_chat_request",
]

__getattr__, __dir__ = _lazy_exports(
    __name__,
    {
        "DEFAULT_TIMEOUT": ".client",
        "OpenAiCompatibleChatClient": ".client",
        "ChunkNormalizer": ".normalize",
        "build_chat_request": ".request",
        "ToolCallAccumulator": ".tool_call_accumulator",
    },
)
