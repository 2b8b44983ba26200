"""One rerank answer read into ``RerankedDocument``s, checked, whatever the server's shape.

Shapes taken (``routes`` says who sends which): ``{results: [...]}`` (llama.cpp, vLLM, Jina,
Cohere), ``{data: [...]}`` (vLLM's ``/score``) or a bare list (SGLang). An item has an
``index`` and its score under ``relevance_score`` or ``score``; ``document`` (a string or
``{text}``), when sent, must be the caller's text at that index.

Nothing a server sends is taken on trust, and nothing is dropped or reordered to paper over it;
each of these is a ``RerankResponseError`` naming the server, with what was received:

* neither shape, or an item that is not an object;
* an ``index`` that is missing, not an integer, out of range, or repeated;
* a score that is missing, not a number, NaN or infinite;
* an echoed document that is not the caller's text at that index;
* more results than documents, or than ``top_n`` (except every document scored: a server that
  ignores ``top_n``, whose best ``top_n`` are kept here), or fewer than were asked for.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from providers.abstractions.usage import UsageDetails, parse_usage
from providers.rerank.errors import RerankResponseError

__all__ = ["RerankAnswer", "read_answer"]

_Refuse = Callable[[str, str], RerankResponseError]
"""Makes the error for a problem (its short name, then the detail)."""

_SCORE_KEYS = ("relevance_score", "score")


class RerankAnswer:
    """The checked scores of one answer, in the order received: ``(index, score)`` pairs."""

    __slots__ = ("model_id", "scores", "top_n_applied_here", "usage")

    def __init__(
        self,
        scores: list[tuple[int, float]],
        usage: UsageDetails | None,
        model_id: str | None,
        top_n_applied_here: bool,
    ) -> None:
        self.scores = scores
        self.usage = usage
        self.model_id = model_id
        self.top_n_applied_here = top_n_applied_here


def read_answer(
    payload: Any, documents: Sequence[str], top_n: int | None, *, backend: str, body: str
) -> RerankAnswer:
    """``payload`` (the parsed answer; ``body`` its text, kept on errors) checked against the
    ``documents`` and ``top_n`` that were sent."""

    def refuse(problem: str, detail: str) -> RerankResponseError:
        return RerankResponseError(
            f"{backend} sent a rerank answer this client cannot use: {detail}",
            problem=problem,
            payload=payload,
            backend=backend,
            body=body,
        )

    items = _items_of(payload)
    if items is None:
        raise refuse("wrong shape", "no results list (expected results, data, or a list)")
    if len(items) > len(documents):
        raise refuse("too many results", f"{len(items)} results for {len(documents)} documents")
    scores = [_read_item(item, position, documents, refuse) for position, item in enumerate(items)]
    seen: set[int] = set()
    for index, _ in scores:
        if index in seen:
            raise refuse("duplicate index", f"index {index} appears twice")
        seen.add(index)
    applied_here = _check_count(len(scores), len(documents), top_n, refuse)
    usage, model_id = _usage_and_model(payload, items)
    return RerankAnswer(scores, usage, model_id, applied_here)


def _items_of(payload: Any) -> list[Any] | None:
    if type(payload) is list:
        return payload
    if type(payload) is dict:
        for key in ("results", "data"):
            items = payload.get(key)
            if type(items) is list:
                return items
    return None


def _read_item(
    item: Any, position: int, documents: Sequence[str], refuse: _Refuse
) -> tuple[int, float]:
    """One item's ``(index, score)``, checked."""
    if type(item) is not dict:
        raise refuse("wrong shape", f"result {position} is not an object")
    index = item.get("index")
    if type(index) is not int:
        raise refuse("bad index", f"result {position} has no integer index")
    if not 0 <= index < len(documents):
        raise refuse(
            "index out of range", f"index {index} is outside the {len(documents)} documents sent"
        )
    found = next((item[key] for key in _SCORE_KEYS if key in item), None)
    if not isinstance(found, int | float) or isinstance(found, bool):
        raise refuse("bad score", f"result {position} (index {index}) has no numeric score")
    score = float(found)
    if not math.isfinite(score):
        raise refuse("bad score", f"the score of index {index} is {score}")
    echoed = item.get("document")
    if isinstance(echoed, dict):
        echoed = echoed.get("text")
    if isinstance(echoed, str) and echoed != documents[index]:
        raise refuse(
            "document mismatch", f"the document echoed for index {index} is not the one sent there"
        )
    return index, score


def _check_count(count: int, sent: int, top_n: int | None, refuse: _Refuse) -> bool:
    """Raises for a count that cannot be right; true when the server ignored ``top_n`` (it
    scored every document), so that the best ``top_n`` are to be kept here."""
    expected = sent if top_n is None else min(top_n, sent)
    if count == expected:
        return False
    if top_n is not None and count == sent:
        return True
    if count > expected:
        raise refuse("too many results", f"{count} results where top_n is {top_n}")
    raise refuse("too few results", f"{count} results where {expected} were asked for")


def _usage_and_model(payload: Any, items: list[Any]) -> tuple[UsageDetails | None, str | None]:
    """The answer's ``usage`` (or SGLang's per-item ``meta_info.prompt_tokens``, summed) and
    ``model``, when given."""
    if type(payload) is dict:
        usage = payload.get("usage")
        model = payload.get("model")
        parsed = parse_usage(usage) if isinstance(usage, dict) else None
        return parsed, model if isinstance(model, str) else None
    counts: list[int] = []
    for item in items:
        meta = item.get("meta_info")
        count = meta.get("prompt_tokens") if type(meta) is dict else None
        if type(count) is not int:
            return None, None
        counts.append(count)
    if counts:
        total = sum(counts)
        return UsageDetails(input_token_count=total, total_token_count=total), None
    return None, None
