"""oaicompat providers: one typed async client for OpenAI-compatible LLM servers.

Everything a caller needs is importable from here; modules are implementation detail except
where an issue names them public (``providers.text_tool_calls``, ``providers.reasoning``).
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from providers.abstractions.chat_client import ChatClient as ChatClient
from providers.abstractions.chat_client import ChatInput as ChatInput
from providers.abstractions.chat_response import ChatResponse as ChatResponse
from providers.abstractions.chat_response import ChatResponseUpdate as ChatResponseUpdate
from providers.abstractions.contents import AIContent as AIContent
from providers.abstractions.contents import DataContent as DataContent
from providers.abstractions.contents import ErrorContent as ErrorContent
from providers.abstractions.contents import FunctionCallContent as FunctionCallContent
from providers.abstractions.contents import FunctionResultContent as FunctionResultContent
from providers.abstractions.contents import TextContent as TextContent
from providers.abstractions.contents import TextReasoningContent as TextReasoningContent
from providers.abstractions.contents import UriContent as UriContent
from providers.abstractions.contents import UsageContent as UsageContent
from providers.abstractions.contents import UsageDetails as UsageDetails
from providers.abstractions.delegating import DelegatingChatClient as DelegatingChatClient
from providers.abstractions.errors import ApiStatusError as ApiStatusError
from providers.abstractions.errors import AuthenticationError as AuthenticationError
from providers.abstractions.errors import BackendUnavailableError as BackendUnavailableError
from providers.abstractions.errors import ConfigurationError as ConfigurationError
from providers.abstractions.errors import ConfigurationTypeError as ConfigurationTypeError
from providers.abstractions.errors import ConstraintViolationError as ConstraintViolationError
from providers.abstractions.errors import ContextLengthExceededError as ContextLengthExceededError
from providers.abstractions.errors import EventLoopError as EventLoopError
from providers.abstractions.errors import InvalidRequestError as InvalidRequestError
from providers.abstractions.errors import InvalidResponseError as InvalidResponseError
from providers.abstractions.errors import ModelNotFoundError as ModelNotFoundError
from providers.abstractions.errors import PermissionDeniedError as PermissionDeniedError
from providers.abstractions.errors import ProviderConnectionError as ProviderConnectionError
from providers.abstractions.errors import ProviderError as ProviderError
from providers.abstractions.errors import ProviderTimeoutError as ProviderTimeoutError
from providers.abstractions.errors import RateLimitError as RateLimitError
from providers.abstractions.errors import ResponseTooLargeError as ResponseTooLargeError
from providers.abstractions.errors import ServerError as ServerError
from providers.abstractions.errors import StreamInterruptedError as StreamInterruptedError
from providers.abstractions.errors import StructuredOutputError as StructuredOutputError
from providers.abstractions.errors import UnsupportedOptionError as UnsupportedOptionError
from providers.abstractions.limits import Limits as Limits
from providers.abstractions.messages import ChatMessage as ChatMessage
from providers.abstractions.open_values import ChatFinishReason as ChatFinishReason
from providers.abstractions.open_values import ChatRole as ChatRole
from providers.abstractions.options import ChatOptions as ChatOptions
from providers.abstractions.options import ChatResponseFormat as ChatResponseFormat
from providers.abstractions.options import ChatToolMode as ChatToolMode
from providers.abstractions.options import ToolDeclaration as ToolDeclaration
from providers.abstractions.reasoning_options import ReasoningEffort as ReasoningEffort
from providers.abstractions.reasoning_options import ReasoningOptions as ReasoningOptions
from providers.abstractions.reasoning_options import ReasoningOutput as ReasoningOutput
from providers.lazy_exports import lazy_exports as _lazy_exports

if _TYPE_CHECKING:
    from providers.abstractions.embedding_errors import (
        EmbeddingInputTooLargeError as EmbeddingInputTooLargeError,
    )
    from providers.abstractions.embedding_errors import (
        EmbeddingResponseError as EmbeddingResponseError,
    )
    from providers.abstractions.embedding_errors import (
        EmbeddingsUnavailableError as EmbeddingsUnavailableError,
    )
    from providers.abstractions.embeddings import (
        DelegatingEmbeddingGenerator as DelegatingEmbeddingGenerator,
    )
    from providers.abstractions.embeddings import Embedding as Embedding
    from providers.abstractions.embeddings import (
        EmbeddingGenerationOptions as EmbeddingGenerationOptions,
    )
    from providers.abstractions.embeddings import EmbeddingGenerator as EmbeddingGenerator
    from providers.abstractions.embeddings import EmbeddingVector as EmbeddingVector
    from providers.abstractions.embeddings import GeneratedEmbeddings as GeneratedEmbeddings
    from providers.abstractions.embeddings import generate_embedding as generate_embedding
    from providers.abstractions.embeddings import generate_vector as generate_vector
    from providers.abstractions.functions import AIFunction as AIFunction
    from providers.abstractions.functions import InvalidArgumentsError as InvalidArgumentsError
    from providers.abstractions.services import ChatClientMetadata as ChatClientMetadata
    from providers.abstractions.structured_output import StructuredResponse as StructuredResponse
    from providers.abstractions.structured_output import get_response_as as get_response_as
    from providers.abstractions.structured_stream import StructuredStream as StructuredStream
    from providers.abstractions.structured_stream import StructuredUpdate as StructuredUpdate
    from providers.abstractions.structured_stream import (
        get_streaming_response_as as get_streaming_response_as,
    )
    from providers.abstractions.sync_client import SyncChatClient as SyncChatClient
    from providers.abstractions.token_count import TokenCount as TokenCount
    from providers.abstractions.token_counter import TokenCounter as TokenCounter
    from providers.backends import BackendProfile as BackendProfile
    from providers.backends import profile_for as profile_for
    from providers.builder import ChatClientBuilder as ChatClientBuilder
    from providers.chat_completions.client import DEFAULT_TIMEOUT as DEFAULT_TIMEOUT
    from providers.chat_completions.client import (
        OpenAiCompatibleChatClient as OpenAiCompatibleChatClient,
    )
    from providers.chat_completions.client import Timeouts as Timeouts
    from providers.chat_completions.normalize import ChunkNormalizer as ChunkNormalizer
    from providers.config import BackendConfig as BackendConfig
    from providers.config import OaicompatConfig as OaicompatConfig
    from providers.config import client_for as client_for
    from providers.config import create_embedding_generator as create_embedding_generator
    from providers.config import load_config as load_config
    from providers.embeddings import (
        OpenAiCompatibleEmbeddingGenerator as OpenAiCompatibleEmbeddingGenerator,
    )
    from providers.factory import ExtraBodyChatClient as ExtraBodyChatClient
    from providers.factory import create_chat_client as create_chat_client
    from providers.layers.embedding_cache import (
        CachingEmbeddingGenerator as CachingEmbeddingGenerator,
    )
    from providers.layers.embedding_retry import (
        RetryingEmbeddingGenerator as RetryingEmbeddingGenerator,
    )
    from providers.layers.fallback import FallbackChatClient as FallbackChatClient
    from providers.layers.function_invocation import (
        FunctionInvokingChatClient as FunctionInvokingChatClient,
    )
    from providers.layers.retry import RetryingChatClient as RetryingChatClient
    from providers.layers.retry import RetryPolicy as RetryPolicy
    from providers.layers.session_affinity import SessionAffinity as SessionAffinity
    from providers.layers.session_affinity import (
        SessionAffinityChatClient as SessionAffinityChatClient,
    )
    from providers.layers.text_recovery import TextRecoveryChatClient as TextRecoveryChatClient
    from providers.rerank import (
        OpenAiCompatibleRerankClient as OpenAiCompatibleRerankClient,
    )
    from providers.rerank import RerankedDocument as RerankedDocument
    from providers.rerank import RerankResponseError as RerankResponseError
    from providers.rerank import RerankResult as RerankResult
    from providers.rerank import RerankUnavailableError as RerankUnavailableError
    from providers.rerank import ScoreKind as ScoreKind
    from providers.responses import ConversationMode as ConversationMode
    from providers.responses import (
        OpenAiCompatibleResponsesClient as OpenAiCompatibleResponsesClient,
    )
    from providers.responses import ResponsesEventNormalizer as ResponsesEventNormalizer
    from providers.transport.endpoint import Endpoint as Endpoint
    from providers.transport.sse import ServerSentEvent as ServerSentEvent
    from providers.transport.sse import SseDecoder as SseDecoder
    from telemetry.otel import OpenTelemetryChatClient as OpenTelemetryChatClient
    from telemetry.telemetry_client import TelemetryChatClient as TelemetryChatClient

# What costs cold-import time loads on first use: the HTTP client (httpx and asyncio, about two
# thirds of it), structlog for retry, the parser registry for recovery. The chat
# abstractions stay eager, so code that only handles messages and updates never pays for them.
_lazy_exports(
    __name__,
    {
        # embeddings: nothing a chat client needs
        ".abstractions.embedding_errors": (
            "EmbeddingInputTooLargeError",
            "EmbeddingResponseError",
            "EmbeddingsUnavailableError",
        ),
        ".embeddings": ("OpenAiCompatibleEmbeddingGenerator",),
        ".abstractions.token_count": ("TokenCount",),
        ".abstractions.token_counter": ("TokenCounter",),
        ".rerank": (
            "OpenAiCompatibleRerankClient",
            "RerankResponseError",
            "RerankResult",
            "RerankUnavailableError",
            "RerankedDocument",
            "ScoreKind",
        ),
        ".layers.embedding_cache": ("CachingEmbeddingGenerator",),
        ".layers.embedding_retry": ("RetryingEmbeddingGenerator",),
        ".abstractions.embeddings": (
            "DelegatingEmbeddingGenerator",
            "Embedding",
            "EmbeddingGenerationOptions",
            "EmbeddingGenerator",
            "EmbeddingVector",
            "GeneratedEmbeddings",
            "generate_embedding",
            "generate_vector",
        ),
        # value classes (about 1 ms each to build) that a streamed chat never makes
        ".abstractions.functions": ("AIFunction", "InvalidArgumentsError"),
        ".abstractions.services": ("ChatClientMetadata",),
        # pydantic, ~65 ms of cold import, for structured output only
        ".abstractions.structured_output": ("StructuredResponse", "get_response_as"),
        ".abstractions.structured_stream": (
            "StructuredStream",
            "StructuredUpdate",
            "get_streaming_response_as",
        ),
        ".abstractions.sync_client": ("SyncChatClient",),
        ".backends": ("BackendProfile", "profile_for"),
        ".builder": ("ChatClientBuilder",),
        ".chat_completions.client": ("DEFAULT_TIMEOUT", "OpenAiCompatibleChatClient", "Timeouts"),
        ".chat_completions.normalize": ("ChunkNormalizer",),
        ".config": (
            "BackendConfig",
            "OaicompatConfig",
            "client_for",
            "create_embedding_generator",
            "load_config",
        ),
        ".factory": ("ExtraBodyChatClient", "create_chat_client"),
        ".layers.fallback": ("FallbackChatClient",),
        ".layers.function_invocation": ("FunctionInvokingChatClient",),
        ".layers.retry": ("RetryPolicy", "RetryingChatClient"),
        ".layers.session_affinity": ("SessionAffinity", "SessionAffinityChatClient"),
        ".layers.text_recovery": ("TextRecoveryChatClient",),
        ".responses": (
            "ConversationMode",
            "OpenAiCompatibleResponsesClient",
            "ResponsesEventNormalizer",
        ),
        ".transport.endpoint": ("Endpoint",),
        ".transport.sse": ("ServerSentEvent", "SseDecoder"),
        "telemetry.otel": ("OpenTelemetryChatClient",),
        "telemetry.telemetry_client": ("TelemetryChatClient",),
    },
)
