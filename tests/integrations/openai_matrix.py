"""What the two OpenAI-SDK scenario matrices share (``test_matrix_openai_transport``, plain
openai-python over the transport; ``test_matrix_openai_agents``, an Agents SDK run).

``MatrixServer`` answers each chat request with the next recorded turn, in the form the
request asked for: a streamed capture's sidecar gives its non-streamed form (the server's
``chat.completion`` with the same content, reasoning, calls and usage), and a non-streamed
capture answers a streamed request as one JSON document, which the pipeline reads as the
answer. It keeps every request's body and headers, so a test asserts what the backend got.

Harmony has no capture in ``transcripts/`` (no server of ours leaves gpt-oss's channels in the
content); ``harmony_turn`` is the whole harmony turn of ``tests/transcripts/
test_text_formats_end_to_end.py`` (analysis, a commentary preamble, a call addressed in the
role header) in vLLM's chunk shape, three characters a delta.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from providers import ChatClient, create_chat_client
from providers.layers.session_affinity import SessionAffinity
from providers.replay.server import ReceivedRequest, RecordedReply, ReplayServer
from tests.integrations.exchanges import BY_ID

__all__ = [
    "CALL_IN_CONTENT",
    "HARMONY_ARGUMENTS",
    "QUESTION",
    "MatrixServer",
    "Reply",
    "harmony_turn",
    "matrix_pipeline",
    "recorded",
]

QUESTION = "What is the weather in Paris?"
CALL_IN_CONTENT = "llamacpp/captured--qwen25-plain--stream-text-tool-call-in-content"
HARMONY_ARGUMENTS = {"city": "Paris", "days": 3}


@dataclass(frozen=True)
class Reply:
    """One turn in both forms; ``None``: that form is the other one (a JSON answer to a
    streamed request)."""

    events: bytes | None
    document: bytes | None
    status: int = 200

    def answer(self, stream: bool) -> RecordedReply:
        """Events when asked for and recorded (or when they are all there is), else the
        document."""
        if self.events is not None and (stream or self.document is None):
            return RecordedReply(self.status, self.events, {"Content-Type": "text/event-stream"})
        assert self.document is not None
        return RecordedReply(self.status, self.document, {"Content-Type": "application/json"})


def recorded(transcript_id: str) -> Reply:
    """A capture from ``transcripts/``, with its other form where it has one."""
    transcript = BY_ID[transcript_id]
    if not transcript.is_stream:
        return Reply(None, transcript.body, transcript.status)
    if transcript.status >= 400 or transcript.expected["error"] is not None:
        return Reply(transcript.body, None, transcript.status)
    return Reply(transcript.body, _document(transcript.expected), transcript.status)


def _document(expected: dict[str, Any]) -> bytes:
    """The ``chat.completion`` a server sends for what its stream carried (sidecar fields)."""
    message: dict[str, Any] = {"role": "assistant", "content": expected["text"] or None}
    if expected["reasoning"]:
        message["reasoning_content"] = expected["reasoning"]
    if expected["tool_calls"]:
        message["tool_calls"] = [
            {
                "id": call["call_id"],
                "type": "function",
                "function": {"name": call["name"], "arguments": call["raw_arguments"]},
            }
            for call in expected["tool_calls"]
        ]
    usage = expected["usage"] or {}
    body = {
        "id": expected["response_id"],
        "object": "chat.completion",
        "created": 1795325185,
        "model": expected["model_id"],
        "choices": [{"index": 0, "message": message, "finish_reason": expected["finish_reason"]}],
        "usage": {
            "prompt_tokens": usage.get("input_token_count") or 0,
            "completion_tokens": usage.get("output_token_count") or 0,
            "total_tokens": usage.get("total_token_count") or 0,
        },
    }
    return json.dumps(body).encode()


def harmony_turn() -> Reply:
    """gpt-oss's whole harmony turn left in ``delta.content`` (module docstring)."""
    arguments = json.dumps(HARMONY_ARGUMENTS)
    text = (
        "<|channel|>analysis<|message|>Need the weather.<|end|>"
        "<|start|>assistant<|channel|>commentary<|message|>Let me check.<|end|>"
        "<|start|>assistant to=functions.get_weather<|channel|>commentary<|constrain|>json"
        f"<|message|>{arguments}<|call|>"
    )
    chunks = [_chunk({"role": "assistant", "content": ""})]
    chunks += [_chunk({"content": text[i : i + 3]}) for i in range(0, len(text), 3)]
    chunks.append(_chunk({}, "stop"))
    events = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    document = {
        "id": "chatcmpl-harmony",
        "object": "chat.completion",
        "created": 1,
        "model": "openai/gpt-oss-20b",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
    }
    return Reply(events.encode(), json.dumps(document).encode())


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-harmony",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "openai/gpt-oss-20b",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
    }


@dataclass
class MatrixServer:
    """A loopback server answering chat request ``n`` with ``turns[n]`` (the last one again
    past the end); ``bodies`` and ``headers`` (lower-case names) are what each request had."""

    turns: list[Reply]
    bodies: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    server: ReplayServer | None = None

    async def __aenter__(self) -> MatrixServer:
        self.server = ReplayServer(self._answer)
        await self.server.__aenter__()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self.server is not None
        await self.server.__aexit__(None, None, None)

    @property
    def base_url(self) -> str:
        assert self.server is not None
        return self.server.base_url

    def _answer(self, request: ReceivedRequest) -> RecordedReply:
        if not request.path.endswith("/chat/completions"):
            return RecordedReply(404, b'{"error": {"message": "not here"}}')
        body = json.loads(request.body)
        self.bodies.append(body)
        self.headers.append({k.lower(): v for k, v in request.headers.items()})
        turn = self.turns[min(len(self.bodies), len(self.turns)) - 1]
        return turn.answer(body.get("stream") is True)


def matrix_pipeline(server: MatrixServer, backend: str, **options: Any) -> ChatClient:
    """The standard pipeline over ``server`` (text recovery ``auto``), retries off so an error
    turn is answered once, routing keys sent as vllm-router reads them (``X-Session-ID``)."""
    return create_chat_client(
        f"{server.base_url}/v1",
        "served",
        backend=backend,
        telemetry=False,
        retry=None,
        session_affinity=SessionAffinity("vllm-router"),
        **options,
    )
