"""``preflight_context_check=True``: a request that cannot fit is refused before it is sent,
counted by the server's tokenizer; one that fits goes out; an estimate never refuses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from providers import ChatOptions, ContextLengthExceededError, OpenAiCompatibleChatClient

HOST = "http://fit.test"
TRANSCRIPTS = Path(__file__).resolve().parents[4] / "transcripts"
COMPLETION = {
    "id": "c",
    "object": "chat.completion",
    "model": "m",
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
    ],
}
STREAM = (
    b'data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,'
    b'"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
)


def vllm_server(mock: respx.MockRouter, count: int, window: int = 4096) -> respx.Route:
    answer = {"count": count, "max_model_len": window, "tokens": []}
    mock.post("/tokenize").mock(return_value=httpx.Response(200, json=answer))
    return mock.post("/v1/chat/completions").mock(return_value=httpx.Response(200, json=COMPLETION))


def client(backend: str = "vllm", **kwargs: Any) -> OpenAiCompatibleChatClient:
    return OpenAiCompatibleChatClient(
        f"{HOST}/v1", "m", backend=backend, preflight_context_check=True, **kwargs
    )


async def test_a_request_past_the_window_is_refused_before_sending() -> None:
    with respx.mock(base_url=HOST, assert_all_called=False) as mock:
        chat = vllm_server(mock, count=4000)
        async with client() as c:
            with pytest.raises(ContextLengthExceededError) as caught:
                await c.get_response("long", ChatOptions(max_output_tokens=200))
    assert not chat.called
    error = caught.value
    assert (error.prompt_tokens, error.context_window, error.backend) == (4000, 4096, "vllm")
    assert "refused before sending" in str(error) and "vllm:/tokenize" in str(error)


async def test_a_request_that_fits_is_sent_unchanged() -> None:
    with respx.mock(base_url=HOST, assert_all_called=False) as mock:
        chat = vllm_server(mock, count=4000)
        async with client() as c:
            answer = await c.get_response("long", ChatOptions(max_output_tokens=96))
    assert answer.text == "ok"
    assert json.loads(chat.calls.last.request.content)["max_tokens"] == 96


@pytest.mark.parametrize(("count", "refused"), [(4095, False), (4096, True)])
async def test_without_max_output_tokens_the_prompt_must_leave_one_token(
    count: int, refused: bool
) -> None:
    with respx.mock(base_url=HOST, assert_all_called=False) as mock:
        chat = vllm_server(mock, count=count)
        async with client() as c:
            if refused:
                with pytest.raises(ContextLengthExceededError):
                    await c.get_response("x")
            else:
                await c.get_response("x")
    assert chat.called is not refused


async def test_the_streamed_path_is_refused_too() -> None:
    with respx.mock(base_url=HOST, assert_all_called=False) as mock:
        chat = vllm_server(mock, count=5000)
        async with client() as c:
            with pytest.raises(ContextLengthExceededError):
                async for _ in c.get_streaming_response("x"):
                    pass
    assert not chat.called


async def test_with_clamp_the_exact_count_lowers_max_tokens_instead() -> None:
    with respx.mock(base_url=HOST, assert_all_called=False) as mock:
        chat = vllm_server(mock, count=4000)
        mock.get(url__regex=r".*").mock(return_value=httpx.Response(404))
        async with client(clamp_max_tokens=True) as c:
            await c.get_response("x", ChatOptions(max_output_tokens=1000))
    assert json.loads(chat.calls.last.request.content)["max_tokens"] == 4096 - 4000


def llamacpp_server(mock: respx.MockRouter, tokens: int) -> respx.Route:
    discovery = TRANSCRIPTS / "llamacpp" / "discovery"
    mock.get("/props").mock(
        return_value=httpx.Response(
            200, content=(discovery / "qwen25-plain--get-props.raw").read_bytes()
        )
    )
    mock.get("/v1/models").mock(
        return_value=httpx.Response(
            200, content=(discovery / "qwen25-plain--get-v1-models.raw").read_bytes()
        )
    )
    mock.get(url__regex=r".*").mock(return_value=httpx.Response(404))
    mock.post("/apply-template").mock(return_value=httpx.Response(200, json={"prompt": "p"}))
    mock.post("/tokenize").mock(
        return_value=httpx.Response(200, json={"tokens": list(range(tokens))})
    )
    return mock.post("/v1/chat/completions").mock(
        return_value=httpx.Response(
            200, content=STREAM, headers={"content-type": "text/event-stream"}
        )
    )


async def test_llamacpp_window_comes_from_the_capabilities() -> None:
    with respx.mock(base_url=HOST, assert_all_called=False) as mock:
        chat = llamacpp_server(mock, tokens=2000)
        async with client("llamacpp") as c:
            window = (await c.get_capabilities()).context_window.value
            assert window is not None and window > 2000
            with pytest.raises(ContextLengthExceededError) as caught:
                async for _ in c.get_streaming_response("x", ChatOptions(max_output_tokens=window)):
                    pass
            assert caught.value.context_window == window
            assert not chat.called
            text = [
                u.text
                async for u in c.get_streaming_response("x", ChatOptions(max_output_tokens=8))
            ]
    assert "".join(text) == "ok"


async def test_an_estimate_never_refuses() -> None:
    with respx.mock(base_url=HOST, assert_all_called=False) as mock:
        chat = mock.post("/v1/chat/completions").mock(
            return_value=httpx.Response(200, json=COMPLETION)
        )
        mock.get("/v1/models").mock(
            return_value=httpx.Response(
                200, json={"object": "list", "data": [{"id": "m", "object": "model"}]}
            )
        )
        mock.get(url__regex=r".*").mock(return_value=httpx.Response(404))
        async with client("generic", capability_overrides={"context_window": 64}) as c:
            assert (await c.get_capabilities()).context_window.value == 64  # (known, and small)
            await c.get_response("word " * 500, ChatOptions(max_output_tokens=32))
    assert chat.called


async def test_off_by_default_no_tokenize_request() -> None:
    with respx.mock(base_url=HOST, assert_all_called=False) as mock:
        tokenize = mock.post("/tokenize").mock(return_value=httpx.Response(200, json={"count": 1}))
        chat = mock.post("/v1/chat/completions").mock(
            return_value=httpx.Response(200, json=COMPLETION)
        )
        async with OpenAiCompatibleChatClient(f"{HOST}/v1", "m", backend="vllm") as c:
            await c.get_response("x", ChatOptions(max_output_tokens=200))
    assert chat.called and not tokenize.called
