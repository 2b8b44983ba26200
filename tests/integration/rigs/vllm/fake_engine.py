"""A scripted stand-in for vLLM's engine core: emits the tokens of a text we choose.

Runs inside the vLLM venv (``serve.py`` installs it). vLLM's ``AsyncLLM`` talks to its engine
through an ``EngineCoreClient``: requests go in with ``add_request_async``, token batches come out
of ``get_output_async``. :class:`ScriptedEngineClient` implements that client without a
scheduler or a model. For each request it reads ``{"text": ...}`` from the file named by
``OAICOMPAT_RIG_SCRIPT_FILE``, tokenises the text with the served tokenizer, and returns one
token per step, followed by the end-of-sequence token. Everything around it is vLLM's own: the
chat template, request validation, the incremental detokenizer, stop strings, the reasoning and
tool parsers, the SSE framing.

Finishing follows the real scheduler's ``check_stop`` (``vllm/v1/core/sched/utils.py``) in its
order: the EOS id → ``STOP``; a ``stop_token_ids`` hit → ``STOP`` with that id as
``stop_reason``; ``max_tokens`` reached or the context full → ``LENGTH``.

Not reproduced: prefix-cache hits (``num_cached_tokens``), prefill and scheduler statistics,
multi-token steps (speculative decoding) and engine-side errors.

Each finished request appends one JSON line to ``OAICOMPAT_RIG_PROMPT_LOG``: the prompt as the
engine received it (decoded, special tokens kept), its token count, how many tokens were emitted
and why it finished, so tests can check what the model was actually shown, and the structured
output constraint the request carried (``structured_outputs``: what vLLM made of
``response_format``; the scripted engine does not enforce it).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any

from vllm.v1.engine import (  # type: ignore[import-not-found]
    EngineCoreOutput,
    EngineCoreOutputs,
    EngineCoreRequest,
    FinishReason,
)
from vllm.v1.engine.core_client import EngineCoreClient  # type: ignore[import-not-found]

SCRIPT_ENV = "OAICOMPAT_RIG_SCRIPT_FILE"
PROMPT_LOG_ENV = "OAICOMPAT_RIG_PROMPT_LOG"
STEP_ENV = "OAICOMPAT_RIG_STEP_SECONDS"
DEFAULT_STEP_SECONDS = 0.005


class _Resources:
    """The one field of vLLM's ``BackgroundResources`` that ``AsyncLLM`` reads."""

    engine_dead = False


