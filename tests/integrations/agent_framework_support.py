"""What the Agent Framework tests share: a loopback handler that keeps each request's headers as
well as its body and serves recorded transcripts or made-up answers in order, the made-up
answers themselves (a text in vLLM's shapes, whole or streamed), and one way to run an agent
whole or streamed and get its final response.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from providers.replay.server import ReceivedRequest, RecordedReply
from providers.replay.transcripts import Transcript

STREAMED = pytest.mark.parametrize("streamed", [False, True], ids=["run", "run-stream"])


@dataclass
class Heard:
    """Serves ``replies`` in order, one per request (the last one again after them), and keeps
    each request's body and headers (names in lower case)."""

    replies: list[Transcript | RecordedReply]
    bodies: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)

    def answer(self, request: ReceivedRequest) -> RecordedReply:
        self.bodies.append(json.loads(request.body))
        self.headers.append(dict(request.headers))
        reply = self.replies[min(len(self.bodies), len(self.replies)) - 1]
        if isinstance(reply, RecordedReply):
            return reply
        content_type = reply.sidecar["response"].get("content_type", "")
        return RecordedReply(reply.status, reply.body, {"Content-Type": content_type})


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
    return {"id": "chatcmpl-af", "object": "chat.completion.chunk", "created": 1, "model": "m"} | {
        "choices": [choice]
    }


def made_up(text: str, streamed: bool) -> RecordedReply:
    """``text`` as a vLLM answer's content: one message, or a stream of 4-character deltas
    (so any markup in it arrives cut across chunks), finish reason ``stop``."""
    if not streamed:
        message = {"role": "assistant", "content": text}
        body = {
            "id": "chatcmpl-af",
            "object": "chat.completion",
            "created": 1,
            "model": "m",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }
        return RecordedReply(200, json.dumps(body).encode(), {"Content-Type": "application/json"})
    chunks = [_chunk({"role": "assistant", "content": ""})]
    chunks += [_chunk({"content": text[i : i + 4]}) for i in range(0, len(text), 4)]
    chunks.append(_chunk({}, "stop"))
    frames = "".join(f"data: {json.dumps(c, ensure_ascii=False)}\n\n" for c in chunks)
    return RecordedReply(
        200, (frames + "data: [DONE]\n\n").encode(), {"Content-Type": "text/event-stream"}
    )


async def run(agent: Any, streamed: bool, *args: Any, **kwargs: Any) -> Any:
    """The agent's final response (an ``AgentResponse``), from ``run`` or from its stream."""
    if not streamed:
        return await agent.run(*args, **kwargs)
    stream = agent.run(*args, stream=True, **kwargs)
    [_ async for _ in stream]
    return await stream.get_final_response()
