"""The scripted scheduler of the SGLang rig: SGLang's scheduler process with no model behind it.

Runs inside the SGLang venv. ``serve`` hands :func:`run_fake_scheduler` to ``launch_server`` as
``run_scheduler_process_func`` (an existing hook of SGLang's), so SGLang starts it where it would
start its real scheduler, with the same arguments. It speaks SGLang's own protocol on SGLang's
own ZMQ channels (``SchedulerIpcChannels``):

- it reports ``ready`` through the pipe the launcher waits on;
- it receives the real ``TokenizedGenerateReqInput`` (the prompt as the TokenizerManager
  rendered and tokenized it);
- it answers with ``BatchTokenIDOutput`` messages to the real DetokenizerManager: the token ids
  of a text we choose, one token per step, then the model's end-of-sequence id. The first
  message carries the last prompt ids as surrounding context and the offset after them, exactly
  as ``Req.init_incremental_detokenize`` does, so SGLang's incremental detokenizer works as with
  a model.

Finish rules are the real scheduler's (``Req.update_finish_state``): a stop token (the
request's ``stop_token_ids``, or an end-of-sequence id of the model) finishes with
``FINISH_MATCHED_TOKEN`` — checked before the length, as SGLang does — and ``max_new_tokens``
with ``FINISH_LENGTH``. ``ignore_eos`` turns the stop-token check off, request stop ids too.
Streamed requests get a message every step; the others one every
``DEFAULT_FORCE_STREAM_INTERVAL`` steps and at the end, as SGLang's output streamer sends them.

Not reproduced: prefix caching (``cached_tokens`` is 0), ``reasoning_tokens`` (the real scheduler
counts them; this sends 0), stop strings and regexes, logprobs, time statistics, retraction.

Where the text comes from, and what is recorded (environment variables, set by
``server.SglangServer``):

- ``OAICOMPAT_RIG_SCRIPT_FILE``: JSON ``{"text": ...}``, read when each request arrives; a
  missing file means :data:`DEFAULT_TEXT` (the server's own warm-up request comes before any
  test has scripted anything);
- ``OAICOMPAT_RIG_PROMPT_LOG``: one JSON line per request received (health checks excepted):
  ``rid``, the decoded ``prompt``, ``prompt_tokens``, ``stream``, ``max_new_tokens``, and
  ``script_tokens`` (how many ids the scripted text tokenized to, end-of-sequence not counted),
  and ``json_schema``, the schema SGLang's sampling parameters carry (what it made of
  ``response_format``; this scheduler compiles no grammar, so it is recorded, not enforced),
  and likewise ``regex`` and ``ebnf`` (the chat request's keys of those names);
- ``OAICOMPAT_RIG_MODEL_DIR``: the model folder, for the tokenizer (``serve`` sets it from
  ``--model-path``, since ``server_args.tokenizer_path`` was seen unset in this process);
- ``OAICOMPAT_RIG_STEP_SECONDS``: the pause between steps (default 0.01), so a stream arrives
  over time as from a model, not in one burst (SGLang still merges tokens into one chunk when
  they come faster than its event loop reads them, as on a busy machine).
"""

from __future__ import annotations

import json
import os
import signal
import time
import traceback
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "DEFAULT_TEXT",
    "MODEL_DIR_ENV",
    "PROMPT_LOG_ENV",
    "SCRIPT_FILE_ENV",
    "STEP_SECONDS_ENV",
    "run_fake_scheduler",
]

SCRIPT_FILE_ENV = "OAICOMPAT_RIG_SCRIPT_FILE"
PROMPT_LOG_ENV = "OAICOMPAT_RIG_PROMPT_LOG"
MODEL_DIR_ENV = "OAICOMPAT_RIG_MODEL_DIR"
STEP_SECONDS_ENV = "OAICOMPAT_RIG_STEP_SECONDS"

DEFAULT_TEXT = "It is sunny in Paris."
SURROUNDING_PROMPT_IDS = 5
"""Prompt ids sent ahead of the first output ids (SGLang's INIT_INCREMENTAL_DETOKENIZATION_OFFSET):
the detokenizer decodes them only to know where the output's first word starts."""
KV_POOL_TOKENS = 1 << 20
"""The pool size reported as ``max_total_num_tokens``: with no KV cache, nothing runs out."""
HEALTH_CHECK_PREFIX = "HEALTH_CHECK"
"""SGLang's ``HEALTH_CHECK_RID_PREFIX``: ``GET /health`` generates one token under this rid."""
_IDLE_POLL_MS = 200


