"""Bad answers are typed errors that name the server and keep what was received; never a
shorter or reordered result (``decoding``)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
import respx

from providers.abstractions.embedding_errors import EmbeddingResponseError
from providers.abstractions.embeddings import EmbeddingGenerationOptions
from providers.abstractions.errors import InvalidResponseError
from providers.embeddings import OpenAiCompatibleEmbeddingGenerator
from providers.embeddings.decoding import AnswerReader, usage_of, vector_of
from tests.unit.providers.embeddings.helpers import BASE, URL, answer, b64


def reader(dimensions: int | None = None) -> AnswerReader:
    return AnswerReader(backend="vllm", model_id="emb", dimensions=dimensions, normalize=False)


def bad(payload: Any, expected: int, *, dimensions: int | None = None) -> EmbeddingResponseError:
    with pytest.raises(EmbeddingResponseError) as caught:
        reader(dimensions).add(payload, expected)
    error = caught.value
    assert isinstance(error, InvalidResponseError)
    assert error.backend == "vllm"
    assert "from vllm" in str(error)
    assert error.payload is payload
    return error


def items(*vectors: Any, indices: list[Any] | None = None) -> dict[str, Any]:
    rows = [{"embedding": vector} for vector in vectors]
    for row, index in zip(rows, indices if indices is not None else range(len(rows)), strict=True):
        if index is not ...:
            row["index"] = index
    return answer(rows)


def test_a_vector_of_another_width_in_the_same_answer() -> None:
    error = bad(items([1.0, 2.0], [1.0, 2.0, 3.0]), 2)
    assert error.problem == "wrong width"
    assert error.partial is not None
    assert [e.vector.tolist() for e in error.partial] == [[1.0, 2.0]]


def test_a_width_other_than_the_dimensions_asked_for() -> None:
    error = bad(items([1.0, 2.0, 3.0]), 1, dimensions=2)
    assert error.problem == "wrong width"
    assert "leave `dimensions` out" in str(error)


def test_a_width_other_than_an_earlier_batchs() -> None:
    answers = reader()
    answers.add(items([1.0, 2.0]), 1)
    with pytest.raises(EmbeddingResponseError) as caught:
        answers.add(items(b64([1.0, 2.0, 3.0])), 1)
    assert caught.value.partial is not None
    assert [e.vector.tolist() for e in caught.value.partial] == [[1.0, 2.0]]


@pytest.mark.parametrize("count", [1, 3])
def test_a_count_that_does_not_match_the_inputs(count: int) -> None:
    error = bad(items(*([[1.0]] * count)), 2)
    assert error.problem == "wrong count"
    assert f"has {count} embeddings for 2 inputs" in str(error)
    assert error.partial is not None and len(error.partial) == count


@pytest.mark.parametrize(
    ("indices", "problem"),
    [
        ([0, 0], "duplicate index"),
        ([0, 2], "index out of range"),
        ([-1, 0], "index out of range"),
        ([0, ...], "bad index"),
        ([0, "1"], "bad index"),
        ([0, True], "bad index"),
    ],
)
def test_an_index_that_cannot_place_the_vector(indices: list[Any], problem: str) -> None:
    error = bad(items([1.0], [2.0], indices=indices), 2)
    assert error.problem == problem
    assert error.partial is not None
    assert [e.vector.tolist() for e in error.partial] == [[1.0], [2.0]]  # as received


def test_no_index_at_all_keeps_the_order_received() -> None:
    answers = reader()
    answers.add(items([1.0], [2.0], indices=[..., ...]), 2)
    assert [e.vector.tolist() for e in answers.read] == [[1.0], [2.0]]


@pytest.mark.parametrize(
    "vector",
    [[1.0, float("nan")], [float("inf"), 1.0], [1e39, 1.0], b64([1.0, float("-inf")])],
)
def test_nan_and_infinity(vector: Any) -> None:
    error = bad(items(vector), 1)
    assert error.problem == "not finite"
    assert "NaN or infinite" in str(error)


async def test_a_nan_literal_in_the_json_text() -> None:
    text = '{"data": [{"index": 0, "embedding": [1.0, NaN]}]}'
    with respx.mock:
        respx.post(URL).mock(return_value=httpx.Response(200, text=text))
        async with OpenAiCompatibleEmbeddingGenerator(BASE, backend="sglang") as embedder:
            with pytest.raises(EmbeddingResponseError) as caught:
                await embedder.generate(["x"])
    assert caught.value.problem == "not finite"
    assert caught.value.backend == "sglang"


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ("AAAAAAA", "not a multiple of 4"),
        ("AAAAAAAA", "not a whole number of float32"),  # 6 bytes
        ("AA!A", "not base64"),
        (["1.0"], "not a number"),
        ([[1.0]], "not a number"),
        ({"values": [1.0]}, "type dict"),
        (None, "no vector"),
    ],
)
def test_a_vector_of_a_bad_shape(raw: Any, says: str) -> None:
    error = bad(items(raw), 1)
    assert error.problem == "bad vector"
    assert says in str(error)


def test_an_empty_vector() -> None:
    assert bad(items([]), 1).problem == "bad vector"


@pytest.mark.parametrize("payload", [{"object": "list"}, {"data": {"0": [1.0]}}, [1.0]])
def test_no_data_list(payload: Any) -> None:
    assert bad(payload, 1).problem == "no data"


def test_the_base64_bytes_are_little_endian_float32() -> None:
    assert vector_of(b64([1.5, -2.0, 3.25])).tolist() == [1.5, -2.0, 3.25]
    assert vector_of("AADAPw==").tolist() == [1.5]  # 1.5 as <f, written by hand


def test_usage_reads_only_integers() -> None:
    assert usage_of({"prompt_tokens": 3, "total_tokens": 3}) is not None
    assert usage_of({"prompt_tokens": "3"}) is None
    assert usage_of(None) is None
    partial = usage_of({"prompt_tokens": 5, "total_tokens": True})
    assert partial is not None
    assert (partial.input_token_count, partial.total_token_count) == (5, None)


async def test_a_bad_second_batch_keeps_the_first_in_partial() -> None:
    calls = 0

    def server(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        texts = json.loads(request.content)["input"]
        if calls == 1:
            return httpx.Response(200, json=items(*([[float(len(t))] for t in texts])))
        return httpx.Response(200, json=items([1.0]))  # one vector for two inputs

    with respx.mock:
        respx.post(URL).mock(side_effect=server)
        async with OpenAiCompatibleEmbeddingGenerator(BASE, max_batch_size=2) as embedder:
            with pytest.raises(EmbeddingResponseError) as caught:
                await embedder.generate(["a", "bb", "ccc", "dddd"])
    assert caught.value.partial is not None
    assert [e.vector[0] for e in caught.value.partial] == [1.0, 2.0, 1.0]


async def test_a_server_ignoring_dimensions_is_an_error_not_a_truncation() -> None:
    with respx.mock:
        respx.post(URL).mock(return_value=httpx.Response(200, json=items(b64([1.0] * 8))))
        async with OpenAiCompatibleEmbeddingGenerator(BASE, backend="llamacpp") as embedder:
            with pytest.raises(EmbeddingResponseError, match="8 dimensions where 4"):
                await embedder.generate(["x"], EmbeddingGenerationOptions(dimensions=4))


async def test_an_answer_that_is_not_json_is_an_invalid_response() -> None:
    with respx.mock:
        respx.post(URL).mock(return_value=httpx.Response(200, text="<html>oops</html>"))
        async with OpenAiCompatibleEmbeddingGenerator(BASE, backend="vllm") as embedder:
            with pytest.raises(InvalidResponseError) as caught:
                await embedder.generate(["x"])
    assert caught.value.backend == "vllm"
