"""oaicompat providers: one typed async client for OpenAI-compatible LLM servers.

Everything a caller needs is importable from here; modules are implementation detail except
where an issue names them public (``providers.text_tool_calls``, ``providers.reasoning``).
"""

from typing import TYPE_CHECKING, Any

from providers._open_values import ChatFinishReason, ChatRole
from providers.chat_client import ChatClient, ChatInput
from providers.chat_response import ChatResponse, ChatResponseUpdate
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
from providers.errors import (
    ApiStatusError,
    AuthenticationError,
    BackendUnavailableError,
    ConfigurationError,
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
from providers.pipeline import ChatClientBuilder, DelegatingChatClient
from providers.profiles import BackendProfile, profile_for
from providers.sse import ServerSentEvent, SseDecoder

if TYPE_CHECKING:
    from providers.client import DEFAULT_TIMEOUT, OpenAiCompatibleChatClient, Timeouts
    from providers.config import BackendConfig, OaicompatConfig, client_for, load_config
    from providers.endpoint import Endpoint
    from providers.factory import ExtraBodyChatClient, create_chat_client
    from providers.responses import (
        ConversationMode,
        OpenAiCompatibleResponsesClient,
        ResponsesEventNormalizer,
    )
    from providers.retry import RetryingChatClient, RetryPolicy
    from providers.text_recovery import TextRecoveryChatClient

# What costs cold-import time loads on first use: the HTTP client (httpx and asyncio, about two
# thirds of it), tenacity and structlog for retry, the parser registry for recovery. The chat
# abstractions stay eager, so code that only handles messages and updates never pays for them.
_LAZY = {
    "DEFAULT_TIMEOUT": "providers.client",
    "Endpoint": "providers.endpoint",
    "OpenAiCompatibleChatClient": "providers.client",
    "Timeouts": "providers.client",
    "BackendConfig": "providers.config",
    "ExtraBodyChatClient": "providers.factory",
    "OaicompatConfig": "providers.config",
    "client_for": "providers.config",
    "create_chat_client": "providers.factory",
    "load_config": "providers.config",
    "RetryPolicy": "providers.retry",
    "RetryingChatClient": "providers.retry",
    "TextRecoveryChatClient": "providers.text_recovery",
    "ConversationMode": "providers.responses",
    "OpenAiCompatibleResponsesClient": "providers.responses",
    "ResponsesEventNormalizer": "providers.responses",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'providers' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "DEFAULT_TIMEOUT",
    "AIContent",
    "ApiStatusError",
    "AuthenticationError",
    "BackendConfig",
    "BackendProfile",
    "BackendUnavailableError",
    "ChatClient",
    "ChatClientBuilder",
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
    "ConfigurationError",
    "ContextLengthExceededError",
    "ConversationMode",
    "DataContent",
    "DelegatingChatClient",
    "Endpoint",
    "ErrorContent",
    "ExtraBodyChatClient",
    "FunctionCallContent",
    "FunctionResultContent",
    "InvalidRequestError",
    "InvalidResponseError",
    "ModelNotFoundError",
    "OaicompatConfig",
    "OpenAiCompatibleChatClient",
    "OpenAiCompatibleResponsesClient",
    "PermissionDeniedError",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderTimeoutError",
    "RateLimitError",
    "ResponsesEventNormalizer",
    "RetryPolicy",
    "RetryingChatClient",
    "ServerError",
    "ServerSentEvent",
    "SseDecoder",
    "StreamInterruptedError",
    "TextContent",
    "TextReasoningContent",
    "TextRecoveryChatClient",
    "Timeouts",
    "ToolDeclaration",
    "UriContent",
    "UsageContent",
    "UsageDetails",
    "client_for",
    "create_chat_client",
    "load_config",
    "profile_for",
]
