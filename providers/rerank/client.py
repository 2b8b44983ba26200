"""``OpenAiCompatibleRerankClient``: documents ordered by relevance to a query, from llama.cpp,
vLLM, SGLang or any Jina/Cohere-style ``/rerank``.

Connection, credentials, time budgets and bounded reading are the wire clients' own
(``HttpClientBase``, ``fetch_whole``); the route and the scores' kind are the backend's row
(``routes``), the answer's checks ``reading``'s, the error answers with a fix
``error_answers``'.

Usage::

    async with OpenAiCompatibleRerankClient("http://localhost:8080", backend="llamacpp") as ranker:
        result = await ranker.rerank("What is a panda?", ["hi", "a bear of China"], top_n=1)
        best = result.documents[0]  # RerankedDocument(index=1, score=..., document=...)
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import httpx

from providers.abstractions.errors import ConfigurationError, ConfigurationTypeError
from providers.abstractions.limits import Limits
from providers.backends import BackendProfile, profile_for
from providers.chat_completions.http_client_base import (
    DEFAULT_TIMEOUT,
    HttpClientBase,
    fetch_whole,
    mask_secrets,
    url_for_errors,
)
from providers.rerank.reading import RerankAnswer, read_answer
from providers.rerank.results import Normalization, RerankedDocument, RerankResult
from providers.rerank.routes import RerankRoute, ScoreKind, rerank_route_for
from providers.transport.json_guard import loads_within
from providers.transport.timeouts import Timeouts

if TYPE_CHECKING:
    from providers.abstractions.sync_client import SyncChatClient
    from providers.transport.httpx2_bridge import AsyncHttpClient

__all__ = ["OpenAiCompatibleRerankClient"]


class OpenAiCompatibleRerankClient(HttpClientBase):
    """Reranks over the backend's route (``routes.RERANK_ROUTES``).

    ``base_url``, ``model_id`` (``None``: the server's one model), ``api_key``, ``backend``,
    ``http_client`` (borrowed: not closed by ``aclose``), ``timeout``/``timeouts``, ``headers``,
    ``limits``, ``proxy``, ``trust_env`` and ``sensitive_headers`` are as for
    ``OpenAiCompatibleChatClient``. ``route``: another ``RerankRoute`` than the row's (vLLM's
    ``routes.VLLM_SCORE``, a proxy's path). ``score_kind``: what the scores are, when the
    deployment knows better than the row (a vLLM request with ``use_activation: false``).
    ``normalize="sigmoid"``: scores that are not probabilities go through a sigmoid here,
    recorded on the result (``RerankResult.normalized``; ``raw_score`` keeps the server's).
    """

    def __init__(
        self,
        base_url: str,
        model_id: str | None = None,
        api_key: str | None = None,
        *,
        backend: str | BackendProfile | None = None,
        http_client: AsyncHttpClient | None = None,
        timeout: httpx.Timeout | float | None = DEFAULT_TIMEOUT,
        timeouts: Timeouts | None = None,
        headers: Mapping[str, str] | None = None,
        limits: Limits | None = None,
        proxy: str | None = None,
        trust_env: bool = True,
        sensitive_headers: Collection[str] | None = None,
        route: RerankRoute | None = None,
        score_kind: ScoreKind | None = None,
        normalize: Normalization | None = None,
    ) -> None:
        super().__init__(
            base_url,
            model_id,
            api_key,
            http_client=http_client,
            timeout=timeout,
            timeouts=timeouts,
            headers=headers,
            capability_overrides=None,
            limits=limits,
            proxy=proxy,
            trust_env=trust_env,
            sensitive_headers=sensitive_headers,
        )
        self.profile = profile_for(backend)
        self.route = route or rerank_route_for(self.profile.name)
        if score_kind not in (None, "logit", "probability", "unknown"):
            raise ConfigurationError("score_kind must be 'logit', 'probability' or 'unknown'")
        self.score_kind: ScoreKind = score_kind or self.route.score_kind
        if normalize not in (None, "sigmoid"):
            raise ConfigurationError("normalize must be None or 'sigmoid'")
        self.normalize: Normalization | None = normalize
        self.url = self.endpoint.server_path(self.route.path)

    def __repr__(self) -> str:
        # Never the headers: they hold the API key.
        return (
            f"{type(self).__name__}(base_url={self.endpoint.api_base!r}, "
            f"model_id={self.model_id!r}, backend={self.profile.name!r})"
        )

    def as_sync(self) -> SyncChatClient:
        raise ConfigurationError("a rerank client has no blocking chat API")

    def build_request_body(
        self, query: str, documents: Sequence[str], top_n: int | None = None
    ) -> dict[str, Any]:
        """The JSON body ``rerank`` sends (useful for logging and tests)."""
        body: dict[str, Any] = {"model": self.model_id} if self.model_id else {}
        if self.route.form == "score":
            body.update(text_1=query, text_2=list(documents))
            return body
        body.update(query=query, documents=list(documents))
        if top_n is not None and self.route.sends_top_n:
            body["top_n"] = top_n
        return body

    async def rerank(
        self, query: str, documents: Sequence[str], top_n: int | None = None
    ) -> RerankResult:
        """``documents`` by relevance to ``query``, most relevant first: all of them, or the best
        ``top_n``. An empty list is answered without asking the server."""
        texts = _checked(query, documents, top_n)
        if not texts:
            return RerankResult(score_kind=self.score_kind)
        payload, text = await self._post(self.build_request_body(query, texts, top_n))
        answer = read_answer(payload, texts, top_n, backend=self.profile.name, body=text)
        return self._result(answer, texts, top_n, payload)

    def _result(
        self, answer: RerankAnswer, texts: list[str], top_n: int | None, payload: Any
    ) -> RerankResult:
        """The checked scores as one ``RerankResult``: normalised if asked, sorted by score
        (ties in the documents' order), cut to ``top_n`` where the server ignored it.

        A row's ``probability`` is the usual model's (vLLM's cross-encoders end in a sigmoid);
        a score outside [0, 1] shows another kind of model (vLLM reranks with an embedding model
        too, by cosine), so that answer's kind is ``unknown``, never a wrong ``probability``."""
        kind = self.score_kind
        if kind == "probability" and any(not 0.0 <= s <= 1.0 for _, s in answer.scores):
            kind = "unknown"
        sigmoid = self.normalize == "sigmoid" and kind != "probability"
        ranked = sorted(answer.scores, key=lambda pair: (-pair[1], pair[0]))
        if answer.top_n_applied_here and top_n is not None:
            ranked = ranked[:top_n]
        documents = [
            RerankedDocument(index, _sigmoid(score) if sigmoid else score, texts[index], score)
            for index, score in ranked
        ]
        result = RerankResult(
            documents,
            score_kind="probability" if sigmoid else kind,
            normalized="sigmoid" if sigmoid else None,
            usage=answer.usage,
            model_id=answer.model_id,
            raw=payload,
        )
        if answer.top_n_applied_here:
            result.additional_properties["top_n_applied"] = "client"
        return result

    async def _post(self, body: dict[str, Any]) -> tuple[Any, str]:
        """The answer parsed, and its text (kept on errors); an error answer as its typed
        error."""
        backend = self.profile.name
        # deferred: the mapping is made per request only as the chat client's is
        from providers.transport.error_mapping import TransportErrorMapping

        mapping = TransportErrorMapping(
            backend=backend,
            url=url_for_errors(self.url),
            connect_budget=self.timeouts.connect,
            secrets=self._secret_texts,
        )
        response, content, _ = await fetch_whole(
            self._http,
            "POST",
            self.url,
            body=body,
            headers=self._headers,
            extensions=self._request_extensions,
            total=self.timeouts.total,
            backend=backend,
            mapping=mapping,
            limits=self.limits,
        )
        status = response.status_code
        if status >= 400:
            raise self._typed_error(status, content, response.headers)
        text = content.decode("utf-8", "replace")
        try:
            return loads_within(content, self.limits.max_json_depth, backend), text
        except ValueError:
            # deferred: bad answers only
            from providers.rerank.errors import RerankResponseError

            raise RerankResponseError(
                f"{backend} sent a rerank answer that is not JSON ({len(text)} characters)",
                problem="not JSON",
                status=status,
                backend=backend,
                body=text[:2000],
            ) from None

    def _typed_error(self, status: int, content: bytes, headers: httpx.Headers) -> Exception:
        """An error answer with a known fix (``error_answers``), else as the chat clients type
        it (an unknown model with the served ids, a 401, a 429…)."""
        # deferred: error answers only (their patterns and the error-body reader)
        from providers.rerank.error_answers import rerank_error

        masked = mask_secrets(content, self._secrets)
        known = rerank_error(
            status, masked, backend=self.profile.name, url=url_for_errors(self.url)
        )
        return known if known is not None else self._status_error(status, content, headers)


def _sigmoid(score: float) -> float:
    """The logistic function, without overflow for large negative scores."""
    if score >= 0:
        return 1.0 / (1.0 + math.exp(-score))
    exp = math.exp(score)
    return exp / (1.0 + exp)


def _checked(query: str, documents: Sequence[str], top_n: int | None) -> list[str]:
    """The documents as a list of strings, after the arguments' checks. Messages name the
    position and the type, never the value."""
    if not isinstance(query, str):
        raise ConfigurationTypeError(f"query is a {type(query).__name__}, not a str")
    if isinstance(documents, str | bytes):
        raise ConfigurationTypeError("documents must be a sequence of strings, not one string")
    texts = list(documents)
    for position, document in enumerate(texts):
        if not isinstance(document, str):
            raise ConfigurationTypeError(
                f"documents[{position}] is a {type(document).__name__}, not a str"
            )
    if top_n is not None and (isinstance(top_n, bool) or not isinstance(top_n, int) or top_n < 1):
        raise ConfigurationError(f"top_n must be an int >= 1 or None, not {top_n!r}")
    return texts
