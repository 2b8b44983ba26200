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
    from providers.chat_completions.client import DEFAULT_TIMEOUT as DEFAULT_TIMEOUT
    from providers.chat_completions.client import (
        OpenAiCompatibleChatClient as OpenAiCompatibleChatClient,
    )
    from providers.chat_completions.normalize import ChunkNormalizer as ChunkNormalizer
    from providers.chat_completions.request import build_chat_request as build_chat_request
    from providers.chat_completions.tool_call_accumulator import (
        ToolCallAccumulator as ToolCallAccumulator,
    )

_lazy_exports(
    __name__,
    {
        ".client": ("DEFAULT_TIMEOUT", "OpenAiCompatibleChatClient"),
        ".normalize": ("ChunkNormalizer",),
        ".request": ("build_chat_request",),
        ".tool_call_accumulator": ("ToolCallAccumulator",),
    },
)
