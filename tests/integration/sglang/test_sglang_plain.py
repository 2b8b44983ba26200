"""SGLang with no parsers (server set ``plain``): text, usage, errors, discovery.

Each test scripts the model text the scheduler emits and checks what a user of our client gets.
"""

from __future__ import annotations

import httpx
import pytest

from capabilities import Backend, Source, detect_backend
from providers import (
    ChatOptions,
    ContextLengthExceededError,
    ModelNotFoundError,
    OpenAiCompatibleChatClient,
)
from providers.transport.endpoint import Endpoint
from tests.integration.rigs.scenarios import (
    SCENARIOS,
    WEATHER_TOOLS,
    ExpectedCall,
    Scenario,
    run,
)
from tests.integration.rigs.scenarios import assert_matches as assert_scenario
from tests.integration.rigs.sglang.server import SglangServer
from tests.integration.sglang.helpers import (
    STREAMING,
    STREAMING_IDS,
    assert_usage,
    pipeline,
    run_scenario,
)

# Tools in the request, but no --tool-call-parser: SGLang answers 200 with the raw
# <tool_call> text in content (captured: plain--tools-without-tool-parser); our text recovery
# turns it into the same structured call a parser would have produced.
TOOLS_WITHOUT_PARSER = Scenario(
    "tools-without-tool-parser",
    SCENARIOS["tool-call"].model_text,
    expected_calls=(ExpectedCall("get_weather", {"city": "Paris", "unit": "celsius"}),),
    expected_finish="tool_calls",
    tools=WEATHER_TOOLS,
    template_kwargs=SCENARIOS["tool-call"].template_kwargs,
)


@pytest.mark.parametrize("streaming", STREAMING, ids=STREAMING_IDS)
async def test_text_with_usage(sglang_plain: SglangServer, streaming: bool) -> None:
    """Model text "It is sunny in Paris." -> that text, finish stop, usage from the scheduler."""
    scenario = SCENARIOS["text"]
    response = await run_scenario(sglang_plain, scenario, streaming=streaming)
    assert_scenario(response, scenario)
    assert_usage(response, sglang_plain)
    # The captured counts for this prompt and text (qwen3-qwen25--stream-text-enable-thinking-
    # false): 19 prompt tokens, 6 text tokens + <|im_end|>.
    assert response.usage is not None
    assert (response.usage.input_token_count, response.usage.output_token_count) == (19, 7)
    assert response.model_id == sglang_plain.model_id
    # SGLang's matched_stop: the end-of-sequence id that finished the answer (<|im_end|>)
    assert response.additional_properties.get("stop_sequence") == 151645
    prompt = sglang_plain.prompts()[-1].prompt
    assert prompt.startswith("<|im_start|>user\nWhat is the weather in Paris?<|im_end|>")


@pytest.mark.parametrize("streaming", STREAMING, ids=STREAMING_IDS)
async def test_length_cut_keeps_the_partial_text(
    sglang_plain: SglangServer, streaming: bool
) -> None:
    """Model text "It is sunny in Paris.", max_tokens 3 -> "It is sunny", finish length."""
    scenario = SCENARIOS["text-length"]
    response = await run_scenario(sglang_plain, scenario, streaming=streaming)
    assert_scenario(response, scenario)
    assert_usage(response, sglang_plain)
    assert response.additional_properties.get("stop_sequence") is None


@pytest.mark.parametrize("streaming", STREAMING, ids=STREAMING_IDS)
async def test_raw_tool_call_text_is_recovered(sglang_plain: SglangServer, streaming: bool) -> None:
    """Model text: a hermes ``<tool_call>`` block, tools sent, no server parser -> one
    structured get_weather call, no markup left in the text."""
    response = await run_scenario(sglang_plain, TOOLS_WITHOUT_PARSER, streaming=streaming)
    assert_scenario(response, TOOLS_WITHOUT_PARSER)
    assert "<tool_call>" not in response.text


@pytest.mark.parametrize("streaming", STREAMING, ids=STREAMING_IDS)
async def test_unknown_model_is_answered_anyway(
    sglang_plain: SglangServer, streaming: bool
) -> None:
    """SGLang serves any ``model`` name (captured: plain--error-unknown-model): our client,
    without validation, passes the answer on and reports the model name the server echoed."""
    scenario = SCENARIOS["text"]
    sglang_plain.script(scenario.model_text)
    async with pipeline(sglang_plain, model_id="no-such-model") as client:
        response = await run(client, scenario, streaming=streaming)
    assert_scenario(response, scenario)
    assert response.model_id == "no-such-model"


