"""``OpenAiCompatibleRerankClient`` over respx: each server's shape, the request, the order,
the score kinds, the opt-in sigmoid, and the error answers."""

from __future__ import annotations

import json
import math
from typing import Any

import httpx
import pytest
import respx

from providers.abstractions.errors import (
    AuthenticationError,
    ConfigurationError,
    ConfigurationTypeError,
)
from providers.rerank import (
    VLLM_SCORE,
    OpenAiCompatibleRerankClient,
    RerankResponseError,
    RerankRoute,
    RerankUnavailableError,
)

BASE = "http://rank.test"
DOCS = ["hi", "it is a bear", "The giant panda is a bear species endemic to China."]
SCORES = [-3.5, 1.25, 7.0]  # what the fake servers score each document


def llamacpp_answer(body: dict[str, Any]) -> dict[str, Any]:
    """llama.cpp: results sorted by score, top_n applied, raw logits, no document."""
    results = [{"index": i, "relevance_score": SCORES[i]} for i in range(len(body["documents"]))]
    results.sort(key=lambda r: -r["relevance_score"])
    results = results[: body.get("top_n", len(results))]
    return {
        "model": "rr",
        "object": "list",
        "usage": {"prompt_tokens": 30, "total_tokens": 30},
        "results": results,
    }


def vllm_answer(body: dict[str, Any]) -> dict[str, Any]:
    """vLLM: Jina/Cohere results with the document echoed as {text}."""
    results: list[dict[str, Any]] = [
        {"index": i, "document": {"text": doc}, "relevance_score": 1 / (1 + math.exp(-SCORES[i]))}
        for i, doc in enumerate(body["documents"])
    ]
    results.sort(key=lambda r: -r["relevance_score"])
    if body.get("top_n"):
        results = results[: body["top_n"]]
    return {
        "id": "rerank-1",
        "model": "rr",
        "usage": {"prompt_tokens": 12, "total_tokens": 12},
        "results": results,
    }


def sglang_answer(body: dict[str, Any]) -> list[dict[str, Any]]:
    """SGLang: a bare list, sorted, with ``score`` and per-item meta_info."""
    items = [
        {"score": SCORES[i], "document": doc, "index": i, "meta_info": {"prompt_tokens": 5}}
        for i, doc in enumerate(body["documents"])
    ]
    return sorted(items, key=lambda r: -r["score"])


def serving(make: Any, seen: list[Any] | None = None) -> Any:
    def respond(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        if seen is not None:
            seen.append((request.url.path, body))
        return httpx.Response(200, json=make(body))

    return respond


@pytest.mark.parametrize(
    ("backend", "make", "kind"),
    [
        ("llamacpp", llamacpp_answer, "logit"),
        ("vllm", vllm_answer, "probability"),
        ("sglang", sglang_answer, "unknown"),
    ],
)
@respx.mock
async def test_each_server_gives_one_shape(backend: str, make: Any, kind: str) -> None:
    seen: list[Any] = []
    respx.post(f"{BASE}/v1/rerank").mock(side_effect=serving(make, seen))
    async with OpenAiCompatibleRerankClient(BASE, "rr", backend=backend) as ranker:
        result = await ranker.rerank("What is a panda?", DOCS)
    assert result.indices() == [2, 1, 0]
    assert [d.document for d in result] == [DOCS[2], DOCS[1], DOCS[0]]
    assert result.score_kind == kind
    assert result.normalized is None
    scores = [d.score for d in result]
    assert scores == sorted(scores, reverse=True)
    assert all(d.score == d.raw_score for d in result)
    assert result.usage is not None and result.usage.input_token_count in (30, 12, 15)
    assert seen == [("/v1/rerank", {"model": "rr", "query": "What is a panda?", "documents": DOCS})]


@respx.mock
async def test_a_v1_base_url_reaches_the_same_route_and_top_n_is_sent() -> None:
    seen: list[Any] = []
    respx.post(f"{BASE}/v1/rerank").mock(side_effect=serving(llamacpp_answer, seen))
    async with OpenAiCompatibleRerankClient(f"{BASE}/v1", backend="llamacpp") as ranker:
        result = await ranker.rerank("q", DOCS, top_n=2)
    assert result.indices() == [2, 1]
    assert seen[0][1] == {"query": "q", "documents": DOCS, "top_n": 2}


@respx.mock
async def test_vllm_score_route_has_its_own_form() -> None:
    seen: list[Any] = []

    def score(body: dict[str, Any]) -> dict[str, Any]:
        data = [{"index": i, "object": "score", "score": 0.1 * (i + 1)} for i in range(3)]
        return {
            "id": "s",
            "object": "list",
            "model": "rr",
            "data": data,
            "usage": {"prompt_tokens": 9, "total_tokens": 9},
        }

    respx.post(f"{BASE}/score").mock(side_effect=serving(score, seen))
    async with OpenAiCompatibleRerankClient(BASE, "rr", backend="vllm", route=VLLM_SCORE) as ranker:
        result = await ranker.rerank("q", DOCS, top_n=2)
    assert seen[0][1] == {"model": "rr", "text_1": "q", "text_2": DOCS}
    # /score has no top_n: every document came back, the best two are kept here, and said so
    assert result.indices() == [2, 1]
    assert result.additional_properties["top_n_applied"] == "client"
    assert result.score_kind == "probability"


@respx.mock
async def test_sigmoid_is_opt_in_recorded_and_keeps_the_raw_score() -> None:
    respx.post(f"{BASE}/v1/rerank").mock(side_effect=serving(llamacpp_answer))
    async with OpenAiCompatibleRerankClient(BASE, backend="llamacpp", normalize="sigmoid") as r:
        result = await r.rerank("q", DOCS)
    assert result.normalized == "sigmoid"
    assert result.score_kind == "probability"
    for item in result:
        assert item.raw_score == SCORES[item.index]
        assert item.score == pytest.approx(1 / (1 + math.exp(-SCORES[item.index])))
        assert 0 < item.score < 1


@respx.mock
async def test_sigmoid_leaves_probabilities_alone() -> None:
    respx.post(f"{BASE}/v1/rerank").mock(side_effect=serving(vllm_answer))
    async with OpenAiCompatibleRerankClient(BASE, backend="vllm", normalize="sigmoid") as r:
        result = await r.rerank("q", DOCS)
    assert result.normalized is None
    assert all(d.score == d.raw_score for d in result)


@respx.mock
async def test_score_kind_given_by_the_caller_wins() -> None:
    respx.post(f"{BASE}/v1/rerank").mock(side_effect=serving(vllm_answer))
    async with OpenAiCompatibleRerankClient(BASE, backend="vllm", score_kind="logit") as r:
        assert (await r.rerank("q", DOCS)).score_kind == "logit"


@respx.mock
async def test_ties_keep_the_documents_order() -> None:
    answer = {
        "results": [
            {"index": 2, "relevance_score": 1.0},
            {"index": 0, "relevance_score": 1.0},
            {"index": 1, "relevance_score": 1.0},
        ]
    }
    respx.post(f"{BASE}/v1/rerank").mock(return_value=httpx.Response(200, json=answer))
    async with OpenAiCompatibleRerankClient(BASE) as ranker:
        assert (await ranker.rerank("q", DOCS)).indices() == [0, 1, 2]


async def test_no_documents_ask_nothing() -> None:
    async with OpenAiCompatibleRerankClient(BASE) as ranker:  # no route mocked: no request
        result = await ranker.rerank("q", [])
    assert result.documents == []


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (("q", "one string"), ConfigurationTypeError),
        (("q", ["a", 3]), ConfigurationTypeError),
        ((5, ["a"]), ConfigurationTypeError),
        (("q", ["a"], 0), ConfigurationError),
        (("q", ["a"], True), ConfigurationError),
    ],
)
async def test_bad_arguments_are_refused_before_sending(args: Any, error: type) -> None:
    async with OpenAiCompatibleRerankClient(BASE) as ranker:
        with pytest.raises(error):
            await ranker.rerank(*args)


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ConfigurationError):
        OpenAiCompatibleRerankClient(BASE, normalize="softmax")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError):
        OpenAiCompatibleRerankClient(BASE, score_kind="odds")  # type: ignore[arg-type]


