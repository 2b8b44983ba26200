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

from typing import TYPE_CHECKING as _TYPE_CHECKING

from providers.abstractions.chat_client import ChatClient as ChatClient
from providers.abstractions.chat_client import ChatInput as ChatInput
from providers.abstractions.chat_response import ChatResponse as ChatResponse
from providers.abstractions.chat_response import ChatResponseBuilder as ChatResponseBuilder
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
from providers.abstractions.limits import DEFAULT_LIMITS as DEFAULT_LIMITS
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
    from providers.abstractions.functions import AIFunction as AIFunction
    from providers.abstractions.functions import InvalidArgumentsError as InvalidArgumentsError
    from providers.abstractions.parsed_text import ParsedText as ParsedText
    from providers.abstractions.services import ChatClientMetadata as ChatClientMetadata

_lazy_exports(
    __name__,
    {
        ".functions": ("AIFunction", "InvalidArgumentsError"),
        ".parsed_text": ("ParsedText",),
        ".services": ("ChatClientMetadata",),
    },
)
