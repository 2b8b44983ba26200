"""The embeddings benchmark's pieces on tiny runs: the server answers what it says, every client
gets the server's vectors, a wrong vector is caught, and the table's figures come from the
measurements. No timing is asserted."""

from __future__ import annotations

import asyncio
import base64
import json
import struct
from collections.abc import Iterator
from typing import Any

import pytest

from benchmarks.embeddings import render, summarise
from benchmarks.embeddings_clients import CLIENTS, check_vectors, measure, texts_for
from benchmarks.embeddings_server import (
    EmbeddingsServer,
    _Fragments,
    answer_body,
    token_count,
    vector_bytes,
    vector_index,
)

WIDTH = 16


@pytest.fixture(scope="module")
def fragments() -> _Fragments:
    return _Fragments(WIDTH)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with EmbeddingsServer(dimensions=WIDTH) as base:
        yield base


def test_texts_are_distinct_and_about_forty_tokens() -> None:
    texts = texts_for(50)
    assert len(set(texts)) == 50
    assert all(35 <= token_count(text) <= 45 for text in texts)
    assert texts_for(50) == texts  # deterministic: every process embeds the same texts


@pytest.mark.parametrize("form", ["float", "base64", None])
def test_answer_carries_each_texts_vector_in_the_form_asked(
    fragments: _Fragments, form: str | None
) -> None:
    texts = ["alpha beta.", "gamma", "delta, epsilon"]
    request: dict[str, Any] = {"input": texts, "model": "m"}
    if form is not None:
        request["encoding_format"] = form
    answer = json.loads(answer_body(request, fragments))
    assert [item["index"] for item in answer["data"]] == [0, 1, 2]
    assert answer["model"] == "m"
    assert answer["usage"]["prompt_tokens"] == sum(token_count(text) for text in texts)
    for text, item in zip(texts, answer["data"], strict=True):
        expected = vector_bytes(vector_index(text), WIDTH)
        raw = item["embedding"]
        if form == "base64":
            assert base64.b64decode(raw) == expected
        else:  # float, also when not asked (OpenAI's default)
            assert struct.pack(f"<{WIDTH}f", *raw) == expected


def test_answer_refuses_what_is_not_a_list_of_strings(fragments: _Fragments) -> None:
    with pytest.raises(ValueError, match="strings"):
        answer_body({"input": [[1, 2, 3]]}, fragments)
    with pytest.raises(ValueError, match="encoding_format"):
        answer_body({"input": ["a"], "encoding_format": "int8"}, fragments)


def test_check_vectors_catches_a_wrong_vector_and_a_short_answer() -> None:
    texts = texts_for(6)
    right = [list(struct.unpack(f"<{WIDTH}f", vector_bytes(vector_index(t), WIDTH))) for t in texts]
    assert check_vectors(texts, right, WIDTH) == []
    wrong = [list(vector) for vector in right]
    wrong[3][5] += 1e-3
    assert check_vectors(texts, wrong, WIDTH) == ["vector 3 differs from the server's"]
    assert check_vectors(texts, right[:5], WIDTH) == ["5 vectors for 6 texts"]


@pytest.mark.parametrize("name", sorted(CLIENTS))
def test_every_client_gets_the_servers_vectors(server: str, name: str) -> None:
    if name.startswith("openai"):
        pytest.importorskip("openai")
    result = asyncio.run(measure(CLIENTS[name], server, count=20, batch=8, dimensions=WIDTH))
    assert result["problems"] == []
    assert result["client"] == name and result["count"] == 20
    assert result["cpu_s"] > 0
    assert result["peak_growth_kib"] >= 0


def test_a_server_of_another_width_is_reported(server: str) -> None:
    result = asyncio.run(
        measure(CLIENTS["ours-base64"], server, count=10, batch=4, dimensions=WIDTH * 2)
    )
    assert result["problems"]


def _run(name: str, cpu_s: float, peak_kib: int) -> dict[str, Any]:
    return {
        "client": name,
        "count": 1000,
        "cpu_s": cpu_s,
        "wall_s": cpu_s,
        "peak_growth_kib": peak_kib,
        "retained_kib": peak_kib // 2,
        "problems": [],
    }


def test_summary_ratios_are_medians_against_the_same_wire_form() -> None:
    runs = {
        "ours-base64": [_run("ours-base64", s, 5000) for s in (0.2, 0.9, 0.3)],
        "openai-default": [_run("openai-default", s, 9000) for s in (1.0, 0.6, 0.5)],
        "ours-float": [_run("ours-float", 1.0, 5000)],
    }
    raw = 1000 * 1024 * 4
    rows = {row["client"]: row for row in summarise(runs, raw)}
    assert rows["ours-base64"]["cpu_ratio"] == pytest.approx(0.3 / 0.6)
    assert rows["ours-base64"]["cpu_us_per_vector"] == pytest.approx(300.0)
    assert rows["ours-base64"]["peak_over_raw"] == pytest.approx(5000 * 1024 / raw)
    assert rows["ours-float"]["cpu_ratio"] is None  # openai-float was not measured
    table = render(list(rows.values()), raw)
    assert "ours-base64: CPU 0.50x (<= 0.5x) PASS; peak RSS 1.25x raw (<= 1.2x) FAIL" in table
    assert "ours-float: CPU - (<= 0.5x) n/a" in table