async def test_validate_model_catches_an_unknown_model_before_sending(
    sglang_plain: SglangServer,
) -> None:
    """``validate_model=True`` checks the id against ``/v1/models`` first: a typed error naming
    the served model, and no request reaches the scheduler."""
    sglang_plain.script("This must never be generated.")
    before = len(sglang_plain.prompts())
    async with OpenAiCompatibleChatClient(
        sglang_plain.base_url, "no-such-model", backend="sglang", validate_model=True
    ) as client:
        with pytest.raises(ModelNotFoundError) as caught:
            await client.get_response("What is the weather in Paris?")
    assert sglang_plain.model_id in str(caught.value)
    assert "no-such-model" in str(caught.value)
    assert len(sglang_plain.prompts()) == before


async def test_validate_model_accepts_the_served_model(sglang_plain: SglangServer) -> None:
    """The same check passes for the served id, and the request goes through."""
    text = SCENARIOS["text"].model_text
    sglang_plain.script(text)
    async with OpenAiCompatibleChatClient(
        sglang_plain.base_url, sglang_plain.model_id, backend="sglang", validate_model=True
    ) as client:
        response = await client.get_response("Hi", SCENARIOS["text"].options())
    assert response.text == text


@pytest.mark.parametrize("streaming", STREAMING, ids=STREAMING_IDS)
async def test_context_overflow_is_typed_with_sizes(
    sglang_plain: SglangServer, streaming: bool
) -> None:
    """A 5000-word prompt in a 4096-token context: SGLang's TokenizerManager refuses it (400)
    -> ``ContextLengthExceededError`` with the prompt's and the window's sizes; the scheduler
    never sees the request."""
    sglang_plain.script("This must never be generated.")
    before = len(sglang_plain.prompts())
    prompt = " ".join(["word"] * 5000)
    async with pipeline(sglang_plain) as client:
        with pytest.raises(ContextLengthExceededError) as caught:
            if streaming:
                async for _ in client.get_streaming_response(prompt, ChatOptions()):
                    pass
            else:
                await client.get_response(prompt, ChatOptions())
    error = caught.value
    assert error.context_window == sglang_plain.context_length
    assert error.prompt_tokens is not None and error.prompt_tokens > sglang_plain.context_length
    assert error.status == 400
    assert len(sglang_plain.prompts()) == before


async def test_capabilities_from_v1_models(sglang_plain: SglangServer) -> None:
    """``get_capabilities``: backend sglang (from ``owned_by``), the context window from
    ``max_model_len``, the served id, and the version from ``/server_info``."""
    async with OpenAiCompatibleChatClient(
        sglang_plain.base_url, sglang_plain.model_id, backend="sglang"
    ) as client:
        caps = await client.get_capabilities()
    assert caps.backend.value == Backend.SGLANG
    assert caps.backend.source == Source.MODELS
    assert caps.context_window.value == sglang_plain.context_length
    assert caps.context_window.source == Source.MODELS
    assert caps.served_model_ids.value == (sglang_plain.model_id,)
    assert caps.matched_model_id == sglang_plain.model_id
    assert caps.backend_version.value == "0.5.23"
    assert not caps.model_field_ignored


async def test_backend_detection(sglang_plain: SglangServer) -> None:
    """``detect_backend`` names SGLang from ``/v1/models`` alone."""
    async with httpx.AsyncClient() as http:
        detected = await detect_backend(http, Endpoint.from_base_url(sglang_plain.base_url))
    assert detected.backend == Backend.SGLANG
    assert detected.source == Source.MODELS
    assert "sglang" in detected.evidence


async def test_without_recovery_the_raw_tool_call_stays_text(sglang_plain: SglangServer) -> None:
    """The evidence behind ``test_raw_tool_call_text_is_recovered``: with our recovery layer
    off, SGLang's answer is the raw ``<tool_call>`` text, finish ``stop``, no calls."""
    scenario = TOOLS_WITHOUT_PARSER
    sglang_plain.script(scenario.model_text)
    async with pipeline(sglang_plain, reasoning_tags=None, text_tool_calls=None) as client:
        response = await run(client, scenario, streaming=True)
    assert response.text == scenario.model_text
    assert response.tool_calls == []
    assert response.finish_reason == "stop"
