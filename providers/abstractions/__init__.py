"""The chat abstractions, MEAI's ``Microsoft.Extensions.AI.Abstractions`` in Python.

Value types (messages, contents, options, responses and their updates), the ``ChatClient``
protocol every client and layer implements, ``DelegatingChatClient`` that every layer extends,
and the ``ProviderError`` hierarchy. Nothing here imports anything else of ours, so code that
only handles messages and updates (a framework adapter, a test, a telemetry extractor) loads no
HTTP client.
"""

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
)
from providers.abstractions.functions import AIFunction, InvalidArgumentsError
from providers.abstractions.limits import DEFAULT_LIMITS, Limits
from providers.abstractions.messages import ChatMessage
from providers.abstractions.open_values import ChatFinishReason, ChatRole
from providers.abstractions.options import (
    ChatOptions,
    ChatResponseFormat,
    ChatToolMode,
    ToolDeclaration,
)
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
    "TextContent",
    "TextReasoningContent",
    "ToolDeclaration",
    "UriContent",
    "UsageContent",
    "UsageDetails",
]
