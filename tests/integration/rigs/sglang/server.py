"""Run SGLang's real OpenAI server, with the scripted scheduler, on 127.0.0.1 for tests.

    with SglangServer(python, model_dir, served_model_name="Qwen/Qwen3-0.6B",
                      extra_args=["--reasoning-parser", "qwen3"]) as server:
        server.script("<think>\\nHmm.\\n</think>\\n\\nHi.")
        ...  # requests to server.base_url
        server.prompts()[-1].prompt  # the prompt as the scheduler received it

Runs in the dev venv; the server runs in the SGLang venv (``python``), as
``python -m tests.integration.rigs.sglang.serve`` with the project root on ``PYTHONPATH``. The
process, its log and its script files are handled as for every rig server
(``rigs/process.py``, ``rigs/scripted.py``: stopping ends the whole process group, launcher,
scheduler and detokenizer). Ready means ``GET /health`` answers 200, which SGLang allows only
after its own warm-up request has gone through the scheduler; that request is not among
:meth:`~SglangServer.prompts`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from tests.integration.rigs.process import HOST, ServerProcessError
from tests.integration.rigs.scripted import ReceivedRequest, ScriptedServer
from tests.integration.rigs.sglang.fake_scheduler import MODEL_DIR_ENV

__all__ = ["ReceivedPrompt", "SglangServer", "SglangServerError"]

SERVE_MODULE = "tests.integration.rigs.sglang.serve"


class SglangServerError(ServerProcessError):
    """The server exited or did not become healthy in time."""


@dataclass(frozen=True)
class ReceivedPrompt(ReceivedRequest):
    """One request as the scheduler received it (``prompt`` decoded from its ids)."""

    stream: bool
    max_new_tokens: int | None
    script_token_count: int
    """How many ids the scripted text was for this request (end-of-sequence not counted)."""
    rid: str
    json_schema: str | None = None
    """The sampling parameters' JSON Schema (text), as the scheduler got it; ``None`` without."""
    regex: str | None = None
    """The sampling parameters' regular expression (chat ``regex``); ``None`` without."""
    ebnf: str | None = None
    """The sampling parameters' EBNF grammar (chat ``ebnf``); ``None`` without."""


class SglangServer(ScriptedServer[ReceivedPrompt]):
    """SGLang's OpenAI server for one model folder on ``127.0.0.1:<port>``; ``python`` is the
    SGLang venv's interpreter, ``extra_args`` more ``sglang serve`` flags (parsers,
    ``--default-chat-template-kwargs``…)."""

    label: ClassVar[str] = "SGLang server"
    error: ClassVar[type[ServerProcessError]] = SglangServerError
    workdir_prefix: ClassVar[str] = "sglang-rig-"
    poll_seconds: ClassVar[float] = 0.5
    health_timeout: ClassVar[float] = 10.0  # /health runs a generation through the scheduler
    serve_module: ClassVar[str] = SERVE_MODULE

    @property
    def args(self) -> list[str]:
        """The ``sglang serve`` flags."""
        return [
            "--model-path", str(self.model_dir),
            "--served-model-name", self.model_id,
            "--context-length", str(self.context_length),
            "--host", HOST,
            "--port", str(self.port),
            "--device", "cpu",
            *self.extra_args,
        ]  # fmt: skip

    def server_environment(self) -> dict[str, str]:
        return {MODEL_DIR_ENV: str(self.model_dir)}

    def record(self, entry: Mapping[str, Any]) -> ReceivedPrompt:
        return ReceivedPrompt(
            prompt=entry["prompt"],
            prompt_tokens=entry["prompt_tokens"],
            stream=entry["stream"],
            max_new_tokens=entry["max_new_tokens"],
            script_token_count=entry["script_tokens"],
            rid=entry["rid"],
            json_schema=entry.get("json_schema"),
            regex=entry.get("regex"),
            ebnf=entry.get("ebnf"),
        )
