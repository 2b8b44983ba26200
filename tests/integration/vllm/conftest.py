"""The real ``vllm serve`` (0.33.0) on CPU with a scripted engine: its server sets and fixtures.

One server per flag set of the captured traffic (``shared/transcripts-captured/vllm/README.md``),
from the session's rig server pool (``rigs/pool.py``, shared with SGLang). The first run builds
the vLLM venv and the weightless model folders (``rigs/scripted.py``: ``scripted_rig``); a rig
that cannot be built skips its tests with the reason, or fails them on CI.
"""

from __future__ import annotations

from tests.integration.rigs.pool import RigSets, register_rig, server_fixture
from tests.integration.rigs.scripted import ServerSet, scripted_rig
from tests.integration.rigs.vllm.install import VLLM_RIG_NAME, VLLM_STEPS
from tests.integration.rigs.vllm.server import VllmServer

_HERMES = (
    *("--enable-auto-tool-choice", "--tool-call-parser", "hermes"),
    *("--reasoning-parser", "qwen3"),
)
_THINKING_ON = '{"enable_thinking": true}'

SERVER_SETS: dict[str, ServerSet] = {
    # name: the model folder (hf_models.MODELS), `vllm serve` flags, environment
    "plain": ServerSet("qwen3"),
    "qwen3-hermes": ServerSet("qwen3", _HERMES),
    # llama.cpp's R1 template closes the think block in the prompt unless enable_thinking is
    # truthy; the flag makes the prompt end with "<think>\n", as the HF original template does.
    "r1-deepseek": ServerSet(
        "r1-distill",
        ("--reasoning-parser", "deepseek_r1", "--default-chat-template-kwargs", _THINKING_ON),
    ),
    "qwen3coder": ServerSet(
        "qwen3-coder", ("--enable-auto-tool-choice", "--tool-call-parser", "qwen3_coder")
    ),
    # the response store is an environment switch in vLLM 0.33
    "qwen3-hermes-store": ServerSet("qwen3", _HERMES, env={"VLLM_ENABLE_RESPONSES_API_STORE": "1"}),
    # Qwen3 turned into an embedding model by vLLM's adapter: the pooling runner mounts
    # /v1/embeddings, /pooling and the bi-encoder /score and /rerank routes; the scripted
    # engine pools deterministic vectors (rigs/pooled_vectors.py).
    "embed": ServerSet("qwen3", ("--runner", "pooling", "--convert", "embed")),
}

FIXTURES: dict[str, str] = {
    "vllm_plain": "plain",
    "vllm_qwen3_hermes": "qwen3-hermes",
    "vllm_r1_deepseek": "r1-deepseek",
    "vllm_qwen3coder": "qwen3coder",
    "vllm_qwen3_hermes_store": "qwen3-hermes-store",
    "vllm_embed": "embed",
}
"""Which server set each server fixture below asks for."""

register_rig(
    RigSets(
        "vllm", "vLLM", FIXTURES, scripted_rig(VLLM_RIG_NAME, VLLM_STEPS, VllmServer, SERVER_SETS)
    )
)

# The server fixtures of FIXTURES: each gives the ready server of its set from the pool.
vllm_plain = server_fixture(VllmServer, "Qwen3 tokenizer and template, no parsers.")
vllm_qwen3_hermes = server_fixture(
    VllmServer, "Qwen3, ``--tool-call-parser hermes --reasoning-parser qwen3``, auto tool choice."
)
vllm_r1_deepseek = server_fixture(
    VllmServer,
    "R1-Distill template, ``--reasoning-parser deepseek_r1``, thinking on in the prompt.",
)
vllm_qwen3coder = server_fixture(
    VllmServer, "Qwen3-Coder template, ``--tool-call-parser qwen3_coder``, auto tool choice."
)
vllm_qwen3_hermes_store = server_fixture(
    VllmServer,
    "``qwen3-hermes`` with the Responses store on (``VLLM_ENABLE_RESPONSES_API_STORE=1``).",
)
vllm_embed = server_fixture(
    VllmServer,
    "Qwen3 as an embedding model (``--runner pooling --convert embed``), 64-wide vectors.",
)
