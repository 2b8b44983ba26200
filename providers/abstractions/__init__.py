"""The chat abstractions, MEAI's ``Microsoft.Extensions.AI.Abstractions`` in Python.

Value types (messages, contents, options, responses and their updates), the ``ChatClient``
protocol every client and layer implements, ``DelegatingChatClient`` that every layer extends,
and the ``ProviderError`` hierarchy. Nothing here imports anything else of ours, so code that
only handles messages and updates (a framework adapter, a test, a telemetry extractor) loads no
HTTP client.

Every import of a module in here runs this root first, so it stays eager only for what a chat
request uses: ``AIFunction``, ``ParsedText`` and ``ChatClientMetadata`` are dataclasses (about
1 ms each to build on first import) that a streamed chat never makes, and load on first use.
"""

import importlib as _importlib
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

from providers.abstractions.chat_client import ChatClient, ChatInput
from providers.abstractions.chat_response import (
    ChatResponse,
    ChatResponseBuilder,
    ChatResponseUpdate,
)
from providers.abstractions.contents import (
    AIContent,
    DataContent,
    ErrorContent,
    FunctionCallContent,
    FunctionResultContent,
    TextContent,
    TextReasoningContent,
    UriContent,
    UsageContent,
    UsageDetails,
)
from providers.abstractions.delegating import DelegatingChatClient
from providers.abstractions.errors import (
    ApiStatusError,
    AuthenticationError,
    BackendUnavailableError,
    ConfigurationError,
    ContextLengthExceededError,
    EventLoopError,
    InvalidRequestError,
    InvalidResponseError,
    ModelNotFoundError,
    PermissionDeniedError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
    ResponseTooLargeError,
    ServerError,
    StreamInterruptedError,
    StructuredOutputError,
)
from providers.abstractions.limits import DEFAULT_LIMITS, Limits
from providers.abstractions.messages import ChatMessage
from providers.abstractions.open_values import ChatFinishReason, ChatRole
from providers.abstractions.options import (
    ChatOptions,
    ChatResponseFormat,
    ChatToolMode,
    ToolDeclaration,
)

if _TYPE_CHECKING:
    from providers.abstractions.functions import AIFunction, InvalidArgumentsError
    from providers.abstractions.parsed_text import ParsedText
    from providers.abstractions.services import ChatClientMetadata

__all__ = [
    "DEFAULT_LIMITS",
    "AIContent",
    "AIFunction",
    "ApiStatusError",
    "AuthenticationError",
    "BackendUnavailableError",
    "ChatClient",
    "ChatClientMetadata",
    "ChatFinishReason",
    "ChatInput",
    "ChatMessage",
    "ChatOptions",
    "ChatResponse",
    "ChatResponseBuilder",
    "ChatResponseFormat",
    "ChatResponseUpdate",
    "ChatRole",
    "ChatToolMode",
    "ConfigurationError",
    "ContextLengthExceededError",
    "DataContent",
    "DelegatingChatClient",
    "ErrorContent",
    "EventLoopError",
    "FunctionCallContent",
    "FunctionResultContent",
    "InvalidArgumentsError",
    "InvalidRequestError",
    "InvalidResponseError",
    "Limits",
    "ModelNotFoundError",
    "ParsedText",
    "PermissionDeniedError",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderTimeoutError",
    "RateLimitError",
    "ResponseTooLargeError",
    "ServerError",
    "StreamInterruptedError",
    "StructuredOutputError",
    "TextContent",
    "TextReasoningContent",
    "ToolDeclaration",
    "UriContent",
    "UsageContent",
    "UsageDetails",
]

_LAZY = {
    "AIFunction": "providers.abstractions.functions",
    "InvalidArgumentsError": "providers.abstractions.functions",
    "ParsedText": "providers.abstractions.parsed_text",
    "ChatClientMetadata": "providers.abstractions.services",
}


def __getattr__(name: str) -> _Any:
    # (``providers.lazy_exports`` does this for the other roots; it sits beside this package in the
    # import ranks, so this root, which everything imports, resolves its few names itself)
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
