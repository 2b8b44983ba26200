"""Scripted chat answers for the pydantic-ai tests where no recording has the turn they need.

The recordings in ``transcripts/`` hold what real servers said to our prompts; none of them
calls pydantic-ai's ``final_result`` output tool, answers a ``PromptedOutput`` prompt, or writes
gpt-oss's harmony markup into the content. ``Reply`` writes such a turn in vLLM's shapes (the
chunk layout of its captures: a role chunk, small content or argument deltas, a finish chunk
and a usage chunk; or one ``chat.completion``), and ``Script`` serves replies in order, streamed
or whole as each request asks, keeping each request's body.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from providers.replay.server import ReceivedRequest, RecordedReply

__all__ = ["Call", "Reply", "Script"]


@dataclass(frozen=True)
class Call:
    name: str
    arguments: dict[str, Any]
    call_id: str = "call-0"


@dataclass(frozen=True)
class Reply:
    """One assistant turn: text (markup and all, as a server that left it there sends it),
    reasoning in vLLM's ``reasoning`` field, and structured calls."""

    text: str = ""
    reasoning: str = ""
    calls: tuple[Call, ...] = ()
    piece: int = 4
    """Characters per streamed delta: small, so a JSON answer arrives in many pieces."""

    @property
    def finish(self) -> str:
        return "tool_calls" if self.calls else "stop"

    def stream(self) -> bytes:
        chunks: list[dict[str, Any]] = [_chunk({"role": "assistant", "content": ""})]
        chunks += [_chunk({"reasoning": part}) for part in _pieces(self.reasoning, self.piece)]
        chunks += [_chunk({"content": part}) for part in _pieces(self.text, self.piece)]
        for index, call in enumerate(self.calls):
            head = {"id": call.call_id, "type": "function", "function": {"name": call.name}}
            chunks.append(_chunk({"tool_calls": [{"index": index, **head}]}))
            for part in _pieces(json.dumps(call.arguments), self.piece):
                delta = {"index": index, "function": {"arguments": part}}
                chunks.append(_chunk({"tool_calls": [delta]}))
        chunks.append(_chunk({}, self.finish))
        chunks.append({**_chunk({}), "choices": [], "usage": _USAGE})
        frames = [f"data: {json.dumps(c, ensure_ascii=False)}\n\n" for c in chunks]
        return ("".join(frames) + "data: [DONE]\n\n").encode()

    def whole(self) -> bytes:
        message: dict[str, Any] = {"role": "assistant", "content": self.text or None}
        if self.reasoning:
            message["reasoning"] = self.reasoning
        if self.calls:
            message["tool_calls"] = [
                {
                    "id": c.call_id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
                }
                for c in self.calls
            ]
        choice = {"index": 0, "message": message, "finish_reason": self.finish}
        body = {**_HEAD, "object": "chat.completion", "choices": [choice], "usage": _USAGE}
        return json.dumps(body, ensure_ascii=False).encode()


@dataclass
class Script:
    """``ReplayServer(script.answer)``: the n-th chat request gets the n-th reply (the last one
    again after that); ``bodies`` are the requests' JSON bodies, in order."""

    replies: list[Reply]
    bodies: list[dict[str, Any]] = field(default_factory=list)

    def answer(self, request: ReceivedRequest) -> RecordedReply:
        body = json.loads(request.body)
        self.bodies.append(body)
        reply = self.replies[min(len(self.bodies), len(self.replies)) - 1]
        if body.get("stream") is True:
            return RecordedReply(200, reply.stream(), {"Content-Type": "text/event-stream"})
        return RecordedReply(200, reply.whole(), {"Content-Type": "application/json"})


_HEAD = {"id": "chatcmpl-scripted", "created": 1, "model": "scripted"}
_USAGE = {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19}


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
    return {**_HEAD, "object": "chat.completion.chunk", "choices": [choice]}


def _pieces(text: str, size: int) -> list[str]:
    return [text[start : start + size] for start in range(0, len(text), size)]
