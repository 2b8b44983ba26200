"""SGLang 0.5.23's real OpenAI server on CPU with a scripted scheduler: its sets and fixtures.

Each set is a flag set of the captured traffic (``shared/transcripts-captured/sglang/README.md``).
Servers come from the rig server pool of the session (``rigs/pool.py``), which vLLM shares, and
the SGLang venv and model folders are built on first use (``scripted_rig`` in
``rigs/scripted.py``); without them the tests skip with the reason, except on CI, where they fail.
"""

from __future__ import annotations

from tests.integration.rigs.pool import RigSets, register_rig, server_fixture
from tests.integration.rigs.scripted import ServerSet, scripted_rig
from tests.integration.rigs.sglang.install import SGLANG_RIG_NAME, SGLANG_STEPS
from tests.integration.rigs.sglang.server import SglangServer

_QWEN25 = ("--reasoning-parser", "qwen3", "--tool-call-parser", "qwen25")

SERVER_SETS: dict[str, ServerSet] = {
    # name: the model folder (hf_models.MODELS), `sglang serve` flags, as in the captures
    "plain": ServerSet("qwen3"),
    # qwen25 is SGLang's alias of its hermes-style `qwen` function-call parser
    "qwen3-qwen25": ServerSet("qwen3", _QWEN25),
    # No --default-chat-template-kwargs here (the captures sent enable_thinking per request):
    # SGLang's deepseek-r1 parser starts in reasoning mode whatever the prompt did.
    "r1-deepseek": ServerSet("r1-distill", ("--reasoning-parser", "deepseek-r1")),
    "qwen3coder": ServerSet("qwen3-coder", ("--tool-call-parser", "qwen3_coder")),
    # the Responses API's store (previous_response_id, GET /v1/responses/{id}) is off by default
    "qwen3-qwen25-store": ServerSet("qwen3", (*_QWEN25, "--enable-response-store")),
}

FIXTURES: dict[str, str] = {
    "sglang_plain": "plain",
    "sglang_qwen3_qwen25": "qwen3-qwen25",
    "sglang_r1_deepseek": "r1-deepseek",
    "sglang_qwen3coder": "qwen3coder",
    "sglang_qwen3_qwen25_store": "qwen3-qwen25-store",
}
"""Which server set each server fixture below asks for."""

register_rig(
    RigSets(
        "sglang",
        "SGLang",
        FIXTURES,
        scripted_rig(SGLANG_RIG_NAME, SGLANG_STEPS, SglangServer, SERVER_SETS),
    )
)

# The server fixtures of FIXTURES: each gives the ready server of its set from the pool.
sglang_plain = server_fixture(SglangServer, "Qwen3 tokenizer and template, no parsers.")
sglang_qwen3_qwen25 = server_fixture(
    SglangServer, "Qwen3, ``--reasoning-parser qwen3 --tool-call-parser qwen25``."
)
sglang_r1_deepseek = server_fixture(
    SglangServer, "R1-Distill template (llama.cpp's version), ``--reasoning-parser deepseek-r1``."
)
sglang_qwen3coder = server_fixture(
    SglangServer, "Qwen3-Coder template, ``--tool-call-parser qwen3_coder``."
)
sglang_qwen3_qwen25_store = server_fixture(
    SglangServer, "``qwen3-qwen25`` with ``--enable-response-store``."
)
