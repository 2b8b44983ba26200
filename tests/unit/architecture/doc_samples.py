"""The code blocks of the documentation, and a loopback server they can all run against.

``samples()`` extracts every fenced ``python`` and ``yaml`` block of ``README.md`` and
``docs/*.md``. ``SampleServer`` answers as a llama.cpp-style OpenAI-compatible server would:
``/v1/models``, and chat completions (streamed or not) whose answer follows the request, so an
agent loop ends: a tool call to the first offered tool until a tool result is in the
conversation, then text; JSON of the requested schema when ``response_format`` asks for it;
``/v1/embeddings`` with a small vector per input, always as floats (as LM Studio answers).
``prepared`` points a sample's server URLs at it. The samples are meant for a user's own server
at ``127.0.0.1:8080`` (and the README's ``vllm.internal``), so the URLs are all the test changes.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from providers.abstractions.records import value_class
from providers.replay.server import ReceivedRequest, RecordedReply

__all__ = ["ROOT", "Sample", "SampleServer", "prepared", "sample_files", "samples"]

ROOT = Path(__file__).resolve().parents[3]
_FENCE = re.compile(r"^```(python|yaml)\n(.*?)^```", re.MULTILINE | re.DOTALL)
_URLS = ("http://127.0.0.1:8080", "https://vllm.internal")


@value_class(frozen=True)
class Sample:
    path: str
    line: int
    language: str
    code: str

    @property
    def id(self) -> str:
        return f"{self.path}:{self.line}"


def sample_files(root: Path = ROOT) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def samples(root: Path = ROOT) -> list[Sample]:
    found = []
    for path in sample_files(root):
        text = path.read_text(encoding="utf-8")
        for match in _FENCE.finditer(text):
            line = text.count("\n", 0, match.start()) + 2  # the block's first line
            rel = str(path.relative_to(root))
            found.append(Sample(rel, line, match.group(1), match.group(2)))
    return found


def prepared(code: str, base_url: str) -> str:
    """``code`` with the documentation's server URLs replaced by ``base_url``."""
    for url in _URLS:
        code = code.replace(url, base_url)
    return code


def _value_for(schema: dict[str, Any], defs: dict[str, Any]) -> Any:
    """A small value that fits ``schema`` (the subset pydantic writes)."""
    if "$ref" in schema:
        return _value_for(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            return _value_for(schema[key][0], defs)
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = kind[0]
    if kind == "object":
        properties = schema.get("properties", {})
        return {name: _value_for(sub, defs) for name, sub in properties.items()}
    if kind == "array":
        return [_value_for(schema.get("items", {}), defs)]
    return {"string": "Paris", "integer": 21, "number": 21.5, "boolean": True}.get(kind)


class SampleServer:
    """The ``ReplayServer`` handler; ``model`` is what ``/v1/models`` serves."""

    def __init__(self, model: str = "qwen3-8b") -> None:
        self.model = model

    def __call__(self, request: ReceivedRequest) -> RecordedReply:
        path = request.path.split("?")[0]
        if path.endswith("/models"):
            listing = {"object": "list", "data": [{"id": self.model, "object": "model"}]}
            return _json(listing)
        if path.endswith("/chat/completions") and request.method == "POST":
            body = json.loads(request.body)
            message = self._answer(body)
            if body.get("stream"):
                return _stream(message, self.model)
            return _json(_completion(message, self.model))
        if path.endswith("/embeddings") and request.method == "POST":
            return _json(_embeddings(json.loads(request.body), self.model))
        if path.endswith("/rerank") and request.method == "POST":
            return _json(_reranked(json.loads(request.body), self.model))
        if path.endswith("/tokenize") and request.method == "POST":  # vLLM's: messages in
            body = json.loads(request.body)
            count = sum(len(str(m.get("content") or "").split()) + 4 for m in body["messages"])
            return _json({"count": count, "max_model_len": 32768, "tokens": list(range(count))})
        return RecordedReply(404, b'{"error": {"code": 404, "message": "File Not Found"}}')

    def _answer(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body.get("messages") or []
        tools = body.get("tools") or []
        if tools and not any(m.get("role") == "tool" for m in messages):
            function = tools[0]["function"]
            parameters = function.get("parameters") or {}
            arguments = _value_for(parameters, parameters.get("$defs", {}))
            call = {
                "id": "call_0",
                "type": "function",
                "function": {"name": function["name"], "arguments": json.dumps(arguments)},
            }
            return {"role": "assistant", "content": None, "tool_calls": [call]}
        response_format = body.get("response_format") or {}
        schema = (response_format.get("json_schema") or {}).get("schema")
        if schema is not None:
            text = json.dumps(_value_for(schema, schema.get("$defs", {})))
        else:
            text = "It is sunny in Paris."
        return {"role": "assistant", "content": text}


def _json(payload: dict[str, Any]) -> RecordedReply:
    return RecordedReply(200, json.dumps(payload).encode(), {"Content-Type": "application/json"})


_USAGE = {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19}


def _reranked(body: dict[str, Any], model: str) -> dict[str, Any]:
    """vLLM's rerank answer: documents sharing more words with the query score higher."""
    query = set(re.findall(r"\w+", str(body["query"]).lower()))
    scored: list[dict[str, Any]] = []
    for index, document in enumerate(body["documents"]):
        shared = len(query & set(re.findall(r"\w+", str(document).lower())))
        scored.append(
            {
                "index": index,
                "relevance_score": shared / (1 + shared),
                "document": {"text": document},
            }
        )
    scored.sort(key=lambda item: -float(item["relevance_score"]))
    return {"id": "rerank-0", "model": model, "results": scored[: body.get("top_n") or None]}


def _embeddings(body: dict[str, Any], model: str) -> dict[str, Any]:
    """Floats whatever ``encoding_format`` asked: the answer the adapters must reshape."""
    texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
    data = [
        {"object": "embedding", "index": i, "embedding": [float(len(text)), 0.5, -0.25, 1.0]}
        for i, text in enumerate(texts)
    ]
    tokens = sum(len(str(text).split()) for text in texts)
    usage = {"prompt_tokens": tokens, "total_tokens": tokens}
    return {"object": "list", "data": data, "model": body.get("model") or model, "usage": usage}


def _completion(message: dict[str, Any], model: str) -> dict[str, Any]:
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return {
        "id": "chatcmpl-sample",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": _USAGE,
    }


def _stream(message: dict[str, Any], model: str) -> RecordedReply:
    head = {"id": "chatcmpl-sample", "object": "chat.completion.chunk", "created": 0}
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": None}]
    if message.get("tool_calls"):
        deltas += [
            {"tool_calls": [{"index": i, **call}]} for i, call in enumerate(message["tool_calls"])
        ]
        finish = "tool_calls"
    else:
        deltas += [{"content": word} for word in re.findall(r"\S+\s*", message["content"])]
        finish = "stop"
    chunks: list[dict[str, Any]] = [
        {"choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas
    ]
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    chunks.append({"choices": [], "usage": _USAGE})
    events = b"".join(
        b"data: " + json.dumps({**head, "model": model, **chunk}).encode() + b"\n\n"
        for chunk in chunks
    )
    return RecordedReply(200, events + b"data: [DONE]\n\n", {"Content-Type": "text/event-stream"})
