"""Run the real ``vllm serve`` with the scripted engine on 127.0.0.1, from the dev venv.

    with VllmServer(python, model_dir, "Qwen/Qwen3-0.6B", ["--reasoning-parser", "qwen3"]) as s:
        s.script("<think>\\nHm.\\n</think>\\n\\nIt is sunny.")
        ...  # requests to s.base_url; the engine emits that text for each of them
        s.prompts()[-1].prompt  # the prompt the engine was given, special tokens included

The server is ``python -m tests.integration.rigs.vllm.serve`` run by the vLLM venv's
interpreter, with this checkout on ``PYTHONPATH``; it never imports vLLM here. The process, its
log and its script files are handled as for every rig server (``rigs/process.py``,
``rigs/scripted.py``); this module has what is vLLM's: the flags, the environment and the
engine's prompt-log record.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from tests.integration.rigs.process import HOST, ServerProcessError
from tests.integration.rigs.scripted import ReceivedRequest, ScriptedServer

__all__ = ["EngineRecord", "VllmServer", "VllmServerError"]

SERVE_MODULE = "tests.integration.rigs.vllm.serve"


class VllmServerError(ServerProcessError):
    """The server exited or did not become healthy in time."""


@dataclass(frozen=True)
class EngineRecord(ReceivedRequest):
    """One request as the scripted engine saw it (a line of its prompt log)."""

    request_id: str
    output_tokens: int
    finish: str
    structured_outputs: dict[str, Any] | None = None
    """The request's structured output constraint as the engine got it (``json``: the schema,
    ``backend``: the grammar backend vLLM validated it with), ``None`` without one."""
    pooling: dict[str, Any] | None = None
    """For a pooling request (embeddings, score, rerank): the ``task``, the ``dimensions`` and
    ``use_activation`` vLLM's front end set, and the ``prompt_token_ids`` the vector was
    pooled from (``rigs/pooled_vectors.py`` gives the vector); ``None`` for generation."""


class VllmServer(ScriptedServer[EngineRecord]):
    """``vllm serve MODEL --served-model-name NAME --max-model-len N [*extra_args]`` with the
    scripted engine, on ``127.0.0.1:<port>``; ``env`` adds variables (vLLM switches some
    features, such as the Responses store, by environment only)."""

    label: ClassVar[str] = "vllm serve"
    error: ClassVar[type[ServerProcessError]] = VllmServerError
    workdir_prefix: ClassVar[str] = "vllm-rig-"
    serve_module: ClassVar[str] = SERVE_MODULE
    default_step_seconds: ClassVar[float] = 0.002
    default_startup_timeout: ClassVar[float] = 240.0

    @property
    def max_model_len(self) -> int:
        """``--max-model-len``: the context, prompt and output together."""
        return self.context_length

    @property
    def args(self) -> list[str]:
        return [
            str(self.model_dir),
            "--served-model-name", self.model_id,
            "--max-model-len", str(self.max_model_len),
            "--host", HOST,
            "--port", str(self.port),
            *self.extra_args,
        ]  # fmt: skip

    def server_environment(self) -> dict[str, str]:
        return {
            "VLLM_TARGET_DEVICE": "cpu",
            "VLLM_NO_USAGE_STATS": "1",  # no usage report over the network
        }

    def before_launch(self) -> None:
        super().before_launch()
        self.script("")  # the engine reads the file for every request, warm-up included

    def record(self, entry: Mapping[str, Any]) -> EngineRecord:
        return EngineRecord(
            prompt=entry["prompt"],
            prompt_tokens=entry["prompt_tokens"],
            request_id=entry["request_id"],
            output_tokens=entry["output_tokens"],
            finish=entry["finish"],
            structured_outputs=entry.get("structured_outputs"),
            pooling=entry.get("pooling"),
        )
