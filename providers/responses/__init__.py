"""The Responses API (``/v1/responses``) behind the same ``ChatClient`` protocol as chat.

``OpenAiCompatibleResponsesClient`` is the client; ``ResponsesEventNormalizer`` turns events
and response objects into ``ChatResponseUpdate``s; ``ConversationMode`` says how history is
sent; ``build_responses_request`` and ``messages_to_input`` build the request body;
``RESPONSES_QUIRKS`` holds the per-backend differences.
"""

from providers.abstractions.usage import parse_responses_usage as parse_responses_usage
from providers.lazy_exports import lazy_exports as _lazy_exports
from providers.responses.client import STORE_UNAVAILABLE_EVENT as STORE_UNAVAILABLE_EVENT
from providers.responses.client import (
    OpenAiCompatibleResponsesClient as OpenAiCompatibleResponsesClient,
)
from providers.responses.conversation import ConversationChain as ConversationChain
from providers.responses.conversation import ConversationMode as ConversationMode
from providers.responses.items import messages_to_input as messages_to_input
from providers.responses.normalize import ResponsesEventNormalizer as ResponsesEventNormalizer
from providers.responses.output import finish_reason_for as finish_reason_for
from providers.responses.quirks import RESPONSES_QUIRKS as RESPONSES_QUIRKS
from providers.responses.quirks import ResponsesQuirks as ResponsesQuirks
from providers.responses.quirks import responses_quirks_for as responses_quirks_for
from providers.responses.request import build_responses_request as build_responses_request

_lazy_exports(__name__, {})
