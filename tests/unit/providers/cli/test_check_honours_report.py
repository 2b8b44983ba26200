"""``oaicompat check``'s honours section against a mocked vLLM that behaves as vLLM does with
each key: what the probes find must be what the honours table says, whatever the mappings of the
tree send, and it is printed as a table and as JSON."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import respx

from providers.backends import PROFILES, Backend
from providers.cli import main
from providers.cli.check_honours import HONOURS_PROBES, HonoursContext
from tests.unit.providers.chat_completions.test_client_capabilities import BASE, vllm_routes

_PLAIN_FORMATS = {"text", "json_object", "json_schema"}


def _vllm_answer(body: dict[str, Any]) -> dict[str, Any]:
    """The message vLLM 0.34 would give for ``body`` (its keys, as research-33 read them)."""
    prompt = body["messages"][-1]["content"]
    if prompt.startswith("Think step by step"):
        off = body.get("reasoning_effort") == "none" or (
            body.get("chat_template_kwargs", {}).get("enable_thinking") is False
        )
        return {"content": "51"} if off else {"reasoning": "17 * 3 = 51", "content": "51"}
    if prompt.startswith("Is the sky blue"):
        choices = body.get("structured_outputs", {}).get("choice")
        return {"content": choices[0] if choices else "Yes, the sky is blue."}
    if prompt.startswith("What are the weather and the time"):
        names = ["get_weather", "get_time"][: 1 if body.get("parallel_tool_calls") is False else 2]
        calls = [
            {
                "id": f"call_{n}",
                "type": "function",
                "function": {"name": name, "arguments": '{"city": "Paris"}'},
            }
            for n, name in enumerate(names)
        ]
        return {"content": None, "tool_calls": calls}
    if prompt.startswith("Count from one"):
        if "five" in body.get("stop", []):
            return {"content": "one two three four ", "stop_reason": "five"}
        return {"content": "one two three four five six"}
    return {"content": "Hello."}


def _reply(request: httpx.Request) -> httpx.Response:
    body = json.loads(request.content)
    kind = (body.get("response_format") or {}).get("type", "text")
    if kind not in _PLAIN_FORMATS:
        error = {"object": "error", "message": f"Input should be {_PLAIN_FORMATS}", "code": 400}
        return httpx.Response(400, json=error)
    answer = _vllm_answer(body)
    stop_reason = answer.pop("stop_reason", None)
    finish = "tool_calls" if answer.get("tool_calls") else "stop"
    if not body.get("stream"):
        choice = {
            "index": 0,
            "message": {"role": "assistant", **answer},
            "finish_reason": finish,
            "stop_reason": stop_reason,
        }
        return httpx.Response(
            200, json={"id": "c", "object": "chat.completion", "choices": [choice]}
        )
    chunks = [
        {"index": 0, "delta": {"role": "assistant", **answer}, "finish_reason": None},
        {"index": 0, "delta": {}, "finish_reason": finish, "stop_reason": stop_reason},
    ]
    events = [{"id": "c", "object": "chat.completion.chunk", "choices": [c]} for c in chunks]
    text = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
    return httpx.Response(200, text=text, headers={"Content-Type": "text/event-stream"})


@pytest.fixture
def vllm() -> Iterator[respx.MockRouter]:
    with respx.mock(base_url="http://vllm.test", assert_all_called=False) as mock:
        vllm_routes(mock).mock(side_effect=_reply)
        # a chat model: vLLM mounts no embeddings or rerank route for it; its tokenizer counts
        mock.post("/v1/embeddings").mock(return_value=httpx.Response(404, json=NOT_FOUND))
        mock.post("/v1/rerank").mock(return_value=httpx.Response(404, json=NOT_FOUND))
        mock.post("/tokenize").mock(
            return_value=httpx.Response(200, json={"count": 7, "max_model_len": 4096, "tokens": []})
        )
        yield mock


async def _check(*flags: str) -> int:
    argv = ["check", "--base-url", BASE, "--model", "Qwen/Qwen3-0.6B", "--backend", "vllm"]
    return await asyncio.to_thread(main, [*argv, *flags])


NOT_FOUND = {"detail": "Not Found"}


async def test_check_says_whether_the_server_embeds_reranks_and_tokenizes(
    vllm: respx.MockRouter, capsys: pytest.CaptureFixture[str]
) -> None:
    assert await _check("--json") == 0
    services = json.loads(capsys.readouterr().out)["services"]
    assert services["embeddings"]["supported"] is False
    assert services["rerank"]["supported"] is False
    assert services["tokenize"] == {
        "supported": True,
        "source": "vllm:/tokenize",
        "max_model_len": 4096,
    }


async def test_the_probes_find_what_the_table_says(
    vllm: respx.MockRouter, capsys: pytest.CaptureFixture[str]
) -> None:
    assert await _check("--json") == 0
    report = json.loads(capsys.readouterr().out)
    assert report["family"] == "qwen3"
    rows = report["honours"]
    assert [row["option"] for row in rows] == [name for name, _ in HONOURS_PROBES]
    context = HonoursContext(PROFILES[Backend.VLLM], "qwen3")
    for row in rows:
        table = context.table_row(row["option"])
        expected = table.verdict
        if row["option"] == "allow_multiple_tool_calls=false" and expected != "refused":
            expected = "honoured"  # vLLM sends one call: the server's doing, checked or not
        assert (row["option"], row["verdict"]) == (row["option"], expected)
        assert row["wire"] == table.wire
        source = "table" if table.verdict == "refused" else "probed"
        assert (row["option"], row["provenance"]) == (row["option"], source)


async def test_the_honours_section_is_printed_after_the_battery(
    vllm: respx.MockRouter, capsys: pytest.CaptureFixture[str]
) -> None:
    assert await _check() == 0
    lines = capsys.readouterr().out.splitlines()
    start = lines.index("options (model family qwen3):")
    end = lines.index("services:")
    assert any(line.split()[:2] == ["plain", "text"] for line in lines[:start])
    section = [re.split(r"\s{2,}", line.strip()) for line in lines[start + 1 : end]]
    assert [line.split(":")[0].strip() for line in lines[end + 1 :]] == [
        "embeddings",
        "rerank",
        "tokenize",
    ]
    assert [cells[0] for cells in section] == [name for name, _ in HONOURS_PROBES]
    verdicts = ("honoured", "enforced here", "refused", "not honoured", "honoured, checked here")
    assert all(cells[1] in verdicts and cells[2] in ("probed", "table") for cells in section)
    assert "five" in section[-1][3]


async def test_the_probe_requests_carry_the_family_s_mapping(vllm: respx.MockRouter) -> None:
    assert await _check("--json") == 0
    bodies = [json.loads(call.request.content) for call in vllm.calls if call.request.content]
    single = [b for b in bodies if b.get("tools") and len(b["tools"]) == 2 and not b["stream"]]
    assert single and single[-1]["parallel_tool_calls"] is False
    context = HonoursContext(PROFILES[Backend.VLLM], "qwen3")
    if 'stop=["END"]' in context.table_row("stop_sequences").wire:
        assert any(b.get("stop") == ["five"] for b in bodies)
