"""The standard pipeline against the real ``vllm serve`` with no parsers (server set ``plain``).

Plain text with usage, a length cut, the errors vLLM answers before the engine runs (unknown
model, context overflow, tools without auto tool choice), and what ``/v1/models`` tells the
capability resolver. Each test scripts the model text and asserts what a user must get.
"""

from __future__ import annotations

import asyncio
import time
from contextlib import aclosing

import httpx
import pytest

from capabilities import Backend, Resolved, Source
from providers import (
    ChatClient,
    ChatOptions,
    ContextLengthExceededError,
    InvalidRequestError,
    ModelNotFoundError,
    OpenAiCompatibleChatClient,
    create_chat_client,
)
from providers.abstractions.reasoning_options import ReasoningEffort, ReasoningOptions
from providers.config import OaicompatConfig, client_for
from tests.integration.rigs.scenarios import SCENARIOS, assert_matches, run
from tests.integration.rigs.vllm.install import VLLM_VERSION
from tests.integration.rigs.vllm.server import VllmServer

QWEN3_NO_THINK_SUFFIX = "<|im_start|>assistant\n<think>\n\n</think>\n\n"


def pipeline(server: VllmServer, model_id: str | None = None) -> ChatClient:
    """What a user builds: ``create_chat_client`` with the vLLM profile, no retries (a retried
    error would hide the first one from the assertions)."""
    return create_chat_client(
        server.base_url, model_id or server.model_id, backend="vllm", retry=None
    )


@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "nonstream"])
async def test_plain_text_with_usage(vllm_plain: VllmServer, streaming: bool) -> None:
    """Model text ``It is sunny in Paris.``: that text, finish ``stop``, and usage equal to what
    the engine was given and emitted (vLLM counts the EOS token as output)."""
    scenario = SCENARIOS["text"]
    vllm_plain.script(scenario.model_text)
    async with aclosing(pipeline(vllm_plain)) as client:
        response = await run(client, scenario, streaming=streaming)
    assert_matches(response, scenario)
    engine = vllm_plain.prompts()[-1]
    assert engine.finish == "stop"
    assert engine.prompt.endswith(QWEN3_NO_THINK_SUFFIX), "chat_template_kwargs did not arrive"
    assert response.usage is not None
    assert response.usage.input_token_count == engine.prompt_tokens
    assert response.usage.output_token_count == engine.output_tokens
    assert response.usage.total_token_count == engine.prompt_tokens + engine.output_tokens
    assert response.usage.reasoning_token_count in (None, 0)  # no reasoning parser configured
    assert response.model_id == vllm_plain.model_id
    assert response.response_id and response.response_id.startswith("chatcmpl-")


@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "nonstream"])
async def test_length_cut_keeps_the_partial_text(vllm_plain: VllmServer, streaming: bool) -> None:
    """``max_tokens: 3`` on ``It is sunny in Paris.``: ``It is sunny`` and finish ``length``
    (vLLM merges the finish into the last token's chunk)."""
    scenario = SCENARIOS["text-length"]
    vllm_plain.script(scenario.model_text)
    async with aclosing(pipeline(vllm_plain)) as client:
        response = await run(client, scenario, streaming=streaming)
    assert_matches(response, scenario)
    assert response.usage is not None and response.usage.output_token_count == 3
    assert vllm_plain.prompts()[-1].finish == "length"


async def test_the_raw_client_alone_gives_the_same_text(vllm_plain: VllmServer) -> None:
    """Without the pipeline's layers, ``OpenAiCompatibleChatClient`` already gives the text."""
    scenario = SCENARIOS["text"]
    vllm_plain.script(scenario.model_text)
    async with OpenAiCompatibleChatClient(
        vllm_plain.base_url, vllm_plain.model_id, backend="vllm"
    ) as client:
        response = await run(client, scenario, streaming=True)
    assert_matches(response, scenario)


async def test_configured_client_for_a_vllm_backend(vllm_plain: VllmServer) -> None:
    """``client_for`` builds the same pipeline from configuration; ``extra_body`` carries
    ``chat_template_kwargs`` into every request (so the scenario needs none of its own)."""
    config = OaicompatConfig.model_validate(
        {
            "backends": {
                "gpu": {
                    "base_url": f"{vllm_plain.base_url}/v1",
                    "model_id": vllm_plain.model_id,
                    "backend": "vllm",
                    "extra_body": {"chat_template_kwargs": {"enable_thinking": False}},
                    "retry": {"max_attempts": 1},
                }
            },
            "roles": {"main": "gpu"},
        }
    )
    scenario = SCENARIOS["text"]
    vllm_plain.script(scenario.model_text)
    async with aclosing(client_for(config, "main")) as client:
        response = await client.get_response(
            scenario.prompt, ChatOptions(max_output_tokens=scenario.max_output_tokens)
        )
    assert_matches(response, scenario)
    assert vllm_plain.prompts()[-1].prompt.endswith(QWEN3_NO_THINK_SUFFIX)


@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "nonstream"])
async def test_unknown_model_is_model_not_found(vllm_plain: VllmServer, streaming: bool) -> None:
    """vLLM answers 404 ``NotFoundError`` (plain JSON even for a stream) before the engine runs."""
    before = len(vllm_plain.prompts())
    async with aclosing(pipeline(vllm_plain, model_id="no-such-model")) as client:
        with pytest.raises(ModelNotFoundError) as caught:
            await run(client, SCENARIOS["text"], streaming=streaming)
    error = caught.value
    assert error.status == 404
    assert error.backend == "vllm"
    assert "no-such-model" in str(error)
    assert len(vllm_plain.prompts()) == before, "the engine must not have been reached"


