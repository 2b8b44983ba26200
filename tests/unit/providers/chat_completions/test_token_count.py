"""``count_tokens`` on each server's tokenizer route (respx), the estimate where there is none,
the bad answers, and the service lookup."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
import respx

from capabilities.budget import estimate_prompt_tokens
from providers import ChatMessage, ChatOptions, OpenAiCompatibleChatClient
from providers.abstractions.errors import AuthenticationError, InvalidResponseError
from providers.abstractions.options import ToolDeclaration
from providers.abstractions.services import service_of
from providers.abstractions.token_count import ESTIMATE, TokenCount
from providers.abstractions.token_counter import TokenCounter
from providers.chat_completions.token_count import prompt_texts
from providers.layers.retry import RetryingChatClient

HOST = "http://tok.test"
MESSAGES = [
    ChatMessage.system("Be brief."),
    ChatMessage.system("Answer in English."),
    ChatMessage.user("How many tokens is this?"),
]
TOOL = ToolDeclaration(
    name="lookup", description="Look up a word", parameters={"type": "object", "properties": {}}
)


def recording(answer: Any, seen: list[Any], status: int = 200) -> Any:
    def respond(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        return httpx.Response(status, json=answer)

    return respond


def client(backend: str, **kwargs: Any) -> OpenAiCompatibleChatClient:
    return OpenAiCompatibleChatClient(f"{HOST}/v1", "m", backend=backend, **kwargs)


@respx.mock
async def test_vllm_counts_the_messages_and_tools_with_its_window() -> None:
    seen: list[Any] = []
    answer = {"count": 37, "max_model_len": 4096, "tokens": list(range(37))}
    respx.post(f"{HOST}/tokenize").mock(side_effect=recording(answer, seen))
    async with client("vllm") as chat:
        count = await chat.count_tokens(MESSAGES, ChatOptions(tools=[TOOL]))
        body = chat.build_request_body(MESSAGES, ChatOptions(tools=[TOOL]), stream=False)
    assert count == TokenCount(37, 4096, True, "vllm:/tokenize")
    sent = seen[0]
    assert sent["messages"] == body["messages"]  # as the chat sends them (system merged)
    assert len(sent["messages"]) == 2
    assert sent["tools"][0]["function"]["name"] == "lookup"
    assert sent["add_generation_prompt"] is True and sent["model"] == "m"
    assert "stream" not in sent and "max_tokens" not in sent


@respx.mock
async def test_llamacpp_renders_the_template_then_counts_the_prompt() -> None:
    seen_template: list[Any] = []
    seen_tokens: list[Any] = []
    prompt = "<|im_start|>user\nHow many tokens is this?<|im_end|>\n<|im_start|>assistant\n"
    respx.post(f"{HOST}/apply-template").mock(
        side_effect=recording({"prompt": prompt}, seen_template)
    )
    respx.post(f"{HOST}/tokenize").mock(
        side_effect=recording({"tokens": [1, 2, 3, 4, 5, 6, 7, 8, 9]}, seen_tokens)
    )
    async with client("llamacpp") as chat:
        count = await chat.count_tokens("How many tokens is this?")
    assert count == TokenCount(9, None, True, "llamacpp:/apply-template+/tokenize")
    assert seen_template[0]["messages"] == [{"role": "user", "content": "How many tokens is this?"}]
    assert seen_tokens[0] == {"content": prompt, "add_special": True, "parse_special": True}


@respx.mock
async def test_sglang_renders_the_chat_as_for_a_completion() -> None:
    seen: list[Any] = []
    answer = {"tokens": list(range(9)), "count": 9, "max_model_len": 10**30}
    respx.post(f"{HOST}/tokenize").mock(side_effect=recording(answer, seen))
    async with client("sglang") as chat:
        count = await chat.count_tokens(MESSAGES[1:])
    # the tokenizer's model_max_length is not the server's window: not read
    assert count == TokenCount(9, None, True, "sglang:/tokenize")
    assert seen[0]["messages"][0] == {"role": "system", "content": "Answer in English."}
    assert "add_generation_prompt" not in seen[0]  # refused without a Jinja template


async def test_a_server_without_a_tokenizer_route_gets_a_marked_estimate() -> None:
    async with client("ollama") as chat:  # no route mocked: nothing is sent
        count = await chat.count_tokens(MESSAGES)
        body = chat.build_request_body(MESSAGES, None, stream=False)
    assert count.source == ESTIMATE and not count.exact and count.max_model_len is None
    assert count.count == estimate_prompt_tokens(prompt_texts(body))


@pytest.mark.parametrize("status", [404, 405, 501])
@respx.mock
async def test_a_missing_route_falls_back_to_the_estimate_once(status: int) -> None:
    route = respx.post(f"{HOST}/tokenize").mock(
        return_value=httpx.Response(status, json={"detail": "Not Found"})
    )
    async with client("sglang") as chat:
        first = await chat.count_tokens("hello")
        second = await chat.count_tokens("hello again")
    assert first.source == second.source == ESTIMATE
    assert route.call_count == 1


@pytest.mark.parametrize(
    ("backend", "answer"),
    [
        ("vllm", {"count": "many"}),
        ("vllm", {"count": -1}),
        ("vllm", {"tokens": "abc"}),
        ("vllm", [1, 2, 3]),
        ("sglang", {"count": [1]}),  # two texts sent, one count back
        ("sglang", {"count": [1, 1.5]}),
        ("llamacpp", {"tokens": 5}),
    ],
)
@respx.mock
async def test_bad_tokenize_answers_are_typed_with_what_was_received(
    backend: str, answer: Any
) -> None:
    respx.post(f"{HOST}/apply-template").mock(
        return_value=httpx.Response(200, json={"prompt": "p"})
    )
    respx.post(f"{HOST}/tokenize").mock(return_value=httpx.Response(200, json=answer))
    async with client(backend) as chat:
        with pytest.raises(InvalidResponseError) as caught:
            await chat.count_tokens(MESSAGES)
    assert caught.value.backend == backend and backend in str(caught.value)
    assert json.loads(caught.value.body or "") == answer


@respx.mock
async def test_a_template_answer_without_a_prompt_is_typed() -> None:
    respx.post(f"{HOST}/apply-template").mock(return_value=httpx.Response(200, json={"x": 1}))
    async with client("llamacpp") as chat:
        with pytest.raises(InvalidResponseError) as caught:
            await chat.count_tokens("hi")
    assert "/apply-template" in str(caught.value) and caught.value.body == '{"x":1}'


@respx.mock
async def test_a_tokenize_answer_that_is_not_json_is_typed() -> None:
    respx.post(f"{HOST}/tokenize").mock(return_value=httpx.Response(200, text="<html>"))
    async with client("vllm") as chat:
        with pytest.raises(InvalidResponseError) as caught:
            await chat.count_tokens("hi")
    assert caught.value.body == "<html>"


@respx.mock
async def test_other_error_answers_are_typed_as_chat_errors_without_the_key() -> None:
    respx.post(f"{HOST}/tokenize").mock(
        return_value=httpx.Response(401, json={"error": "bad key sk-abc-123"})
    )
    async with client("vllm", api_key="sk-abc-123") as chat:
        with pytest.raises(AuthenticationError) as caught:
            await chat.count_tokens("hi")
    assert "sk-abc-123" not in str(caught.value) + (caught.value.body or "")


async def test_the_counter_is_found_through_the_layers() -> None:
    core = client("vllm")
    layered = RetryingChatClient(core)
    assert isinstance(core, TokenCounter)
    assert service_of(layered, TokenCounter) is core
    assert layered.get_service(TokenCounter) is core
    await core.aclose()


def test_prompt_texts_reads_parts_tool_calls_and_tools() -> None:
    body = {
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
            },
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}],
            },
        ],
        "tools": [{"type": "function", "function": {"name": "f"}}],
    }
    texts = prompt_texts(body)
    assert texts[:2] == ["ab", "f{}"]
    assert json.loads(texts[2]) == body["tools"]
