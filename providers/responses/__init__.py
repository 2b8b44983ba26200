"""The Responses API (``/v1/responses``) behind the same ``ChatClient`` protocol as chat.

``OpenAiCompatibleResponsesClient`` is the client; ``ResponsesEventNormalizer`` turns events
and response objects into ``ChatResponseUpdate``s; ``ConversationMode`` says how history is
sent; ``build_responses_request`` and ``messages_to_input`` build the request body;
``RESPONSES_QUIRKS`` holds the per-backend differences.
"""

from providers.abstractions.usage import parse_responses_usage
from providers.responses.client import STORE_UNAVAILABLE_EVENT, OpenAiCompatibleResponsesClient
from providers.responses.conversation import ConversationChain, ConversationMode
from providers.responses.items import messages_to_input
from providers.responses.normalize import ResponsesEventNormalizer
from providers.responses.output import finish_reason_for
from providers.responses.quirks import RESPONSES_QUIRKS, ResponsesQuirks, responses_quirks_for
from providers.responses.request import build_responses_request

__all__ = [
    "RESPONSES_QUIRKS",
    "STORE_UNAVAILABLE_EVENT",
    "ConversationChain",
    "ConversationMode",
    "OpenAiCompatibleResponsesClient",
    "ResponsesEventNormalizer",
    "ResponsesQuirks",
    "build_responses_request",
    "finish_reason_for",
    "messages_to_input",
    "parse_responses_usage",
    "responses_quirks_for",
]
