"""``api: chat | responses``: one setting switches the wire client; every layer above it, and
what the caller gets, stay the same."""

from __future__ import annotations

import textwrap
from pathlib import Path

import httpx
import pytest

from providers import (
    ChatResponse,
    OpenAiCompatibleChatClient,
    OpenAiCompatibleResponsesClient,
    RetryingChatClient,
    TextRecoveryChatClient,
)
from providers.abstractions.errors import ConfigurationError
from providers.config import client_for, load_config
from providers.factory import create_chat_client
from providers.replay.transcripts import Transcript, default_root
from telemetry import TelemetryChatClient
from tests.unit.providers.test_factory import _layers

CHAT = "vllm/captured--qwen3-hermes--stream-tool-call"
RESPONSES = "vllm/captured--qwen3-hermes--responses--stream-tool-call"


def _transcript(name: str) -> Transcript:
    return Transcript.load(default_root() / f"{name}.json")


def test_api_responses_puts_the_responses_client_under_the_same_layers() -> None:
    client = create_chat_client("http://llm.test/v1", "m", api="responses")
    assert _layers(client) == [
        TelemetryChatClient,
        RetryingChatClient,
        TextRecoveryChatClient,
        OpenAiCompatibleResponsesClient,
    ]
    chat = create_chat_client("http://llm.test/v1", "m")
    assert _layers(chat)[-1] is OpenAiCompatibleChatClient


def test_an_unknown_api_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="'chat' or 'responses'"):
        create_chat_client("http://llm.test/v1", "m", api="completions")


async def _answer(api: str, transcript: Transcript) -> tuple[ChatResponse, list[str]]:
    paths: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        paths.append(request.url.path)
        return httpx.Response(
            transcript.status,
            content=transcript.body,
            headers={"Content-Type": transcript.sidecar["response"]["content_type"]},
        )

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
        client = create_chat_client(
            "http://llm.test/v1", "Qwen/Qwen3-0.6B", api=api, http_client=http
        )
        updates = [u async for u in client.get_streaming_response("What is the weather?")]
    return ChatResponse.from_updates(updates), paths


async def test_the_same_model_text_gives_the_same_answer_through_either_api() -> None:
    """vLLM, the same model text captured on both endpoints, through the full pipeline."""
    chat, chat_paths = await _answer("chat", _transcript(CHAT))
    responses, responses_paths = await _answer("responses", _transcript(RESPONSES))
    assert chat_paths == ["/v1/chat/completions"]
    assert responses_paths == ["/v1/responses"]
    calls = [[(c.name, c.arguments) for c in r.tool_calls] for r in (chat, responses)]
    assert calls[0] == calls[1] == [("get_weather", {"city": "Paris", "unit": "celsius"})]
    assert chat.finish_reason == responses.finish_reason == "tool_calls"
    assert chat.text == responses.text == ""


def _config(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "oaicompat.yaml"
    path.write_text(textwrap.dedent(body))
    return path


def test_config_api_and_conversation_mode_reach_the_core(tmp_path: Path) -> None:
    path = _config(
        tmp_path,
        """\
        backends:
          vllm-responses:
            base_url: "http://vllm/v1"
            model_id: m
            api: responses
            conversation_mode: previous_response_id
        """,
    )
    client = client_for(load_config(path, env={}), "vllm-responses")
    core = client
    while not isinstance(core, OpenAiCompatibleResponsesClient):
        core = core.inner  # type: ignore[attr-defined]
    assert core.conversation_mode == "previous_response_id"


def test_conversation_mode_without_responses_fails_with_line_and_key_path(
    tmp_path: Path,
) -> None:
    path = _config(
        tmp_path,
        """\
        backends:
          a:
            base_url: "http://a/v1"
            conversation_mode: previous_response_id
        """,
    )
    with pytest.raises(ConfigurationError) as info:
        load_config(path, env={})
    assert str(info.value).startswith(f"{path}:2: backends.a:")
    assert "only with api: responses" in str(info.value)


def test_an_unknown_api_in_the_file_names_the_choices(tmp_path: Path) -> None:
    path = _config(tmp_path, 'backends:\n  a: {base_url: "http://a", api: completion}\n')
    with pytest.raises(ConfigurationError, match=r":2: backends\.a\.api: .*'chat' or 'responses'"):
        load_config(path, env={})
