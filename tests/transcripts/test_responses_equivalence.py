"""The same model text gives the same answer through chat completions and the Responses API.

The captures pair up: ``<set>--<name>`` (chat) and ``<set>--responses--<name>`` were recorded
from the same server set-up with the same scripted model text. For every pair, the chat client
and the Responses client must agree on text, reasoning, tool calls (name and parsed arguments),
finish reason, error class and the usage both servers report, raw and through the text-recovery
layer. Where a server genuinely answers the two APIs differently, ``DIFFERENCES`` says why and
the test checks that difference instead, so the documentation cannot go stale.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from providers import OpenAiCompatibleChatClient, TextRecoveryChatClient
from providers.replay.transcripts import Transcript, iter_transcripts
from tests.transcripts.replaying import BASE_URL, outcome, replay_respx, whole
from tests.transcripts.responses_replaying import (
    RESPONSES,
    ResponsesPieceServer,
    responses_outcome,
)

CHAT = {t.id: t for t in iter_transcripts()}
PAIRS = [
    (CHAT[t.id.replace("--responses--", "--")], t)
    for t in RESPONSES
    if t.sidecar["operation"] == "create" and t.id.replace("--responses--", "--") in CHAT
]

DIFFERENCES: dict[str, str] = {
    "sglang/captured--plain--responses--error-unknown-model": (
        "SGLang validates the model name on /v1/responses (404) but not on chat completions, "
        "which answers an unknown name normally."
    ),
    "sglang/captured--plain--responses--error-unknown-model-stream": (
        "SGLang validates the model name on /v1/responses (404) but not on chat completions, "
        "which answers an unknown name normally."
    ),
    "sglang/captured--plain--responses--stream-text-length": (
        "SGLang subtracts 2 from max_output_tokens: the same limit of 3 cuts the Responses answer "
        "after one token ('It') and the chat answer after three ('It is sunny'); both finish "
        "with length."
    ),
}

# Prompts that differ between the two captures, so input (and total) token counts do too.
INPUT_DIFFERS: dict[tuple[str, str], str] = {
    ("vllm", "plain"): "the Responses captures sent `instructions` (a system prompt); chat did not",
    (
        "sglang",
        "plain",
    ): "the Responses captures sent `instructions` (a system prompt); chat did not",
    ("sglang", "tools"): "SGLang's Responses path renders each tool declaration with extra "
    "fields (`strict`, `defer_loading`), so the same tools cost more prompt tokens",
}

_MODEL_TEXT = re.compile(r"^model_text \([^)]*\): (.*)$", re.MULTILINE)


def model_text(transcript: Transcript) -> Any:
    match = _MODEL_TEXT.search(transcript.sidecar["provenance"]["notes"])
    assert match, transcript.id
    return json.loads(match.group(1))


def input_difference(chat: Transcript) -> str | None:
    setup = chat.scenario.split("--")[1]
    if chat.request.get("tools"):
        return INPUT_DIFFERS.get((chat.backend, "tools"))
    return INPUT_DIFFERS.get((chat.backend, setup))


def semantic(result: dict[str, Any]) -> dict[str, Any]:
    """What must be equal across the two APIs (ids and raw argument bytes may differ)."""
    error = result["error"]
    return {
        "text": result["text"],
        "reasoning": result["reasoning"],
        "tool_calls": [(c["name"], c["arguments"], c["error"]) for c in result["tool_calls"]],
        "finish_reason": result["finish_reason"],
        "error": None if error is None else error["class"],
    }


def compare_usage(
    chat: dict[str, Any] | None, responses: dict[str, Any] | None, input_differs: bool
) -> int:
    """Counts both servers reported must match; returns how many were compared."""
    if chat is None or responses is None:
        return 0
    keys = ["output_token_count", "reasoning_token_count", "cached_input_token_count"]
    if not input_differs:
        keys += ["input_token_count", "total_token_count"]
    compared = 0
    for key in keys:
        if chat[key] is not None and responses[key] is not None:
            assert chat[key] == responses[key], key
            compared += 1
    return compared


def test_pairs_cover_both_servers_and_every_kind() -> None:
    assert len(PAIRS) == 28
    assert {c.backend for c, _ in PAIRS} == {"vllm", "sglang"}
    assert {c.is_stream for c, _ in PAIRS} == {True, False}
    for chat, responses in PAIRS:
        assert model_text(chat) == model_text(responses), chat.id
    assert len([r for _, r in PAIRS if r.id not in DIFFERENCES]) == 25


@pytest.mark.parametrize(("chat", "responses"), PAIRS, ids=lambda t: t.id)
async def test_chat_and_responses_clients_agree(chat: Transcript, responses: Transcript) -> None:
    chat_result = await replay_respx(chat, whole(chat.body))
    responses_result = await ResponsesPieceServer(responses).replay()
    reason = DIFFERENCES.get(responses.id)
    if reason is None:
        assert semantic(responses_result) == semantic(chat_result)
        differs = input_difference(chat) is not None
        compared = compare_usage(chat_result["usage"], responses_result["usage"], differs)
        assert compared >= (1 if chat_result["usage"] else 0)
        if differs and chat_result["usage"] and responses_result["usage"]:
            chat_input = chat_result["usage"]["input_token_count"]
            assert responses_result["usage"]["input_token_count"] != chat_input
        return
    # A documented, genuine server difference: check it is exactly the one described.
    if "unknown-model" in responses.id:
        assert chat_result["error"] is None and chat_result["text"] == "It is sunny in Paris."
        assert responses_result["error"] == {"class": "ModelNotFoundError", "status": 404}
    else:
        assert (chat_result["text"], responses_result["text"]) == ("It is sunny", "It")
        assert chat_result["finish_reason"] == responses_result["finish_reason"] == "length"


@pytest.mark.parametrize(
    ("chat", "responses"), [p for p in PAIRS if p[1].id not in DIFFERENCES], ids=lambda t: t.id
)
async def test_agree_through_the_text_recovery_layer(
    chat: Transcript, responses: Transcript
) -> None:
    """The standard pipeline wraps either client in recovery; the results still agree (and the
    template whitespace at block edges is gone from both)."""
    import httpx

    from tests.transcripts.replaying import Pieces

    headers = {"content-type": chat.sidecar["response"]["content_type"] or ""}
    transport = httpx.MockTransport(
        lambda request: httpx.Response(chat.status, headers=headers, stream=Pieces([chat.body]))
    )
    inner = OpenAiCompatibleChatClient(
        BASE_URL, backend=chat.backend, http_client=httpx.AsyncClient(transport=transport)
    )
    async with TextRecoveryChatClient(inner) as client:
        chat_result = await outcome(client, chat)
    server = ResponsesPieceServer(responses)
    async with TextRecoveryChatClient(server.client) as client:
        responses_result = await responses_outcome(client, responses)
    assert semantic(responses_result) == semantic(chat_result)
    assert not responses_result["text"].startswith("\n")
