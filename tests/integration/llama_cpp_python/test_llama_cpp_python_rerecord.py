"""Capture ``transcripts/llama-cpp-python/`` from the real server (opt-in, rewrites the files).

    .venv/bin/pytest tests/integration/llama_cpp_python --rerecord-transcripts -s

Without the flag this test is deselected (``tests/integration/conftest.py``). With it, each
exchange below is sent to a live ``python -m llama_cpp.server`` on the tiny model and written by
the library's own recorder (``providers.replay.recording.record_exchange``): body bytes as the
wire carried them, provenance (detected backend, llama-cpp-python version, flags, date), the
request, and ``expected`` as ``tools/import_transcripts.py``'s reference reader reads the body
(never the client: the recorder refuses the client's reading for ``transcripts/``). The ones
whose markup the server leaves in content also get ``recovery`` and a hand-written
``expected_recovered`` (the scenario's model text, split as a user must get it), with the
volatile fields (ids, usage) from ``expected``.
The discovery answers (``GET /v1/models`` and a path the server lacks) go to ``discovery/``.

Afterwards run ``pytest tests/transcripts`` (the regression replay) and review ``git diff``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest

from providers.replay.recording import KEPT_HEADERS, record_exchange
from providers.replay.transcripts import default_root
from tests.integration.llama_cpp_python.server import MODEL_ALIAS, LlamaCppPythonServer
from tests.integration.llama_cpp_python.test_llama_cpp_python_scenarios import forcing
from tests.integration.rigs.scenarios import PROMPT, SCENARIOS, Scenario
from tools.import_transcripts import expected_for

pytestmark = pytest.mark.rerecord

BACKEND = "llama-cpp-python"
SOURCE = "tests/integration/llama_cpp_python/test_llama_cpp_python_rerecord.py"
VOLATILE = ("usage", "response_id", "model_id", "stop_sequence", "error")

PINNED_WEATHER_TOOL: Mapping[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "enum": ["Paris"]},
                "unit": {"type": "string", "enum": ["celsius"]},
            },
            "required": ["city", "unit"],
        },
    },
}
"""A schema that allows one value per argument: chatml-function-calling builds its grammar from
it, so even random weights call ``get_weather({"city": "Paris", "unit": "celsius"})``."""


def served_version(server: LlamaCppPythonServer) -> str:
    """The version the running server states: FastAPI's ``/openapi.json`` ``info.version`` (the
    app is created with ``llama_cpp.__version__``); nothing else on its wire says it."""
    info = httpx.get(f"{server.base_url}/openapi.json").json()["info"]
    return str(info["version"])


def _notes(server: LlamaCppPythonServer, what: str) -> str:
    return (
        f"llama-cpp-python {served_version(server)} (`python -m llama_cpp.server`, FastAPI + "
        f"uvicorn + sse-starlette), tiny random-weight qwen2 GGUF served as {MODEL_ALIAS!r}, "
        f"chat handler: {server.chat_format or 'the GGUF chat template (Jinja)'}. {what}"
    )


def _body(scenario: Scenario, *, stream: bool, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": MODEL_ALIAS,
        "messages": [{"role": "user", "content": scenario.prompt}],
    }
    if stream:
        body |= {"stream": True, "stream_options": {"include_usage": True}}
    body["max_tokens"] = scenario.max_output_tokens
    if scenario.tools:
        body["tools"] = [dict(tool) for tool in scenario.tools]
    return body | extra


def _recovered(scenario: Scenario, expected: Mapping[str, Any]) -> dict[str, Any]:
    """The scenario's promise in the ``expected`` shape; volatile fields from the recording."""
    calls = [
        {"call_id": None, "raw_arguments": None, "error": False, "name": c.name,
         "arguments": dict(c.arguments)}
        for c in scenario.expected_calls
    ]  # fmt: skip
    return {
        "text": scenario.expected_text,
        "reasoning": scenario.expected_reasoning,
        "tool_calls": calls,
        "finish_reason": scenario.expected_finish,
        **{key: expected[key] for key in VOLATILE},
    }


async def _record(
    server: LlamaCppPythonServer,
    set_name: str,
    what: str,
    request: Mapping[str, Any] | str,
    notes: str,
    *,
    recovered: Scenario | None = None,
) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    if recovered is not None:
        extra["recovery"] = {"tools": [dict(t) for t in recovered.tools]} if recovered.tools else {}
    recording = await record_exchange(
        server.base_url,
        request,
        root=default_root(),
        scenario=f"captured--{set_name}--{what}",
        backend=BACKEND,
        flags=server.flags,
        source=SOURCE,
        notes=_notes(server, notes),
        extra=extra,
        reader=expected_for,
    )
    sidecar = recording.sidecar
    # Detection finds no version on this server's wire; its OpenAPI document states one.
    version = served_version(server)
    sidecar["provenance"] |= {"server": f"{BACKEND} {version}", "version": version}
    if recovered is not None:
        sidecar["expected_recovered"] = _recovered(recovered, sidecar["expected"])
    text = json.dumps(sidecar, indent=2, ensure_ascii=False) + "\n"
    recording.sidecar_path.write_bytes(text.encode("utf-8"))
    assert sidecar["provenance"]["server"].startswith(BACKEND), sidecar["provenance"]
    return dict(sidecar["expected"])