@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "nonstream"])
async def test_context_overflow_is_typed_with_sizes(
    vllm_plain: VllmServer, streaming: bool
) -> None:
    """A prompt over ``--max-model-len 4096``: 400, param ``input_tokens``, and the sizes from
    vLLM's message on the typed error."""
    async with aclosing(pipeline(vllm_plain)) as client:
        with pytest.raises(ContextLengthExceededError) as caught:
            options = ChatOptions(max_output_tokens=4)
            if streaming:
                _ = [u async for u in client.get_streaming_response("weather " * 5000, options)]
            else:
                await client.get_response("weather " * 5000, options)
    error = caught.value
    assert error.status == 400
    assert error.context_window == vllm_plain.max_model_len
    assert error.prompt_tokens is not None and error.prompt_tokens > vllm_plain.max_model_len


async def test_max_tokens_over_the_context_is_an_invalid_request(vllm_plain: VllmServer) -> None:
    """``max_tokens`` larger than the whole context: vLLM's 400 names param ``max_tokens``. The
    prompt fits, so this is a request to fix (fewer output tokens), not a context overflow."""
    async with aclosing(pipeline(vllm_plain)) as client:
        with pytest.raises(InvalidRequestError) as caught:
            await client.get_response("hi", ChatOptions(max_output_tokens=100_000))
    assert not isinstance(caught.value, ContextLengthExceededError)
    assert caught.value.status == 400
    assert caught.value.param == "max_tokens"


async def test_tools_without_auto_tool_choice_is_an_invalid_request(
    vllm_plain: VllmServer,
) -> None:
    """Tools sent to a server without ``--enable-auto-tool-choice``: vLLM refuses with 400 even
    when ``tool_choice`` is left out (it defaults to auto). The caller must learn why."""
    scenario = SCENARIOS["tool-call"]
    vllm_plain.script(scenario.model_text)
    async with aclosing(pipeline(vllm_plain)) as client:
        with pytest.raises(InvalidRequestError) as caught:
            await run(client, scenario, streaming=True)
    assert caught.value.status == 400
    assert "enable-auto-tool-choice" in str(caught.value)


async def test_capabilities_from_v1_models(vllm_plain: VllmServer) -> None:
    """``/v1/models`` gives the context window (``max_model_len``) and the served ids, and
    ``owned_by: vllm`` identifies the backend."""
    async with OpenAiCompatibleChatClient(vllm_plain.base_url, vllm_plain.model_id) as client:
        caps = await client.get_capabilities()
    assert caps.context_window.value == vllm_plain.max_model_len
    assert caps.context_window.source == Source.MODELS
    assert caps.backend == Resolved(Backend.VLLM, Source.MODELS)  # owned_by: vllm
    assert caps.served_model_ids.value == (vllm_plain.model_id,)
    assert caps.served_model_ids.source == Source.MODELS
    assert caps.backend_version == Resolved(VLLM_VERSION, Source.VERSION)  # GET /version
    assert caps.family == "qwen3"  # from the served name, not the folder
    assert not caps.model_field_ignored  # vLLM checks the model name (404 above)


async def test_stop_string_ends_the_answer_and_aborts_the_engine(vllm_plain: VllmServer) -> None:
    """``stop: ["sunny"]`` on ``It is sunny in Paris.``: vLLM's detokenizer finds the string,
    trims it, finishes ``stop``, and aborts the request in the engine (the scripted engine logs
    the abort), the path a real stop string takes. Thinking is off through ``reasoning``: the
    client then knows no stop can land in reasoning and sends ``stop`` (with thinking possible
    it would apply the stop itself, ``providers.chat_completions.stop_sequences``)."""
    vllm_plain.script("It is sunny in Paris.")
    options = ChatOptions(
        max_output_tokens=40,
        stop_sequences=["sunny"],
        reasoning=ReasoningOptions(effort=ReasoningEffort.NONE),
    )
    async with aclosing(pipeline(vllm_plain)) as client:
        response = await client.get_response("weather?", options)
    assert response.text == "It is "
    assert response.finish_reason == "stop"
    deadline = time.monotonic() + 5
    while vllm_plain.prompts()[-1].finish != "abort" and time.monotonic() < deadline:
        await asyncio.sleep(0.05)  # the abort reaches the engine after the answer is sent
    assert vllm_plain.prompts()[-1].finish == "abort"


async def test_served_tokenizer_has_qwen3_added_tokens(vllm_plain: VllmServer) -> None:
    """The weightless model's tokenizer, as vLLM loaded it: Qwen3's tool and think tags at their
    real ids, as single tokens (the parsers look them up by id)."""
    async with httpx.AsyncClient(base_url=vllm_plain.base_url) as http:
        response = await http.post(
            "/tokenize",
            json={
                "model": vllm_plain.model_id,
                "prompt": "<tool_call></tool_call><think></think>Hello world",
                "add_special_tokens": False,
            },
        )
    assert response.status_code == 200, response.text
    assert response.json()["tokens"] == [151657, 151658, 151667, 151668, 9707, 1879]
