"""Every answer ``read_answer`` must refuse, and the ones it must take."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
import respx

from providers.rerank import OpenAiCompatibleRerankClient, RerankResponseError
from providers.rerank.reading import read_answer

DOCS = ["a", "b", "c"]


def read(payload: Any, top_n: int | None = None) -> Any:
    return read_answer(payload, DOCS, top_n, backend="vllm", body=json.dumps(payload))


def results(*pairs: tuple[Any, Any]) -> dict[str, Any]:
    return {"results": [{"index": i, "relevance_score": s} for i, s in pairs]}


@pytest.mark.parametrize(
    ("payload", "top_n", "problem"),
    [
        ({"answer": []}, None, "wrong shape"),
        ("text", None, "wrong shape"),
        ({"results": [1, 2, 3]}, None, "wrong shape"),
        (results((0, 1.0), (1, 2.0), (3, 0.5)), None, "index out of range"),
        (results((0, 1.0), (1, 2.0), (-1, 0.5)), None, "index out of range"),
        (results((0, 1.0), (1, 2.0), (1, 0.5)), None, "duplicate index"),
        (results((0, 1.0), (1, 2.0), ("2", 0.5)), None, "bad index"),
        (results((0, 1.0), (1, 2.0), (True, 0.5)), None, "bad index"),
        (results((0, 1.0), (1, 2.0), (2, float("nan"))), None, "bad score"),
        (results((0, 1.0), (1, float("inf")), (2, 0.0)), None, "bad score"),
        (results((0, 1.0), (1, "high"), (2, 0.0)), None, "bad score"),
        (results((0, 1.0), (1, None), (2, 0.0)), None, "bad score"),
        (results((0, 1.0), (1, 2.0), (2, 0.5), (0, 0.1)), None, "too many results"),
        (results((0, 1.0), (1, 2.0)), 1, "too many results"),
        (results((0, 1.0), (1, 2.0)), None, "too few results"),
        (results((0, 1.0)), 2, "too few results"),
        (
            {"results": [{"index": 0, "relevance_score": 1.0, "document": {"text": "b"}}]},
            1,
            "document mismatch",
        ),
        ([{"index": 0, "score": 1.0, "document": "c"}], 1, "document mismatch"),
    ],
)
def test_bad_answers_are_typed_errors_that_keep_what_was_received(
    payload: Any, top_n: int | None, problem: str
) -> None:
    with pytest.raises(RerankResponseError) as caught:
        read(payload, top_n)
    error = caught.value
    assert error.problem == problem
    assert error.backend == "vllm" and "vllm" in str(error)
    assert error.payload is payload
    assert error.body == json.dumps(payload)


def test_every_document_scored_despite_top_n_is_kept_for_the_client_to_cut() -> None:
    answer = read(results((0, 1.0), (1, 2.0), (2, 3.0)), top_n=1)
    assert answer.top_n_applied_here is True
    assert answer.scores == [(0, 1.0), (1, 2.0), (2, 3.0)]


def test_top_n_above_the_documents_asks_for_all_of_them() -> None:
    answer = read(results((2, 1.0), (0, 2.0), (1, 3.0)), top_n=10)
    assert answer.top_n_applied_here is False
    assert [index for index, _ in answer.scores] == [2, 0, 1]


def test_integers_are_scores_and_the_model_and_usage_are_read() -> None:
    payload = {
        **results((0, 1), (1, 0), (2, -2)),
        "model": "m",
        "usage": {"prompt_tokens": 7, "total_tokens": 7},
    }
    answer = read(payload)
    assert answer.scores == [(0, 1.0), (1, 0.0), (2, -2.0)]
    assert answer.model_id == "m"
    assert answer.usage is not None and answer.usage.input_token_count == 7


def test_sglang_meta_info_is_summed_only_when_every_item_has_it() -> None:
    items = [{"index": i, "score": 0.0, "meta_info": {"prompt_tokens": 4}} for i in range(3)]
    assert read(items).usage.input_token_count == 12
    items[1]["meta_info"] = {}
    assert read(items).usage is None


@respx.mock
async def test_the_client_raises_the_reading_errors_with_the_body_text() -> None:
    text = '{"results": [{"index": 7, "relevance_score": 1.0}]}'
    respx.post("http://r.test/v1/rerank").mock(return_value=httpx.Response(200, text=text))
    async with OpenAiCompatibleRerankClient("http://r.test", backend="llamacpp") as ranker:
        with pytest.raises(RerankResponseError) as caught:
            await ranker.rerank("q", ["only one"])
    assert caught.value.problem == "index out of range"
    assert caught.value.body == text and caught.value.backend == "llamacpp"


@respx.mock
async def test_a_nan_in_the_json_text_is_refused() -> None:
    text = '{"results": [{"index": 0, "relevance_score": NaN}]}'
    respx.post("http://r.test/v1/rerank").mock(return_value=httpx.Response(200, text=text))
    async with OpenAiCompatibleRerankClient("http://r.test") as ranker:
        with pytest.raises(RerankResponseError) as caught:
            await ranker.rerank("q", ["one"])
    assert caught.value.problem == "bad score"
