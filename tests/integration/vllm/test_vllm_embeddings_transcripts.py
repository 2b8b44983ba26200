"""The vLLM 0.33.0 exchanges recorded in ``transcripts/embeddings/vllm/``, and a check that the
real server still answers each as recorded.

Each exchange is sent with plain ``httpx`` (no client of ours in between) to the rig server of
its set; the answer must equal the recorded body, apart from the fields vLLM makes up per
request (``id``, ``created``). With ``OAICOMPAT_RECORD_TRANSCRIPTS=1`` the answers are written
instead: ``captured--<set>--<api>--<what>.raw`` (the body bytes exactly) and its ``.json``
sidecar (provenance: server, flags, this test as the source; the request; the status and
content type; ``expected``, read from the body by :func:`reading`, which uses no client code).

The vectors come from the scripted engine (``rigs/pooled_vectors.py``), not from a model: the
shapes, the encodings, the error answers and every field around the vectors are vLLM's own.
"""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.integration.rigs.scripted import PROJECT_ROOT
from tests.integration.rigs.vllm.install import VLLM_VERSION
from tests.integration.rigs.vllm.server import VllmServer
from tests.integration.vllm.conftest import SERVER_SETS

FOLDER = PROJECT_ROOT / "transcripts" / "embeddings" / "vllm"
RECORD_ENV = "OAICOMPAT_RECORD_TRANSCRIPTS"
MODEL = "Qwen/Qwen3-0.6B"
VOLATILE = ("id", "created")
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


@dataclass(frozen=True)
class Exchange:
    set_name: str
    api: str
    what: str
    path: str
    body: dict[str, Any]
    notes: str = ""

    @property
    def name(self) -> str:
        return f"captured--{self.set_name}--{self.api}--{self.what}"


def _embed(what: str, body: dict[str, Any], notes: str = "") -> Exchange:
    return Exchange("embed", "embeddings", what, "/v1/embeddings", {"model": MODEL, **body}, notes)


_RERANK = {
    "query": "the weather in Paris",
    "documents": ["Bread.", "the weather in Paris is sunny"],
}

EXCHANGES = (
    _embed("float", {"input": ["It is sunny in Paris.", "Bread."], "encoding_format": "float"}),
    _embed("base64", {"input": ["It is sunny in Paris."], "encoding_format": "base64"}),
    _embed(
        "dimensions-refused",
        {"input": ["It is sunny."], "dimensions": 8},
        "a model without Matryoshka training refuses `dimensions` (param null)",
    ),
    _embed("unknown-model", {"model": "no-such-model", "input": ["a"]}),
    _embed(
        "context-exceeded",
        {"input": ["weather " * 5000]},
        "one input past --max-model-len 4096 (param input_tokens, 'at least 4097')",
    ),
    _embed("empty-string", {"input": [""]}, "an empty string fails the whole request"),
    _embed("empty-list", {"input": []}),
    Exchange(
        "plain",
        "embeddings",
        "chat-model",
        "/v1/embeddings",
        {"model": MODEL, "input": ["a"]},
        "a chat model: vLLM mounts /v1/embeddings only for an embedding model (FastAPI's 404)",
    ),
    Exchange(
        "embed",
        "rerank",
        "v1-rerank-top-n",
        "/v1/rerank",
        {"model": MODEL, **_RERANK, "top_n": 1},
        "an embedding model reranks too: scores are cosine similarities (bi-encoder)",
    ),
    Exchange("embed", "rerank", "rerank", "/rerank", {"model": MODEL, **_RERANK}),
    Exchange(
        "embed",
        "rerank",
        "score",
        "/score",
        {"model": MODEL, "text_1": _RERANK["query"], "text_2": _RERANK["documents"]},
    ),
    Exchange(
        "plain",
        "rerank",
        "chat-model",
        "/v1/rerank",
        {"model": MODEL, **_RERANK},
        "a chat model has no rerank route (FastAPI's 404)",
    ),
    Exchange(
        "plain",
        "tokenize",
        "messages-tools",
        "/tokenize",
        {
            "model": MODEL,
            "messages": [{"role": "user", "content": "Weather in Paris?"}],
            "tools": [WEATHER_TOOL],
            "add_generation_prompt": True,
        },
        "the chat form: messages and tools rendered with the served template, then counted",
    ),
    Exchange(
        "plain",
        "tokenize",
        "prompt",
        "/tokenize",
        {"model": MODEL, "prompt": "Hello world", "add_special_tokens": False},
    ),
)


