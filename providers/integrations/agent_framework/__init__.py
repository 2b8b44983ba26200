"""oaicompat as a Microsoft Agent Framework chat client and embedding client (extra
``agent-framework``)."""

from providers.integrations.agent_framework.client import OaicompatChatClient as OaicompatChatClient
from providers.integrations.agent_framework.client import (
    OaicompatChatOptions as OaicompatChatOptions,
)
from providers.integrations.agent_framework.embeddings import (
    OaicompatEmbeddingClient as OaicompatEmbeddingClient,
)
from providers.integrations.agent_framework.embeddings import (
    OaicompatEmbeddingOptions as OaicompatEmbeddingOptions,
)
from providers.lazy_exports import lazy_exports as _lazy_exports

_lazy_exports(__name__, {})
