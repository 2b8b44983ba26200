"""oaicompat as a pydantic-ai model (extra ``pydantic-ai``): ``OaicompatModel``, and
``OaicompatEmbeddingModel`` for ``pydantic_ai.Embedder``."""

from providers.integrations.pydantic_ai.embeddings import (
    OaicompatEmbeddingModel as OaicompatEmbeddingModel,
)
from providers.integrations.pydantic_ai.model import OaicompatModel as OaicompatModel
from providers.lazy_exports import lazy_exports as _lazy_exports

_lazy_exports(__name__, {})
