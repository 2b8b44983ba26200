"""``OaicompatAgentsModel``: an OpenAI Agents SDK model answered by the oaicompat pipeline.

It is the SDK's own ``OpenAIChatCompletionsModel`` over an ``AsyncOpenAI`` whose HTTP client
holds ``OaicompatHttpx2Transport``, not a new implementation of the SDK's ``Model`` interface.
That interface speaks Responses-API items (input items in, output items and stream events out);
a model of our own would rewrite the SDK's converter and stream handler (items to chat
messages and back, reasoning replay, handoffs, output schemas, tracing spans), which the SDK
keeps in step with its runner. The transport already hands that class a clean OpenAI answer
(reasoning in ``reasoning_content``, recovered calls as real ``tool_calls``), so the class only
adds what the SDK decides by looking at the base URL, which here is no OpenAI server's:

* a run's session key: the runner sends ``prompt_cache_key`` (from the run's ``conversation_id``,
  ``session`` or ``RunConfig.group_id``, else one key per run) only to models that say they take
  it; this one does, and the transport makes the key ``ChatOptions.conversation_id``, so every
  turn of a session goes to the replica that holds its cache;
* usage on streamed runs: ``stream_options.include_usage`` is asked for unless the settings say
  ``include_usage=False`` (the SDK asks only OpenAI's servers by default);
* no SDK retries: the pipeline retries as configured, and the SDK must not repeat on top.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import AsyncIterator
from typing import Any, Self

from providers.abstractions.chat_client import ChatClient
from providers.abstractions.services import ChatClientMetadata, service_of
from providers.integrations._extras import missing_extra
from providers.integrations._pipeline import client_from_config

try:
    import httpx2
    from agents import ModelSettings, OpenAIChatCompletionsModel
    from openai import AsyncOpenAI

    from providers.integrations.openai_httpx2 import OaicompatHttpx2Transport
except ModuleNotFoundError as error:
    raise missing_extra(error, "providers.integrations.openai_agents", "openai-agents") from error

__all__ = ["OaicompatAgentsModel"]

_BASE_URL = "http://oaicompat.invalid/v1"
"""Never contacted: chat requests end in the transport. Other requests (``GET /models``) fail
here rather than reach a server the configuration does not name."""


class OaicompatAgentsModel(OpenAIChatCompletionsModel):
    """The Agents SDK's chat-completions model with the oaicompat pipeline behind it.

    ``client``: the pipeline (``create_chat_client``, ``client_for``…), or use
    ``OaicompatAgentsModel.from_config("oaicompat.yaml", "main")``. ``model``: the name the SDK
    shows in traces (default: the configured model id); the configured model is the one sent
    unless ``request_model=True``. ``owns_client``: ``close`` closes the pipeline too.
    The other arguments are ``OpenAIChatCompletionsModel``'s.
    """

    def __init__(
        self,
        client: ChatClient,
        *,
        model: str | None = None,
        request_model: bool = False,
        owns_client: bool = False,
        **chat_completions_options: Any,
    ) -> None:
        transport = OaicompatHttpx2Transport(
            client, request_model=request_model, owns_client=owns_client
        )
        openai_client = AsyncOpenAI(
            api_key="oaicompat",  # not sent: the pipeline sends the configured credentials
            base_url=_BASE_URL,
            http_client=httpx2.AsyncClient(transport=transport),
            max_retries=0,
        )
        metadata = service_of(client, ChatClientMetadata)
        name = model or (metadata.model_id if metadata is not None else None) or "oaicompat"
        super().__init__(name, openai_client, **chat_completions_options)
        self.client = client
        """The pipeline that answers the model's requests."""
        self.openai_client = openai_client
        """The ``AsyncOpenAI`` the SDK's class sends through the transport."""

    @classmethod
    def from_config(
        cls,
        path: str | os.PathLike[str] = "oaicompat.yaml",
        role: str = "main",
        *,
        telemetry: bool = False,
        **kwargs: Any,
    ) -> Self:
        """A model over the configured role's standard pipeline, which it owns (``close``
        closes it). oaicompat's telemetry is off unless asked for: the SDK traces each model
        call itself. ``model``, ``request_model`` and ``OpenAIChatCompletionsModel``'s own
        arguments go to the constructor, the rest to ``client_for`` (``http_client``…)."""
        own = {key: kwargs.pop(key) for key in _OWN_ARGUMENTS if key in kwargs}
        client = client_from_config(path, role, telemetry=telemetry, **kwargs)
        return cls(client, owns_client=True, **own)

    def _supports_default_prompt_cache_key(self) -> bool:
        """The runner's hook: whether to send the run's session key (module docstring)."""
        return True

    async def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        """The SDK's stream, with usage asked for unless the settings refuse it."""
        settings = kwargs.get("model_settings", args[2] if len(args) > 2 else None)
        if isinstance(settings, ModelSettings) and settings.include_usage is None:
            settings = dataclasses.replace(settings, include_usage=True)
            if "model_settings" in kwargs:
                kwargs["model_settings"] = settings
            else:
                args = (*args[:2], settings, *args[3:])
        async for event in super().stream_response(*args, **kwargs):
            yield event

    async def close(self) -> None:
        """Closes the HTTP client, the transport and, when the model owns it, the pipeline."""
        await self.openai_client.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()


_OWN_ARGUMENTS = (
    "model",
    "request_model",
    "should_replay_reasoning_content",
    "strict_feature_validation",
    "buffer_streamed_tool_calls",
)
