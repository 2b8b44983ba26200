"""Reranking: ``OpenAiCompatibleRerankClient`` and its parts.

* ``client``: the client (the wire: headers, budgets, the request body);
* ``routes``: each backend's route, request form and score kind, as rows;
* ``reading``: an answer read by its shape and checked;
* ``results``: what ``rerank`` returns (``RerankResult``, ``RerankedDocument``);
* ``errors`` / ``error_answers``: the typed errors, and the error answers with one known fix.
"""

from providers.lazy_exports import lazy_exports as _lazy_exports
from providers.rerank.client import OpenAiCompatibleRerankClient as OpenAiCompatibleRerankClient
from providers.rerank.errors import RerankResponseError as RerankResponseError
from providers.rerank.errors import RerankUnavailableError as RerankUnavailableError
from providers.rerank.results import RerankedDocument as RerankedDocument
from providers.rerank.results import RerankResult as RerankResult
from providers.rerank.routes import RERANK_ROUTES as RERANK_ROUTES
from providers.rerank.routes import VLLM_SCORE as VLLM_SCORE
from providers.rerank.routes import RerankRoute as RerankRoute
from providers.rerank.routes import ScoreKind as ScoreKind

_lazy_exports(__name__, {})
