"""A scripted ``EmbeddingGenerator`` for the embedding layers' tests."""

from __future__ import annotations

from collections.abc import Sequence

from providers.abstractions.embeddings import (
    Embedding,
    EmbeddingGenerationOptions,
    EmbeddingVector,
    GeneratedEmbeddings,
)
from providers.abstractions.usage import UsageDetails


class FakeEmbedder:
    """Embeds a text as ``[len(text), dimensions or 2]``; raises the scripted errors first."""

    model_id = "fake-embed"

    def __init__(self, *errors: BaseException) -> None:
        self.errors = list(errors)
        self.calls: list[list[str]] = []
        self.closed = False

    async def generate(
        self, values: Sequence[str], options: EmbeddingGenerationOptions | None = None
    ) -> GeneratedEmbeddings:
        self.calls.append(list(values))
        if self.errors:
            raise self.errors.pop(0)
        width = float(options.dimensions or 2) if options is not None else 2.0
        embeddings = [
            Embedding(EmbeddingVector([float(len(text)), width]), "fake-embed") for text in values
        ]
        tokens = sum(len(text) for text in values)
        usage = UsageDetails(input_token_count=tokens, total_token_count=tokens)
        return GeneratedEmbeddings(embeddings, usage=usage)

    async def aclose(self) -> None:
        self.closed = True
