"""oaicompat as a Microsoft Agent Framework chat client (extra ``agent-framework``)."""

from providers.integrations.agent_framework.client import (
    OaicompatChatClient,
    OaicompatChatOptions,
)

__all__ = ["OaicompatChatClient", "OaicompatChatOptions"]
