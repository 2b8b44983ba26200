"""``OaicompatEmbeddingClient``: an oaicompat ``EmbeddingGenerator`` as an Agent Framework
embedding client.

The framework's stock OpenAI embedding client is its telemetry layer over a raw client that
calls the OpenAI SDK; this class is the same telemetry layer over the oaicompat embedding
pipeline, so the framework traces each call while the pipeline asks each backend for the
encoding it honours, batches, retries and checks every vector (a wrong width, a missing index,
NaN are typed errors, never a silently shorter result). Vectors are ``list[float]``, as the
stock client's are, which is what the framework's vector stores take.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from providers.abstractions.embeddings import EmbeddingGenerationOptions, EmbeddingGenerator
from providers.abstractions.errors import ProviderError
from providers.integrations._extras import missing_extra
from providers.integrations._pipeline import EMBEDDINGS_ROLE, base_url_of, generator_from_config

try:
    from agent_framework import (
        BaseEmbeddingClient,
        Embedding,
        GeneratedEmbeddings,
    )
    from agent_framework import (
        EmbeddingGenerationOptions as FrameworkEmbeddingOptions,
    )
    from agent_framework.observability import EmbeddingTelemetryLayer
except ModuleNotFoundError as error:  # pragma: no cover - exercised in a subprocess
    raise missing_extra(
        error, "providers.integrations.agent_framework", "agent-framework"
    ) from error

from providers.integrations.agent_framework.contents import to_framework_error, to_framework_usage
from telemetry.embeddings import described

__all__ = ["OaicompatEmbeddingClient", "OaicompatEmbeddingOptions"]


# Without the framework installed (mypy in a light venv) the base is Any, which takes no `total`.
class OaicompatEmbeddingOptions(FrameworkEmbeddingOptions, total=False):  # type: ignore[call-arg, unused-ignore]
    """The framework's options (``model``, ``dimensions``), plus ``extra_body``: keys sent as
    they are in the request body (a server's own, such as llama.cpp's ``embd_normalize``)."""

    extra_body: dict[str, Any]


class OaicompatEmbeddingClient(  # type: ignore[misc, unused-ignore]
    EmbeddingTelemetryLayer[str, list[float], OaicompatEmbeddingOptions],
    BaseEmbeddingClient[str, list[float], OaicompatEmbeddingOptions],
):
    """``OaicompatEmbeddingClient(generator)`` or ``OaicompatEmbeddingClient.from_config(...)``.

    ``generator`` is any oaicompat ``EmbeddingGenerator`` (``create_embedding_generator``, a
    layer of your own). ``await client.get_embeddings(["text", …])`` gives the framework's
    ``GeneratedEmbeddings``, one ``Embedding`` per value in order, with the usage the server
    reported. A ``ProviderError`` surfaces as the framework's ``ChatClientException`` family
    (the original as its inner exception and ``__cause__``).
    """

    OTEL_PROVIDER_NAME: ClassVar[str] = "oaicompat"

    def __init__(
        self,
        generator: EmbeddingGenerator,
        *,
        owns_generator: bool = False,
        additional_properties: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        self.generator = generator
        self.owns_generator = owns_generator
        """Whether ``aclose`` closes ``generator`` (``from_config``'s own pipeline)."""
        backend, self.model = described(generator, None)
        self.backend = backend
        super().__init__(additional_properties=additional_properties, **kwargs)

    @classmethod
    def from_config(
        cls,
        path: str | os.PathLike[str] = "oaicompat.yaml",
        role: str = EMBEDDINGS_ROLE,
        *,
        telemetry: bool = False,
        **generator_kwargs: Any,
    ) -> OaicompatEmbeddingClient:
        """The client for ``role`` of an oaicompat YAML file (by default the ``embeddings``
        role, or the one backend that declares ``embeddings:``), over the standard embedding
        pipeline, which it owns; without oaicompat's telemetry unless ``telemetry=True`` (the
        framework's telemetry layer traces each call)."""
        generator = generator_from_config(path, role, telemetry=telemetry, **generator_kwargs)
        return cls(generator, owns_generator=True)

    def service_url(self) -> str:
        return base_url_of(self.generator) or "Unknown"

    async def get_embeddings(
        self,
        values: Sequence[str],
        *,
        options: OaicompatEmbeddingOptions | None = None,
    ) -> GeneratedEmbeddings[list[float], OaicompatEmbeddingOptions]:
        try:
            generated = await self.generator.generate(list(values), _options(options))
        except ProviderError as error:
            raise to_framework_error(error) from error
        embeddings = [
            Embedding(
                e.vector.tolist(),
                model=e.model_id,
                additional_properties=dict(e.additional_properties or {}),
            )
            for e in generated
        ]
        usage = to_framework_usage(generated.usage) if generated.usage is not None else None
        return GeneratedEmbeddings(embeddings, options=options, usage=usage)

    async def aclose(self) -> None:
        if self.owns_generator:
            await self.generator.aclose()


def _options(options: Mapping[str, Any] | None) -> EmbeddingGenerationOptions | None:
    if not options:
        return None
    extra = options.get("extra_body")
    return EmbeddingGenerationOptions(
        model_id=options.get("model") or None,
        dimensions=options.get("dimensions"),
        additional_properties=dict(extra) if extra else None,
    )