def reading(exchange: Exchange, status: int, body: Any) -> dict[str, Any]:
    """What the body says, read by its shape: the error's status and message, else the count
    and width of the vectors, the rerank order and scores, or the token count."""
    if status >= 400:
        error = body.get("error") if isinstance(body, dict) else None
        message = error.get("message") if isinstance(error, dict) else body.get("detail")
        return {"error": {"status": status, "message": message}}
    if exchange.api == "embeddings":
        data = body["data"]
        first = data[0]["embedding"]
        width = len(first) if isinstance(first, list) else len(base64.b64decode(first)) // 4
        return {"count": len(data), "dimensions": width, "usage": body.get("usage")}
    if exchange.api == "rerank":
        items = body["results"] if "results" in body else body["data"]
        key = "relevance_score" if "results" in body else "score"
        return {"scores": [[item["index"], item[key]] for item in items], "usage": body["usage"]}
    return {"count": body["count"], "max_model_len": body.get("max_model_len")}


def stable(body: Any) -> Any:
    return {k: v for k, v in body.items() if k not in VOLATILE} if isinstance(body, dict) else body


def _of_set(set_name: str) -> list[Exchange]:
    return [exchange for exchange in EXCHANGES if exchange.set_name == set_name]


# One test per server set (fixtures named statically, so the rig pool plans their start-ups).
@pytest.mark.parametrize("exchange", _of_set("embed"), ids=lambda e: e.name)
async def test_embedding_server_answers_as_recorded(
    vllm_embed: VllmServer, exchange: Exchange
) -> None:
    await _check(vllm_embed, exchange)


@pytest.mark.parametrize("exchange", _of_set("plain"), ids=lambda e: e.name)
async def test_chat_server_answers_as_recorded(vllm_plain: VllmServer, exchange: Exchange) -> None:
    await _check(vllm_plain, exchange)


async def _check(server: VllmServer, exchange: Exchange) -> None:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=60) as http:
        response = await http.post(exchange.path, json=exchange.body)
    if os.environ.get(RECORD_ENV):
        _write(exchange, response)
    raw = FOLDER / f"{exchange.name}.raw"
    sidecar = json.loads((FOLDER / f"{exchange.name}.json").read_text(encoding="utf-8"))
    assert response.status_code == sidecar["response"]["status"]
    assert response.headers["content-type"] == sidecar["response"]["content_type"]
    recorded = json.loads(raw.read_bytes())
    assert stable(response.json()) == stable(recorded)
    assert reading(exchange, response.status_code, recorded) == sidecar["expected"]
    assert sidecar["request"] == exchange.body


def _write(exchange: Exchange, response: httpx.Response) -> None:
    FOLDER.mkdir(parents=True, exist_ok=True)
    (FOLDER / f"{exchange.name}.raw").write_bytes(response.content)
    server_set = SERVER_SETS[exchange.set_name]
    sidecar = {
        "provenance": {
            "kind": "captured",
            "source": f"tests/integration/vllm/{Path(__file__).name}::{exchange.name}",
            "server": f"vLLM {VLLM_VERSION}",
            "flags": [
                *("--served-model-name", MODEL, "--max-model-len", "4096"),
                *server_set.flags,
            ],
            "notes": (
                f"POST {exchange.path} to the real vLLM OpenAI server on CPU with the rig's "
                "scripted engine in place of the model (weightless Qwen3 folder, hidden_size "
                "64): vectors and scores come from tests/integration/rigs/pooled_vectors.py, "
                f"everything else is vLLM's own. {exchange.notes[:1].upper()}{exchange.notes[1:]}"
            ).strip(),
        },
        "api": exchange.api,
        "http": {"method": "POST", "path": exchange.path},
        "request": exchange.body,
        "response": {
            "status": response.status_code,
            "content_type": response.headers["content-type"],
            "headers": {"server": response.headers.get("server", "")},
        },
        "expected": reading(exchange, response.status_code, response.json()),
    }
    text = json.dumps(sidecar, indent=2, ensure_ascii=False) + "\n"
    (FOLDER / f"{exchange.name}.json").write_text(text, encoding="utf-8")