@dataclass
class ScriptedRequest:
    """One request in flight: the ids it will emit, what it emitted, what was already sent."""

    rid: str
    http_worker_ipc: str | None
    prompt_ids: list[int]
    script_ids: list[int]
    end_id: int
    stop_ids: frozenset[int]
    max_new_tokens: int | None
    stream: bool
    skip_special_tokens: bool
    spaces_between_special_tokens: bool
    no_stop_trim: bool
    output_ids: list[int] = field(default_factory=list)
    finished_reason: dict[str, Any] | None = None
    sent_output: int = 0
    """Output ids already sent (the ``output_ids`` delta of the next message starts here)."""
    sent_first: bool = False

    def step(self) -> None:
        """Emit one token: the next scripted id, then the end-of-sequence id (repeated, if
        ``ignore_eos`` lets the request run on), and apply SGLang's finish rules."""
        position = len(self.output_ids)
        token = self.script_ids[position] if position < len(self.script_ids) else self.end_id
        self.output_ids.append(token)
        if token in self.stop_ids:
            self.finished_reason = {"type": "stop", "matched": token}
        elif self.max_new_tokens is not None and len(self.output_ids) >= self.max_new_tokens:
            self.finished_reason = {"type": "length", "length": self.max_new_tokens}

    def due(self, force_interval: int) -> bool:
        """Whether this step's tokens go out now (SGLang's ``OutputBatch.accept`` rule)."""
        if self.finished_reason is not None or self.stream:
            return True
        return len(self.output_ids) % force_interval == 0

    def take_delta(self) -> tuple[list[int], list[int], int]:
        """``(output_ids delta, decode_ids delta, read_offset)`` for the next message.

        The first message's decode ids start with up to :data:`SURROUNDING_PROMPT_IDS` prompt
        ids; ``read_offset`` (where the output starts inside the decode ids) is then constant.
        """
        new_ids = self.output_ids[self.sent_output :]
        self.sent_output = len(self.output_ids)
        surrounding = self.prompt_ids[-SURROUNDING_PROMPT_IDS:] if self.prompt_ids else []
        if not self.sent_first:
            self.sent_first = True
            return new_ids, surrounding + new_ids, len(surrounding)
        return new_ids, new_ids, len(surrounding)


def _read_script(path: str | None) -> str:
    if not path:
        return DEFAULT_TEXT
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return DEFAULT_TEXT
    text = data["text"]
    if not isinstance(text, str):
        raise TypeError(f"{path}: 'text' must be a string")
    return text


def _log_prompt(path: str | None, entry: dict[str, Any]) -> None:
    if not path:
        return
    with open(path, "a", encoding="utf-8") as log:
        log.write(json.dumps(entry, ensure_ascii=False) + "\n")