async def _forced(
    server: LlamaCppPythonServer,
    what: str,
    scenario: Scenario,
    *,
    stream: bool,
    recovered: bool = False,
) -> dict[str, Any]:
    extra = await forcing(server.base_url, scenario.model_text)
    return await _record(
        server,
        "gguf-template",
        what,
        _body(scenario, stream=stream, **extra),
        f"Model text forced by the request's `grammar` (and `logit_bias` towards its tokens): "
        f"{scenario.model_text!r} (scenario {scenario.name!r} of tests/integration/rigs/"
        "scenarios.py).",
        recovered=scenario if recovered else None,
    )


def _write_discovery(server: LlamaCppPythonServer, set_name: str, path: str) -> None:
    answer = httpx.get(f"{server.base_url}{path}", headers={"Accept-Encoding": "identity"})
    folder = default_root() / BACKEND / "discovery"
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"{set_name}--get-{path.strip('/').replace('/', '-')}"
    headers = {k: v for k, v in answer.headers.items() if k.lower() in KEPT_HEADERS}
    meta = {
        "captured_from": _notes(server, "Recorded by " + SOURCE),
        "server_flags": server.flags,
        "method": "GET",
        "path": path,
        "request": None,
        "status": answer.status_code,
        "headers": headers,
    }
    (folder / f"{stem}.raw").write_bytes(answer.content)
    text = json.dumps(meta, indent=2, ensure_ascii=False) + "\n"
    (folder / f"{stem}.meta.json").write_bytes(text.encode("utf-8"))


async def test_capture_the_gguf_template_set(lcp_server: LlamaCppPythonServer) -> None:
    server = lcp_server
    for path in ("/v1/models", "/props"):
        _write_discovery(server, "gguf-template", path)
    text = await _forced(server, "nonstream-text", SCENARIOS["text"], stream=False)
    assert (text["text"], text["finish_reason"]) == ("It is sunny in Paris.", "stop")
    streamed = await _forced(server, "stream-text", SCENARIOS["text"], stream=True)
    assert (streamed["text"], streamed["usage"]) == ("It is sunny in Paris.", None)
    cut = await _forced(server, "stream-text-length", SCENARIOS["text-length"], stream=True)
    assert (cut["text"], cut["finish_reason"]) == ("It is sunny", "length")
    call = await _forced(
        server, "stream-tool-call-in-content", SCENARIOS["tool-call"], stream=True, recovered=True
    )
    assert call["tool_calls"] == [] and call["finish_reason"] == "stop"
    think = await _forced(
        server, "stream-think-in-content", SCENARIOS["reasoning"], stream=True, recovered=True
    )
    assert think["reasoning"] == "" and think["text"].startswith("<think>")
    await _errors(server)


async def _errors(server: LlamaCppPythonServer) -> None:
    long_prompt = "Paris " * 5000
    over = {"model": MODEL_ALIAS, "messages": [{"role": "user", "content": long_prompt}]}
    found = await _record(
        server, "gguf-template", "error-context-exceeded", {**over, "max_tokens": 16},
        "A prompt longer than --n_ctx: the error formatter's OpenAI-style 400.",
    )  # fmt: skip
    assert found["error"]["class"] == "ContextLengthExceededError"
    stream = {**over, "max_tokens": 16, "stream": True, "stream_options": {"include_usage": True}}
    found = await _record(
        server, "gguf-template", "error-context-exceeded-stream", stream,
        "The same prompt, streamed: the answer is already 200 text/event-stream when the model "
        "refuses it, so the server can only end the stream without an event.",
    )  # fmt: skip
    assert found["error"] is not None
    found = await _record(
        server, "gguf-template", "error-validation",
        {**_body(SCENARIOS["text"], stream=False), "max_tokens": "many"},
        "A body that fails request validation (`max_tokens` not an integer): the route wrapper "
        "turns FastAPI's validation error into a 500 `internal_server_error` whose message is "
        "pydantic's, with a traceback line; not FastAPI's usual 422.",
    )  # fmt: skip
    assert found["error"]["class"] == "InvalidRequestError"


async def test_capture_the_function_calling_set(
    lcp_function_calling_server: LlamaCppPythonServer,
) -> None:
    server = lcp_function_calling_server
    base = {
        "model": MODEL_ALIAS,
        "messages": [{"role": "user", "content": PROMPT}],
        "tools": [dict(PINNED_WEATHER_TOOL)],
        "max_tokens": 60,
    }
    named = {"type": "function", "function": {"name": "get_weather"}}
    expected_call = {"city": "Paris", "unit": "celsius"}
    why = "The tool's schema allows one value per argument, so the handler's grammar fixes them."
    found = await _record(
        server, "function-calling", "nonstream-tool-call-named", {**base, "tool_choice": named},
        f"tool_choice names the tool. {why}",
    )  # fmt: skip
    assert [c["arguments"] for c in found["tool_calls"]] == [expected_call]
    stream = {**base, "stream": True, "stream_options": {"include_usage": True}}
    found = await _record(
        server, "function-calling", "stream-tool-call-named", {**stream, "tool_choice": named},
        f"tool_choice names the tool, streamed: every chunk repeats the call's id and name. {why}",
    )  # fmt: skip
    assert [c["arguments"] for c in found["tool_calls"]] == [expected_call]
    found = await _record(
        server, "function-calling", "error-stream-auto-tool-choice",
        {**stream, "tool_choice": "auto"},
        "tool_choice auto, streamed: the handler raises 'Automatic streaming tool choice is not "
        "supported' after the 200 event-stream answer has begun.",
    )  # fmt: skip
    assert found["error"] is not None


def test_the_discovery_files_exist_after_a_capture() -> None:
    folder: Path = default_root() / BACKEND / "discovery"
    assert (folder / "gguf-template--get-v1-models.raw").is_file()
