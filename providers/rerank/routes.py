"""Where each backend reranks and what its scores are: one row per backend, read as data.

The issue's shapes, checked against each server's source:

* llama.cpp (``tools/server``): ``POST /v1/rerank`` (also ``/rerank``, ``/v1/reranking``,
  ``/reranking``) with ``query``, ``documents`` and ``top_n``, answered
  ``{model, object, usage, results: [{index, relevance_score}]}``. The score is the rank pooling's
  raw output, a logit (any real number). The route exists only when the server was started with
  ``--reranking`` (``--rerank``) and ``--pooling rank``; otherwise it answers 501 (or 4xx), which
  ``RerankUnavailableError`` reports with that fix.
* vLLM (``vllm/entrypoints/pooling/scoring/protocol.py``): Jina/Cohere ``RerankRequest``
  (``query``, ``documents``, ``top_n``; 0 means all) on ``/rerank``, ``/v1/rerank`` and
  ``/v2/rerank``, answered ``{id, model, usage, results: [{index, document: {text},
  relevance_score}]}``; and its own ``/score`` (``text_1`` the query, ``text_2`` the documents)
  answered ``{data: [{index, object: "score", score}], usage}`` in the documents' order. A
  single-label cross-encoder's score goes through a sigmoid unless the model's configuration
  names another activation or the request sends ``use_activation: false``: a probability.
* SGLang (``python/sglang/srt/entrypoints/openai/serving_rerank.py``): ``/v1/rerank`` with
  ``query`` and ``documents``, answered with a bare list ``[{score, document, index,
  meta_info}]`` sorted by score. The score is the cross-encoder head's output through the
  activation the model's configuration names (``sbert_ce_default_activation_function``), the
  identity otherwise (bge-reranker: a logit), so its kind is not known from the server alone.

The answer is read by its shape whatever the row says (``reading``), so a row only chooses the
route, the request's form and the score's kind. A server we have never seen gets the
Jina/Cohere form on ``/v1/rerank`` and ``unknown`` scores.
"""

from __future__ import annotations

from typing import Literal

from providers.abstractions.records import value_class
from providers.backends import Backend

__all__ = [
    "RERANK_ROUTES",
    "VLLM_SCORE",
    "RequestForm",
    "RerankRoute",
    "ScoreKind",
    "rerank_route_for",
]

ScoreKind = Literal["logit", "probability", "unknown"]
"""What a relevance score is: ``logit`` (any real number; higher is more relevant),
``probability`` (in [0, 1], a sigmoid already applied), ``unknown`` (the server does not say)."""

RequestForm = Literal["rerank", "score"]
"""``rerank``: ``{model, query, documents, top_n}`` (Jina/Cohere, llama.cpp, SGLang);
``score``: vLLM's ``{model, text_1, text_2}``, which has no ``top_n``."""


@value_class(frozen=True)
class RerankRoute:
    """How one backend is asked to rerank."""

    path: str
    """Below the server's root (``Endpoint.server_path``), so a ``/v1`` base URL works as well as
    a bare host."""
    form: RequestForm = "rerank"
    score_kind: ScoreKind = "unknown"
    sends_top_n: bool = True
    """``top_n`` goes in the request; the answer is checked against it either way."""


RERANK_ROUTES: dict[str, RerankRoute] = {
    Backend.LLAMACPP: RerankRoute("/v1/rerank", score_kind="logit"),
    Backend.VLLM: RerankRoute("/v1/rerank", score_kind="probability"),
    Backend.SGLANG: RerankRoute("/v1/rerank", score_kind="unknown"),
    Backend.GENERIC: RerankRoute("/v1/rerank"),
}
"""One row per backend that reranks; any other backend gets the ``generic`` row."""

VLLM_SCORE = RerankRoute("/score", form="score", score_kind="probability", sends_top_n=False)
"""vLLM's own ``/score``, for ``route=VLLM_SCORE``: the same scores without ``top_n``."""


def rerank_route_for(backend: str | None) -> RerankRoute:
    """The row for a backend name; unknown names get the ``generic`` row."""
    return RERANK_ROUTES.get((backend or Backend.GENERIC).lower(), RERANK_ROUTES[Backend.GENERIC])