class FakeScheduler:
    """The loop: take requests off the tokenizer channel, step every request in flight, send."""

    def __init__(self, channels: Any, tokenizer: Any, end_ids: frozenset[int]) -> None:
        from sglang.srt.managers import io_struct  # type: ignore[import-not-found,unused-ignore]
        from sglang.srt.managers.scheduler_components.output_streamer import (  # type: ignore[import-not-found,unused-ignore]
            DEFAULT_FORCE_STREAM_INTERVAL,
        )

        self.io = io_struct
        self.channels = channels
        self.tokenizer = tokenizer
        self.end_ids = end_ids
        self.end_id = int(tokenizer.eos_token_id)
        self.force_interval = int(DEFAULT_FORCE_STREAM_INTERVAL)
        self.step_seconds = float(os.environ.get(STEP_SECONDS_ENV, "0.01"))
        self.script_file = os.environ.get(SCRIPT_FILE_ENV)
        self.prompt_log = os.environ.get(PROMPT_LOG_ENV)
        self.active: dict[str, ScriptedRequest] = {}
        self.parent_pid = os.getppid()

    # -- receiving ------------------------------------------------------------------------------

    def receive(self, timeout_ms: int) -> None:
        """Handle every message waiting on the tokenizer channel (waiting up to ``timeout_ms``
        for the first one)."""
        import zmq  # type: ignore[import-not-found,unused-ignore]

        socket = self.channels.recv_from_tokenizer
        if not socket.poll(timeout_ms, zmq.POLLIN):
            return
        while True:
            try:
                message = self.io.sock_recv(socket, zmq.NOBLOCK)
            except zmq.Again:
                return
            self.dispatch(message)

    def dispatch(self, message: Any) -> None:
        io = self.io
        if isinstance(message, io.TokenizedGenerateReqInput):
            self.admit(message)
        elif isinstance(message, io.BatchTokenizedGenerateReqInput):
            for request in message.batch:
                self.admit(request)
        elif isinstance(message, io.AbortReq):
            if message.abort_all:
                self.active.clear()
            else:
                self.active.pop(message.rid, None)
        elif isinstance(message, io.GetInternalStateReq):
            # GET /server_info waits for this answer; the real scheduler sends its live state.
            reply = io.GetInternalStateReqOutput(internal_state={"scripted_scheduler": True})
            self.channels.send_to_tokenizer.send_output(reply, message)
        else:
            print(f"[fake scheduler] ignored {type(message).__name__}", flush=True)

    def admit(self, request: Any) -> None:
        params = request.sampling_params
        prompt_ids = [int(token) for token in (request.input_ids or [])]
        health_check = str(request.rid).startswith(HEALTH_CHECK_PREFIX)
        text = _read_script(self.script_file)
        stop_ids: set[int] = set()
        if not params.ignore_eos:  # SGLang skips every token-based stop check then
            stop_ids.update(self.end_ids)
            stop_ids.update(int(token) for token in (params.stop_token_ids or ()))
        scripted = ScriptedRequest(
            rid=request.rid,
            http_worker_ipc=request.http_worker_ipc,
            prompt_ids=prompt_ids,
            script_ids=list(self.tokenizer.encode(text, add_special_tokens=False)),
            end_id=self.end_id,
            stop_ids=frozenset(stop_ids),
            max_new_tokens=params.max_new_tokens,
            stream=bool(request.stream),
            skip_special_tokens=bool(params.skip_special_tokens),
            spaces_between_special_tokens=bool(params.spaces_between_special_tokens),
            no_stop_trim=bool(params.no_stop_trim),
        )
        self.active[request.rid] = scripted
        if not health_check:
            prompt = self.tokenizer.decode(prompt_ids, skip_special_tokens=False)
            _log_prompt(
                self.prompt_log,
                {
                    "rid": request.rid,
                    "prompt": prompt,
                    "prompt_tokens": len(prompt_ids),
                    "stream": scripted.stream,
                    "max_new_tokens": scripted.max_new_tokens,
                    "script_tokens": len(scripted.script_ids),
                    "json_schema": getattr(params, "json_schema", None),
                    "regex": getattr(params, "regex", None),
                    "ebnf": getattr(params, "ebnf", None),
                },
            )

    # -- sending --------------------------------------------------------------------------------

    def output_message(self, requests: list[ScriptedRequest]) -> Any:
        """One ``BatchTokenIDOutput`` for ``requests`` (parallel lists, one item per request)."""
        deltas = [request.take_delta() for request in requests]
        none = [None] * len(requests)
        zeros = [0] * len(requests)
        return self.io.BatchTokenIDOutput(
            rids=[r.rid for r in requests],
            http_worker_ipcs=[r.http_worker_ipc for r in requests],
            finished_reasons=[r.finished_reason for r in requests],
            decoded_texts=["" for _ in requests],
            decode_ids=[array("q", decode_ids) for _, decode_ids, _ in deltas],
            read_offsets=[read_offset for _, _, read_offset in deltas],
            output_ids=[array("q", output_ids) for output_ids, _, _ in deltas],
            skip_special_tokens=[r.skip_special_tokens for r in requests],
            spaces_between_special_tokens=[r.spaces_between_special_tokens for r in requests],
            no_stop_trim=[r.no_stop_trim for r in requests],
            prompt_tokens=[len(r.prompt_ids) for r in requests],
            reasoning_tokens=zeros,
            completion_tokens=[len(r.output_ids) for r in requests],
            cached_tokens=zeros,
            retraction_counts=zeros,
            input_token_logprobs_val=None,
            input_token_logprobs_idx=None,
            output_token_logprobs_val=None,
            output_token_logprobs_idx=None,
            input_top_logprobs_val=None,
            input_top_logprobs_idx=None,
            output_top_logprobs_val=None,
            output_top_logprobs_idx=None,
            input_token_ids_logprobs_val=None,
            input_token_ids_logprobs_idx=None,
            output_token_ids_logprobs_val=None,
            output_token_ids_logprobs_idx=None,
            output_token_entropy_val=None,
            output_token_sampling_mask=None,
            output_hidden_states=None,
            routed_experts=None,
            indexer_topk=None,
            placeholder_tokens_idx=None,
            placeholder_tokens_val=None,
            cached_tokens_details=none,
        )

    def step(self) -> None:
        """One decoding step for every request in flight; finished ones leave."""
        due: list[ScriptedRequest] = []
        for request in list(self.active.values()):
            request.step()
            if request.due(self.force_interval):
                due.append(request)
            if request.finished_reason is not None:
                del self.active[request.rid]
        if due:
            self.channels.send_to_detokenizer.send_output(self.output_message(due))

    # -- the loop -------------------------------------------------------------------------------

    def run(self) -> None:
        while True:
            if self.active:
                self.receive(0)
                self.step()
                time.sleep(self.step_seconds)
            else:
                self.receive(_IDLE_POLL_MS)
                if os.getppid() != self.parent_pid:  # the launcher died: don't linger
                    return


