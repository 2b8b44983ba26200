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

A pooling request (``/v1/embeddings``, ``/pooling``, ``/score``, ``/rerank``: vLLM's front end
sends ``pooling_params`` instead of ``sampling_params``) gets one output with the "model"'s
pooled vector (``rigs/pooled_vectors.py``: deterministic, from the prompt's token ids) at the
width vLLM's config gives the model (``embedding_size``), cut to ``dimensions`` and normalised
as its pooler heads do; a ``classify`` request gets the classifier scores. The tasks the
engine says it supports follow the model config as the real model runner's do: ``generate``
for ``--runner generate``, the converted pooler's tasks for ``--runner pooling``.

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

import torch  # type: ignore[import-not-found]
from vllm.v1.engine import (  # type: ignore[import-not-found]
    EngineCoreOutput,
    EngineCoreOutputs,
    EngineCoreRequest,
    FinishReason,
)
from vllm.v1.engine.core_client import EngineCoreClient  # type: ignore[import-not-found]

from tests.integration.rigs.pooled_vectors import classify_scores, pooled_vector

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
        request_id: str = request.request_id
        if request.pooling_params is not None:
            work = self._pool(request)
        else:
            work = self._generate(request, self._script_tokens())
        task = asyncio.create_task(work)
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

    async def _pool(self, request: EngineCoreRequest) -> None:
        """One step, then the pooled output of the whole prompt, finished ``STOP``."""
        params = request.pooling_params
        prompt_ids: list[int] = list(request.prompt_token_ids or ())
        await asyncio.sleep(self.step_seconds)
        pooled = self._pooled(params, prompt_ids)
        self._log(request, prompt_ids, 0, "stop", pooling=self._pooling_record(params, prompt_ids))
        output = EngineCoreOutput(
            request_id=request.request_id,
            new_token_ids=[],
            pooling_output=torch.tensor(pooled, dtype=torch.float32),
            finish_reason=FinishReason.STOP,
        )
        self._queue().put_nowait(EngineCoreOutputs(outputs=[output]))

    def _pooled(self, params: Any, prompt_ids: list[int]) -> Any:
        """What the pooler head gives for ``params.task``: one vector (``embed``), one per
        token (``token_embed``), the class scores (``classify``) or one row per token of them
        (``token_classify``)."""
        task = params.task
        activation = params.use_activation is not False
        if task in ("classify", "token_classify"):
            labels = int(getattr(self.vllm_config.model_config.hf_config, "num_labels", 2))
            if task == "classify":
                return classify_scores(prompt_ids, labels, activation=activation)
            return [classify_scores([t], labels, activation=activation) for t in prompt_ids]
        width = self.vllm_config.model_config.embedding_size
        if task == "token_embed":
            return [
                pooled_vector([t], width, dimensions=params.dimensions, normalize=activation)
                for t in prompt_ids
            ]
        return pooled_vector(prompt_ids, width, dimensions=params.dimensions, normalize=activation)

    @staticmethod
    def _pooling_record(params: Any, prompt_ids: list[int]) -> dict[str, Any]:
        return {
            "task": params.task,
            "dimensions": params.dimensions,
            "use_activation": params.use_activation,
            "prompt_token_ids": prompt_ids,
        }

    def _log(
        self,
        request: EngineCoreRequest,
        prompt: list[int],
        emitted: int,
        why: str,
        pooling: dict[str, Any] | None = None,
    ) -> None:
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
            "pooling": pooling,
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
        return self.get_supported_tasks()

    def get_supported_tasks(self) -> tuple[str, ...]:
        """As the model runner answers: ``generate`` for a generating model; for
        ``--runner pooling``, the tasks of the pooler vLLM's adapter gives a converted model
        (``DispatchPooler.for_embedding`` / ``for_seq_cls``)."""
        config = self.vllm_config.model_config
        if config.runner_type != "pooling":
            return ("generate",)
        if config.convert_type == "classify":
            return ("token_classify", "classify")
        return ("token_embed", "embed")

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
