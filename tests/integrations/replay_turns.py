"""Two-turn agent conversations replayed from ``transcripts/``: a tool call, then the answer.

Turn 1 is a recorded answer that calls ``get_weather`` (vLLM: reasoning, then a hermes call;
SGLang: reasoning, then a call; llama.cpp: the call written as ``<tool_call>`` text in the
content, which only text recovery turns into a call); turn 2 is a recorded plain answer of the
same server. ``TwoTurnServer`` is the loopback ``ReplayServer`` answering the first chat request
with turn 1 and the second with turn 2, streamed or not as the request asks, and keeping both
requests, so a test can check what the framework sent back (the assistant's call, the tool's
result).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from providers.replay.server import ReceivedRequest, RecordedReply, ReplayServer

__all__ = ["SCENARIOS", "Scenario", "Turn", "TwoTurnServer"]

TRANSCRIPTS = Path(__file__).resolve().parents[2] / "transcripts"
TOOL_RESULT = "sunny, 21 degrees"
"""What the tests' ``get_weather`` returns; the second request must carry it."""
QUESTION = "What is the weather in Paris?"


@dataclass(frozen=True, slots=True)
class Turn:
    """One recorded answer: the body file and its sidecar's ``expected``."""

    path: Path
    expected: dict[str, Any]

    @classmethod
    def load(cls, backend: str, scenario: str) -> Turn:
        sidecar = json.loads((TRANSCRIPTS / backend / f"{scenario}.json").read_text())
        path = TRANSCRIPTS / backend / f"{scenario}.sse"
        if not path.exists():
            path = path.with_suffix(".raw")
        return cls(path, sidecar["expected"])

    @property
    def streamed(self) -> bool:
        return self.path.suffix == ".sse"

    def body(self) -> bytes:
        return self.path.read_bytes()

    def count(self, name: str) -> int:
        """One of the recorded usage counts (``input_token_count``…); unreported is 0."""
        value = self.expected["usage"][name]
        return int(value) if value is not None else 0


@dataclass(frozen=True, slots=True)
class Scenario:
    backend: str
    call_stream: Turn
    call_whole: Turn | None
    """The non-streamed turn 1; ``None`` where no server sent one (llama.cpp writes its
    in-content call only when streaming in our captures): then ``whole_call_body`` derives it."""
    answer_stream: Turn
    answer_whole: Turn

    @property
    def name(self) -> str:
        return self.backend

    def arguments(self) -> dict[str, Any]:
        """The recorded call's arguments (llama.cpp: the ones written in the text)."""
        return {"city": "Paris", "unit": "celsius"}

    def call(self, stream: bool) -> Turn:
        return self.call_stream if stream or self.call_whole is None else self.call_whole

    def answer(self, stream: bool) -> Turn:
        return self.answer_stream if stream else self.answer_whole

    def whole_call_body(self) -> bytes:
        """llama.cpp's non-streamed answer for the streamed capture: the same content, id,
        model, finish and usage, in the ``chat.completion`` shape llama-server sends."""
        if self.call_whole is not None:
            return self.call_whole.body()
        expected = self.call_stream.expected
        usage = expected["usage"]
        return json.dumps(
            {
                "id": expected["response_id"],
                "object": "chat.completion",
                "created": 1795325185,
                "model": expected["model_id"],
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": expected["text"]},
                        "finish_reason": expected["finish_reason"],
                    }
                ],
                "usage": {
                    "prompt_tokens": usage["input_token_count"],
                    "completion_tokens": usage["output_token_count"],
                    "total_tokens": usage["total_token_count"],
                    "prompt_tokens_details": {"cached_tokens": usage["cached_input_token_count"]},
                },
            }
        ).encode()


SCENARIOS = {
    "vllm": Scenario(
        "vllm",
        Turn.load("vllm", "captured--qwen3-hermes--stream-reasoning-then-tool-call"),
        Turn.load("vllm", "captured--qwen3-hermes--nonstream-tool-call"),
        Turn.load("vllm", "captured--qwen3-hermes--stream-reasoning"),
        Turn.load("vllm", "captured--qwen3-hermes--nonstream-reasoning"),
    ),
    "sglang": Scenario(
        "sglang",
        Turn.load("sglang", "captured--qwen3-qwen25--stream-reasoning-then-tool-call"),
        Turn.load("sglang", "captured--qwen3-qwen25--nonstream-tool-call"),
        Turn.load("sglang", "captured--qwen3-qwen25--stream-reasoning"),
        Turn.load("sglang", "captured--qwen3-qwen25--nonstream-reasoning"),
    ),
    "llamacpp": Scenario(
        "llamacpp",
        Turn.load("llamacpp", "captured--qwen25-plain--stream-text-tool-call-in-content"),
        None,
        Turn.load("llamacpp", "captured--qwen25-plain--stream-unicode-line-separators"),
        Turn.load("llamacpp", "captured--qwen25-plain--nonstream-unicode-line-separators"),
    ),
}


class TwoTurnServer(ReplayServer):
    """Turn 1 to the first chat request, turn 2 to the next; other paths get a 404."""

    def __init__(self, scenario: Scenario) -> None:
        super().__init__(self._reply)
        self.scenario = scenario
        self.chat_requests: list[dict[str, Any]] = []

    async def __aenter__(self) -> TwoTurnServer:
        await super().__aenter__()
        return self

    def _reply(self, request: ReceivedRequest) -> RecordedReply:
        if not request.path.endswith("/chat/completions"):
            return RecordedReply(404, b'{"error": {"message": "not here"}}')
        body = json.loads(request.body)
        self.chat_requests.append(body)
        stream = body.get("stream") is True
        if len(self.chat_requests) > 1:
            payload = self.scenario.answer(stream).body()
        elif stream:
            payload = self.scenario.call_stream.body()
        else:
            payload = self.scenario.whole_call_body()
        kind = "text/event-stream" if stream else "application/json"
        return RecordedReply(200, payload, {"Content-Type": kind})