def _end_ids(model_dir: Path, tokenizer: Any) -> frozenset[int]:
    """The model's end-of-sequence ids, as SGLang collects them: ``config.json`` and
    ``generation_config.json`` ``eos_token_id`` (an id or a list), and the tokenizer's."""
    ids: set[int] = {int(tokenizer.eos_token_id)}
    for name in ("config.json", "generation_config.json"):
        path = model_dir / name
        if not path.is_file():
            continue
        value = json.loads(path.read_text(encoding="utf-8")).get("eos_token_id")
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, list):
            ids.update(int(v) for v in value)
    return frozenset(ids)


def _context_length(server_args: Any, model_dir: Path) -> int:
    configured = getattr(server_args, "context_length", None)
    if isinstance(configured, int) and configured > 0:
        return configured
    config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    return int(config.get("max_position_embeddings", 4096))


def run_fake_scheduler(  # noqa: PLR0917 - the signature SGLang calls it with
    server_args: Any,
    port_args: Any,
    gpu_id: int,
    tp_rank: int,
    pp_rank: int,
    dp_rank: int | None,
    pipe_writer: Any,
    *display_ranks: Any,
) -> None:
    """Stands in for ``sglang.srt.managers.scheduler.run_scheduler_process`` (same arguments).

    Sends the ready handshake SGLang's launcher waits for: ``max_req_input_len`` as the real
    scheduler computes it from the context length (``context - 1 - 5``), and ``startup_time``
    as the dict the launcher aggregates (all phases zero: nothing is loaded).
    """
    from sglang.srt.managers.scheduler_components.ipc_channels import (  # type: ignore[import-not-found,unused-ignore]
        SchedulerIpcChannels,
    )
    from sglang.srt.observability.startup_time import (  # type: ignore[import-not-found,unused-ignore]
        build_scheduler_startup_time,
    )
    from transformers import AutoTokenizer  # type: ignore[import-not-found,unused-ignore]

    model_dir = Path(os.environ.get(MODEL_DIR_ENV) or server_args.model_path)
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    channels = SchedulerIpcChannels.create(
        port_args=port_args,
        is_rank_zero=True,
        skip_tokenizer_init=False,
        metrics_enabled=False,
        enable_scripted_runtime=False,
    )
    context_length = _context_length(server_args, model_dir)
    startup_time = build_scheduler_startup_time(
        target_load_weight=0.0,
        draft_load_weight=0.0,
        kv_cache_allocation=0.0,
        scheduler_e2e=0.0,
        target_cuda_graph=None,
        draft_cuda_graph=None,
    )
    pipe_writer.send(
        {
            "status": "ready",
            "max_total_num_tokens": KV_POOL_TOKENS,
            "max_req_input_len": context_length - 1 - 5,
            "startup_time": startup_time,
        }
    )
    try:
        FakeScheduler(channels, tokenizer, _end_ids(model_dir, tokenizer)).run()
    except Exception:
        # As SGLang's scheduler does: report, then SIGQUIT the launcher, whose handler ends
        # the whole server, so a test fails at once with this in the log instead of hanging.
        traceback.print_exc()
        os.kill(os.getppid(), signal.SIGQUIT)
        raise