class ScriptedEngineClient(EngineCoreClient):  # type: ignore[misc]
    """An ``EngineCoreClient`` whose "model" replays the scripted text one token per step."""

    def __init__(self, vllm_config: Any, renderer: Any) -> None:
        self.vllm_config = vllm_config
        self.tokenizer = renderer.tokenizer
        self.max_model_len: int = vllm_config.model_config.max_model_len
        self.resources = _Resources()
        self.engine_ranks_managed = [0]
        self.script_file = Path(os.environ[SCRIPT_ENV])
        log = os.environ.get(PROMPT_LOG_ENV)
        self.prompt_log = Path(log) if log else None
        self.step_seconds = float(os.environ.get(STEP_ENV, DEFAULT_STEP_SECONDS))
        self._outputs: asyncio.Queue[EngineCoreOutputs] | None = None
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._weight_version = "scripted"

    # ---------------------------------------------------------------------- requests

    def _queue(self) -> asyncio.Queue[EngineCoreOutputs]:
        if self._outputs is None:  # created lazily: it must belong to the server's loop
            self._outputs = asyncio.Queue()
        return self._outputs

    def _script_tokens(self) -> list[int]:
        script = json.loads(self.script_file.read_text(encoding="utf-8"))
        tokens: list[int] = self.tokenizer.encode(script["text"], add_special_tokens=False)
        return tokens

    async def add_request_async(self, request: EngineCoreRequest) -> None:
        tokens = self._script_tokens()
        request_id: str = request.request_id
        task = asyncio.create_task(self._generate(request, tokens))
        self._tasks[request_id] = task

        def forget(_task: asyncio.Task[None]) -> None:
            if self._tasks.get(request_id) is _task:
                del self._tasks[request_id]

        task.add_done_callback(forget)

    async def _generate(self, request: EngineCoreRequest, script: list[int]) -> None:
        params = request.sampling_params
        prompt_ids: list[int] = list(request.prompt_token_ids or ())
        eos = params.eos_token_id
        tail = eos if eos is not None else self.tokenizer.eos_token_id
        stop_ids = set(params.stop_token_ids or ())
        max_tokens = params.max_tokens
        emitted = 0
        finish: Any = None
        stop_reason: int | None = None
        try:
            while finish is None:
                await asyncio.sleep(self.step_seconds)
                token = script[emitted] if emitted < len(script) else tail
                emitted += 1
                if token == eos:
                    finish = FinishReason.STOP
                elif token in stop_ids:
                    finish, stop_reason = FinishReason.STOP, token
                elif len(prompt_ids) + emitted >= self.max_model_len or (
                    max_tokens is not None and emitted >= max_tokens
                ):
                    finish = FinishReason.LENGTH
                if finish is not None:
                    self._log(request, prompt_ids, emitted, str(finish))
                output = EngineCoreOutput(
                    request_id=request.request_id,
                    new_token_ids=[token],
                    finish_reason=finish,
                    stop_reason=stop_reason,
                )
                self._queue().put_nowait(EngineCoreOutputs(outputs=[output]))
        except asyncio.CancelledError:
            self._log(request, prompt_ids, emitted, "abort")
            raise

    def _log(self, request: EngineCoreRequest, prompt: list[int], emitted: int, why: str) -> None:
        if self.prompt_log is None:
            return
        line = {
            "request_id": request.external_req_id or request.request_id,
            "prompt": self.tokenizer.decode(prompt, skip_special_tokens=False),
            "prompt_tokens": len(prompt),
            "output_tokens": emitted,
            "finish": why,
            "time": time.time(),
            "structured_outputs": _structured_outputs(request.sampling_params),
        }
        with open(self.prompt_log, "a", encoding="utf-8") as log:
            log.write(json.dumps(line) + "\n")

    async def get_output_async(self) -> EngineCoreOutputs:
        return await self._queue().get()

    async def abort_requests_async(self, request_ids: list[str]) -> None:
        for request_id in request_ids:
            task = self._tasks.pop(request_id, None)
            if task is not None:
                task.cancel()

    # ---------------------------------------------------------------------- the rest

    async def get_supported_tasks_async(self) -> tuple[str, ...]:
        return ("generate",)

    def get_supported_tasks(self) -> tuple[str, ...]:
        return ("generate",)

    def dp_engines_running(self) -> bool:
        return False

    async def is_sleeping_async(self) -> bool:
        return False

    async def is_scheduler_paused_async(self) -> bool:
        return False

    async def reset_mm_cache_async(self) -> None:
        return None

    async def reset_prefix_cache_async(self, *args: Any, **kwargs: Any) -> bool:
        return True

    async def reset_encoder_cache_async(self) -> None:
        return None

    async def get_weight_version_async(self) -> str:
        return self._weight_version

    def get_weight_version(self) -> str:
        return self._weight_version

    async def set_weight_version_async(self, weight_version: str) -> None:
        self._weight_version = weight_version

    def shutdown(self, timeout: float | None = None) -> None:
        for task in list(self._tasks.values()):
            with contextlib.suppress(RuntimeError):  # the loop may already be closed
                task.cancel()
        self._tasks.clear()


def _structured_outputs(params: Any) -> dict[str, Any] | None:
    """The constraint vLLM's front end put on the request (``response_format`` becomes
    ``structured_outputs``) and the grammar backend that validated it, or ``None``."""
    constraint = getattr(params, "structured_outputs", None)
    if constraint is None:
        return None
    kinds = ("json", "regex", "choice", "grammar", "json_object", "structural_tag")
    logged = {kind: getattr(constraint, kind) for kind in kinds if getattr(constraint, kind, None)}
    logged["backend"] = getattr(constraint, "_backend", None)
    return logged


def install() -> None:
    """Make ``EngineCoreClient.make_async_mp_client`` build the scripted client.

    The only patch: vLLM's config, renderer, processors, serving classes and HTTP app are left
    alone (patching ``Executor.get_class`` as well breaks ``VllmConfig``; see the research note).
    """

    def make_async_mp_client(vllm_config: Any, *args: Any, **kwargs: Any) -> ScriptedEngineClient:
        renderer = kwargs.get("renderer")
        if renderer is None:
            raise RuntimeError("vLLM did not pass its renderer: the scripted engine needs it")
        return ScriptedEngineClient(vllm_config, renderer)

    EngineCoreClient.make_async_mp_client = staticmethod(make_async_mp_client)
