"""What ``rerank`` returns, whatever the server: documents by relevance, and what the scores are.

One shape for every backend (``RerankResult``): a list of ``RerankedDocument(index, score,
document)`` sorted by score, highest first (equal scores keep the documents' order), the kind
of the scores (``routes.ScoreKind``), and the usage when the server reported it. ``index`` is
the document's position in the list the caller passed, and ``document`` is the caller's own
text at that position, never a server's echo of it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import field
from typing import Any, Literal

from providers.abstractions.records import value_class
from providers.abstractions.usage import UsageDetails
from providers.rerank.routes import ScoreKind

__all__ = ["Normalization", "RerankResult", "RerankedDocument"]

Normalization = Literal["sigmoid"]
"""A normalisation the client may apply to the scores (``normalize=``)."""


@value_class(frozen=True)
class RerankedDocument:
    """One document with its relevance to the query."""

    index: int
    """Position in the ``documents`` passed to ``rerank``."""
    score: float
    """The relevance, higher is more relevant; its kind is ``RerankResult.score_kind``."""
    document: str
    """``documents[index]``."""
    raw_score: float
    """The score as the server sent it (differs from ``score`` after a normalisation)."""


@value_class()
class RerankResult:
    """A rerank answer: ``documents`` sorted by score, highest first."""

    documents: list[RerankedDocument] = field(default_factory=list)
    score_kind: ScoreKind = "unknown"
    """``probability`` after ``normalize="sigmoid"``; else the backend's row's kind, or the
    client's ``score_kind`` when given."""
    normalized: Normalization | None = None
    """The normalisation this client applied (``None``: the scores are the server's)."""
    usage: UsageDetails | None = None
    model_id: str | None = None
    """The model the server says answered, when it said."""
    raw: Any = None
    """The answer as parsed, for what this shape does not carry."""
    additional_properties: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.documents)

    def __iter__(self) -> Iterator[RerankedDocument]:
        return iter(self.documents)

    def indices(self) -> list[int]:
        """The documents' positions, most relevant first."""
        return [item.index for item in self.documents]
