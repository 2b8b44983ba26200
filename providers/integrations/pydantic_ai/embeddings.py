"""``OaicompatEmbeddingModel``: an oaicompat ``EmbeddingGenerator`` as a pydantic-ai
``EmbeddingModel``, so ``pydantic_ai.Embedder(OaicompatEmbeddingModel(generator))`` embeds
queries and documents through the oaicompat pipeline.

pydantic-ai's own OpenAI embedding model reads the SDK's answer as it comes; the pipeline asks
each backend for the encoding it honours, reads either shape, batches a long list, retries and
checks every vector (a wrong width, a missing index, NaN are typed errors, raised here as
pydantic-ai's ``ModelHTTPError``/``ModelAPIError``, never a silently shorter result).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from providers.abstractions.embeddings import EmbeddingGenerationOptions, EmbeddingGenerator
from providers.abstractions.errors import ProviderError
from providers.integrations._extras import missing_extra
from providers.integrations._pipeline import EMBEDDINGS_ROLE, base_url_of, generator_from_config

try:
    from pydantic_ai.embeddings import EmbeddingModel, EmbeddingResult, EmbeddingSettings
    from pydantic_ai.embeddings.result import EmbedInputType
    from pydantic_ai.exceptions import UserError
    from pydantic_ai.models import check_allow_model_requests
except ModuleNotFoundError as error:
    raise missing_extra(error, "providers.integrations.pydantic_ai", "pydantic-ai") from error

from providers.integrations.pydantic_ai.convert import to_model_error, to_request_usage
from telemetry.embeddings import described

__all__ = ["OaicompatEmbeddingModel"]


class OaicompatEmbeddingModel(EmbeddingModel):
    """A pydantic-ai embedding model answered by an oaicompat ``EmbeddingGenerator``:
    ``Embedder(OaicompatEmbeddingModel(generator))`` or ``OaicompatEmbeddingModel.from_config``.

    Settings: ``dimensions`` (checked: a server that ignores it is an error, not a wider
    vector), ``extra_body`` (keys added to the request body). ``truncate`` is not sent (no
    OpenAI-compatible server takes it); ``extra_headers`` is refused, since the pipeline's
    headers are set when it is made (``create_embedding_generator(..., headers=...)``).
    ``input_type`` is recorded on the result and not sent: an OpenAI-compatible server has no
    such field (models that want a query prefix, such as nomic's ``search_query: ``, take it in
    the text). Vectors are lists of floats, as pydantic-ai's other models give.
    """

    def __init__(
        self,
        generator: EmbeddingGenerator,
        *,
        model_name: str | None = None,
        owns_generator: bool = False,
        settings: EmbeddingSettings | None = None,
    ) -> None:
        super().__init__(settings=settings)
        self.generator = generator
        self.owns_generator = owns_generator
        """Whether ``aclose`` closes ``generator`` (``from_config``'s own pipeline)."""
        self._backend, model = described(generator, None)
        self._model_name = model_name or model or "default"

    @classmethod
    def from_config(
        cls,
        path: str | os.PathLike[str] = "oaicompat.yaml",
        role: str = EMBEDDINGS_ROLE,
        *,
        telemetry: bool = False,
        settings: EmbeddingSettings | None = None,
        **generator_kwargs: Any,
    ) -> OaicompatEmbeddingModel:
        """The model for ``role`` of an oaicompat YAML file (by default the ``embeddings`` role,
        or the one backend declaring ``embeddings:``), over the standard embedding pipeline,
        which it owns; without oaicompat's telemetry unless ``telemetry=True``."""
        generator = generator_from_config(path, role, telemetry=telemetry, **generator_kwargs)
        return cls(generator, owns_generator=True, settings=settings)

    @property
    def model_name(self) -> str:
        return self._model_name

    @property
    def system(self) -> str:
        """The backend (``llamacpp``, ``vllm``…), for ``gen_ai.system``."""
        return self._backend

    @property
    def base_url(self) -> str | None:
        return base_url_of(self.generator)

    async def embed(
        self,
        inputs: str | Sequence[str],
        *,
        input_type: EmbedInputType,
        settings: EmbeddingSettings | None = None,
    ) -> EmbeddingResult:
        check_allow_model_requests()
        texts, merged = self.prepare_embed(inputs, settings)
        options = _options(merged)
        try:
            generated = await self.generator.generate(texts, options)
        except ProviderError as error:
            raise to_model_error(error, self.model_name) from error
        first = generated[0].model_id if len(generated) else None
        return EmbeddingResult(
            embeddings=[vector.tolist() for vector in generated.vectors()],
            inputs=texts,
            input_type=input_type,
            usage=to_request_usage(generated.usage),
            model_name=first or self.model_name,
            provider_name=self.system,
        )

    async def aclose(self) -> None:
        """Closes the generator when this model owns it (``from_config``)."""
        if self.owns_generator:
            await self.generator.aclose()


def _options(settings: EmbeddingSettings) -> EmbeddingGenerationOptions | None:
    if settings.get("extra_headers"):
        raise UserError(
            "extra_headers is not sent per call by OaicompatEmbeddingModel: give the headers "
            "to create_embedding_generator(..., headers=...)"
        )
    extra = settings.get("extra_body")
    if extra is not None and not isinstance(extra, dict):
        raise UserError("extra_body must be a dict of request-body keys")
    dimensions = settings.get("dimensions")
    if dimensions is None and not extra:
        return None
    return EmbeddingGenerationOptions(
        dimensions=dimensions, additional_properties=dict(extra) if extra else None
    )
