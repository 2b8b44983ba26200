"""oaicompat providers: one typed async client for OpenAI-compatible LLM servers.

Everything a caller needs is importable from here; modules are implementation detail except
where an issue names them public (``providers.text_tool_calls``, ``providers.reasoning``).
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from providers.abstractions.chat_client import ChatClient, ChatInput
from providers.abstractions.chat_response import ChatResponse, ChatResponseUpdate
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
from providers.abstractions.limits import Limits
from providers.abstractions.messages import ChatMessage
from providers.abstractions.open_values import ChatFinishReason, ChatRole
from providers.abstractions.options import (
    ChatOptions,
    ChatResponseFormat,
    ChatToolMode,
    ToolDeclaration,
)
from providers.lazy_exports import lazy_exports as _lazy_exports

if _TYPE_CHECKING:
    from providers.abstractions.functions import AIFunction, InvalidArgumentsError
    from providers.abstractions.services import ChatClientMetadata
    from providers.abstractions.structured_output import StructuredResponse, get_response_as
    from providers.abstractions.sync_client import SyncChatClient
    from providers.backends import BackendProfile, profile_for
    from providers.builder import ChatClientBuilder
    from providers.chat_completions.client import (
        DEFAULT_TIMEOUT,
        OpenAiCompatibleChatClient,
        Timeouts,
    )
    from providers.chat_completions.normalize import ChunkNormalizer
    from providers.config import BackendConfig, OaicompatConfig, client_for, load_config
    from providers.factory import ExtraBodyChatClient, create_chat_client
    from providers.layers.fallback import FallbackChatClient
    from providers.layers.function_invocation import FunctionInvokingChatClient
    from providers.layers.retry import RetryingChatClient, RetryPolicy
    from providers.layers.session_affinity import SessionAffinity, SessionAffinityChatClient
    from providers.layers.text_recovery import TextRecoveryChatClient
    from providers.responses import (
        ConversationMode,
        OpenAiCompatibleResponsesClient,
        ResponsesEventNormalizer,
    )
    from providers.transport.endpoint import Endpoint
    from providers.transport.sse import ServerSentEvent, SseDecoder
    from telemetry.otel import OpenTelemetryChatClient
    from telemetry.telemetry_client import TelemetryChatClient

# What costs cold-import time loads on first use: the HTTP client (httpx and asyncio, about two
# thirds of it), tenacity and structlog for retry, the parser registry for recovery. The chat
# abstractions stay eager, so code that only handles messages and updates never pays for them.
_LAZY: dict[str, str] = {
    "BackendProfile": "providers.backends",
    "profile_for": "providers.backends",
    "ChatClientBuilder": "providers.builder",
    "ChunkNormalizer": "providers.chat_completions.normalize",
    "ServerSentEvent": "providers.transport.sse",
    "SseDecoder": "providers.transport.sse",
    "DEFAULT_TIMEOUT": "providers.chat_completions.client",
    "Endpoint": "providers.transport.endpoint",
    "OpenAiCompatibleChatClient": "providers.chat_completions.client",
    "Timeouts": "providers.chat_completions.client",
    "BackendConfig": "providers.config",
    "ExtraBodyChatClient": "providers.factory",
    "FallbackChatClient": "providers.layers.fallback",
    "FunctionInvokingChatClient": "providers.layers.function_invocation",
    "OaicompatConfig": "providers.config",
    "client_for": "providers.config",
    "create_chat_client": "providers.factory",
    "load_config": "providers.config",
    "RetryPolicy": "providers.layers.retry",
    "RetryingChatClient": "providers.layers.retry",
    "SessionAffinity": "providers.layers.session_affinity",
    "SessionAffinityChatClient": "providers.layers.session_affinity",
    "TextRecoveryChatClient": "providers.layers.text_recovery",
    "OpenTelemetryChatClient": "telemetry.otel",
    "TelemetryChatClient": "telemetry.telemetry_client",
    "ConversationMode": "providers.responses",
    "OpenAiCompatibleResponsesClient": "providers.responses",
    "ResponsesEventNormalizer": "providers.responses",
    # frozen dataclasses (about 1 ms each to build) that a streamed chat never makes
    "AIFunction": "providers.abstractions.functions",
    "InvalidArgumentsError": "providers.abstractions.functions",
    "ChatClientMetadata": "providers.abstractions.services",
    # pydantic, ~65 ms of cold import, for structured output only
    "StructuredResponse": "providers.abstractions.structured_output",
    "get_response_as": "providers.abstractions.structured_output",
    "SyncChatClient": "providers.abstractions.sync_client",
}


__all__ = [
    "DEFAULT_TIMEOUT",
    "AIContent",
    "AIFunction",
    "ApiStatusError",
    "AuthenticationError",
    "BackendConfig",
    "BackendProfile",
    "BackendUnavailableError",
    "ChatClient",
    "ChatClientBuilder",
    "ChatClientMetadata",
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
    "EventLoopError",
    "ExtraBodyChatClient",
    "FallbackChatClient",
    "FunctionCallContent",
    "FunctionInvokingChatClient",
    "FunctionResultContent",
    "InvalidArgumentsError",
    "InvalidRequestError",
    "InvalidResponseError",
    "Limits",
    "ModelNotFoundError",
    "OaicompatConfig",
    "OpenAiCompatibleChatClient",
    "OpenAiCompatibleResponsesClient",
    "OpenTelemetryChatClient",
    "PermissionDeniedError",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderTimeoutError",
    "RateLimitError",
    "ResponseTooLargeError",
    "ResponsesEventNormalizer",
    "RetryPolicy",
    "RetryingChatClient",
    "ServerError",
    "ServerSentEvent",
    "SessionAffinity",
    "SessionAffinityChatClient",
    "SseDecoder",
    "StreamInterruptedError",
    "StructuredOutputError",
    "StructuredResponse",
    "SyncChatClient",
    "TelemetryChatClient",
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
    "get_response_as",
    "load_config",
    "profile_for",
]

__getattr__, __dir__ = _lazy_exports(__name__, _LAZY)