@respx.mock
async def test_llamacpp_without_reranking_says_the_fix() -> None:
    body = {
        "error": {
            "code": 501,
            "type": "not_supported_error",
            "message": "This server does not support reranking. Start it with `--reranking`",
        }
    }
    respx.post(f"{BASE}/v1/rerank").mock(return_value=httpx.Response(501, json=body))
    async with OpenAiCompatibleRerankClient(BASE, backend="llamacpp") as ranker:
        with pytest.raises(RerankUnavailableError) as caught:
            await ranker.rerank("q", DOCS)
    assert "--reranking" in caught.value.fix
    assert caught.value.backend == "llamacpp" and caught.value.status == 501
    assert "does not support reranking" in (caught.value.body or "")


@respx.mock
async def test_a_server_without_the_route_says_so() -> None:
    respx.post(f"{BASE}/v1/rerank").mock(
        return_value=httpx.Response(404, json={"detail": "Not Found"})
    )
    async with OpenAiCompatibleRerankClient(BASE, backend="vllm") as ranker:
        with pytest.raises(RerankUnavailableError) as caught:
            await ranker.rerank("q", DOCS)
    assert "no rerank route" in str(caught.value) and caught.value.status == 404


@respx.mock
async def test_other_errors_are_typed_as_the_chat_clients_type_them_without_the_key() -> None:
    respx.post(f"{BASE}/v1/rerank").mock(
        return_value=httpx.Response(401, json={"error": "Invalid key sk-secret-123"})
    )
    async with OpenAiCompatibleRerankClient(BASE, api_key="sk-secret-123") as ranker:
        with pytest.raises(AuthenticationError) as caught:
            await ranker.rerank("q", DOCS)
    assert "sk-secret-123" not in str(caught.value) + (caught.value.body or "")
    assert "sk-secret" not in repr(ranker)


@respx.mock
async def test_an_answer_that_is_not_json_is_typed_with_what_was_received() -> None:
    respx.post(f"{BASE}/v1/rerank").mock(return_value=httpx.Response(200, text="<html>oops"))
    async with OpenAiCompatibleRerankClient(BASE, backend="sglang") as ranker:
        with pytest.raises(RerankResponseError) as caught:
            await ranker.rerank("q", DOCS)
    assert caught.value.backend == "sglang" and caught.value.body == "<html>oops"


def test_a_route_is_data() -> None:
    client = OpenAiCompatibleRerankClient(BASE, route=RerankRoute("/rerank", score_kind="logit"))
    assert client.url == f"{BASE}/rerank" and client.score_kind == "logit"
