"""oaicompat providers: one typed async client for OpenAI-compatible LLM servers.

Everything a caller needs is importable from here; modules are implementation detail except
where an issue names them public (``providers.text_tool_calls``, ``providers.reasoning``).
"""

from providers._open_values import ChatFinishReason, ChatRole
from providers.chat_client import ChatClient, ChatInput
from providers.chat_response import ChatResponse, ChatResponseUpdate
from providers.client import DEFAULT_TIMEOUT, OpenAiCompatibleChatClient
from providers.contents import (
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
from providers.endpoint import Endpoint
from providers.errors import (
    ApiStatusError,
    AuthenticationError,
    BackendUnavailableError,
    ContextLengthExceededError,
    InvalidRequestError,
    InvalidResponseError,
    ModelNotFoundError,
    PermissionDeniedError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
    ServerError,
    StreamInterruptedError,
)
from providers.messages import ChatMessage
from providers.normalize import ChunkNormalizer
from providers.options import ChatOptions, ChatResponseFormat, ChatToolMode, ToolDeclaration
from providers.profiles import BackendProfile, profile_for
from providers.sse import ServerSentEvent, SseDecoder

__all__ = [
    "DEFAULT_TIMEOUT",
    "AIContent",
    "ApiStatusError",
    "AuthenticationError",
    "BackendProfile",
    "BackendUnavailableError",
    "ChatClient",
    "ChatFinishReason",
    "ChatInput",
    "ChatMessage",
    "ChatOptions",
    "ChatResponse",
    "ChatResponseFormat",
    "ChatResponseUpdate",
    "ChatRole",
    "ChatToolMode",
    "ChunkNormalizer",
    "ContextLengthExceededError",
    "DataContent",
    "Endpoint",
    "ErrorContent",
    "FunctionCallContent",
    "FunctionResultContent",
    "InvalidRequestError",
    "InvalidResponseError",
    "ModelNotFoundError",
    "OpenAiCompatibleChatClient",
    "PermissionDeniedError",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderTimeoutError",
    "RateLimitError",
    "ServerError",
    "ServerSentEvent",
    "SseDecoder",
    "StreamInterruptedError",
    "TextContent",
    "TextReasoningContent",
    "ToolDeclaration",
    "UriContent",
    "UsageContent",
    "UsageDetails",
    "profile_for",
]
