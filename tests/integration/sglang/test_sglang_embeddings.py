"""``/v1/embeddings`` on the real SGLang 0.5.23 server serving a chat model (set ``plain``).

SGLang mounts ``/v1/embeddings`` whatever the model; for a generating model its tokenizer
manager refuses the request before scheduling: 400, SGLang's top-level error body, "This model
does not appear to be an embedding model by default. Please add `--is-embedding` when launching
the server or try another model." The scripted scheduler does not pool (``--is-embedding`` is
not served by the rig), so only this answer is real traffic here; the recorded answer is kept in
``transcripts/embeddings/sglang/`` (``OAICOMPAT_RECORD_TRANSCRIPTS=1`` rewrites it).
"""

from __future__ import annotations

import json
import os
from typing import Any

import httpx
import pytest

from providers import EmbeddingsUnavailableError, InvalidRequestError
from providers.embeddings import OpenAiCompatibleEmbeddingGenerator
from tests.integration.rigs.scripted import PROJECT_ROOT
from tests.integration.rigs.sglang.install import SGLANG_VERSION
from tests.integration.rigs.sglang.server import SglangServer

FOLDER = PROJECT_ROOT / "transcripts" / "embeddings" / "sglang"
NAME = "captured--plain--embeddings--chat-model"
WORDING = "does not appear to be an embedding model"


async def test_a_chat_model_answers_as_recorded(sglang_plain: SglangServer) -> None:
    body = {"model": sglang_plain.model_id, "input": ["It is sunny."]}
    async with httpx.AsyncClient(base_url=sglang_plain.base_url, timeout=60) as http:
        response = await http.post("/v1/embeddings", json=body)
    if os.environ.get("OAICOMPAT_RECORD_TRANSCRIPTS"):
        _write(body, response)
    recorded = json.loads((FOLDER / f"{NAME}.raw").read_bytes())
    assert response.status_code == 400
    assert response.json() == recorded
    assert WORDING in recorded["message"] and "error" not in recorded, "a top-level error body"


async def test_a_chat_model_is_an_invalid_request(sglang_plain: SglangServer) -> None:
    """What the generator gives today: a 400 ``InvalidRequestError`` keeping SGLang's words."""
    async with OpenAiCompatibleEmbeddingGenerator(
        sglang_plain.base_url, sglang_plain.model_id, backend="sglang"
    ) as embedder:
        with pytest.raises(InvalidRequestError) as caught:
            await embedder.generate(["It is sunny."])
    assert caught.value.status == 400
    assert WORDING in str(caught.value)


async def test_a_chat_model_is_embeddings_unavailable(sglang_plain: SglangServer) -> None:
    async with OpenAiCompatibleEmbeddingGenerator(
        sglang_plain.base_url, sglang_plain.model_id, backend="sglang"
    ) as embedder:
        with pytest.raises(EmbeddingsUnavailableError):
            await embedder.generate(["It is sunny."])


def _write(body: dict[str, Any], response: httpx.Response) -> None:
    FOLDER.mkdir(parents=True, exist_ok=True)
    (FOLDER / f"{NAME}.raw").write_bytes(response.content)
    sidecar = {
        "provenance": {
            "kind": "captured",
            "source": f"tests/integration/sglang/test_sglang_embeddings.py::{NAME}",
            "server": f"SGLang {SGLANG_VERSION}",
            "flags": ["(the rig's plain set: a Qwen3 chat model, no --is-embedding)"],
            "notes": (
                "POST /v1/embeddings to the real SGLang server (scripted scheduler, weightless "
                "Qwen3 folder). The tokenizer manager refuses before scheduling. SGLang's error "
                "body is top-level ({object, message, type, param, code}), not under 'error'."
            ),
        },
        "api": "embeddings",
        "http": {"method": "POST", "path": "/v1/embeddings"},
        "request": body,
        "response": {
            "status": response.status_code,
            "content_type": response.headers["content-type"],
            "headers": {},
        },
        "expected": {
            "error": {"status": response.status_code, "message": response.json()["message"]}
        },
    }
    text = json.dumps(sidecar, indent=2, ensure_ascii=False) + "\n"
    (FOLDER / f"{NAME}.json").write_text(text, encoding="utf-8")
