"""``ChatOptions.reasoning`` in the chat body (``build_request_body``, the body a call sends):
the family read from the model id or given, the caller's own template kwargs kept, and a
refusal raised, warned or ignored as the client's policy says."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
import respx
from structlog.testing import capture_logs

from providers import ChatOptions, OpenAiCompatibleChatClient
from providers.abstractions.errors import UnsupportedOptionError
from providers.abstractions.event_names import REQUEST_OPTION_REFUSED
from providers.abstractions.reasoning_options import (
    ReasoningEffort,
    ReasoningOptions,
    ReasoningOutput,
)

BASE = "http://llm.test"
OFF = ChatOptions(reasoning=ReasoningOptions(effort=ReasoningEffort.NONE))


def body(
    options: ChatOptions | None,
    *,
    backend: str = "vllm",
    model: str | None = "Qwen/Qwen3-8B",
    **client: Any,
) -> dict[str, Any]:
    chat = OpenAiCompatibleChatClient(BASE, model, backend=backend, **client)
    return chat.build_request_body("hi", options, stream=False)


def test_thinking_off_reaches_a_qwen3_model_as_its_template_switch() -> None:
    assert body(OFF)["chat_template_kwargs"] == {"enable_thinking": False}
    assert body(OFF, backend="llamacpp")["chat_template_kwargs"] == {"enable_thinking": False}
    assert body(OFF, backend="sglang")["chat_template_kwargs"] == {"enable_thinking": False}


def test_the_family_comes_from_the_options_model_id_before_the_clients() -> None:
    options = ChatOptions(model_id="deepseek-ai/DeepSeek-V3.1", reasoning=OFF.reasoning)
    assert body(options)["chat_template_kwargs"] == {"thinking": False}


def test_an_explicit_model_family_wins_over_the_id() -> None:
    sent = body(OFF, model="my-alias", model_family="granite")
    assert sent["chat_template_kwargs"] == {"thinking": False}


def test_an_id_naming_no_family_gets_the_portable_form() -> None:
    sent = body(OFF, model="my-alias")
    assert sent["chat_template_kwargs"] == {"enable_thinking": False, "thinking": False}


def test_gpt_oss_gets_reasoning_effort() -> None:
    options = ChatOptions(reasoning=ReasoningOptions(effort=ReasoningEffort.EXTRA_HIGH))
    sent = body(options, model="openai/gpt-oss-20b")
    assert sent["reasoning_effort"] == "high"
    assert "chat_template_kwargs" not in sent


def test_the_callers_template_kwargs_are_merged_and_win() -> None:
    caller = {"chat_template_kwargs": {"enable_thinking": True, "custom": 1}}
    options = ChatOptions(reasoning=OFF.reasoning, additional_properties=caller)
    sent = body(options, model="my-alias")
    # The caller's explicit enable_thinking wins; the mapped `thinking` joins it.
    assert sent["chat_template_kwargs"] == {"enable_thinking": True, "custom": 1, "thinking": False}
    assert caller == {"chat_template_kwargs": {"enable_thinking": True, "custom": 1}}  # not edited


def test_a_top_level_key_the_caller_set_stays() -> None:
    options = ChatOptions(
        reasoning=ReasoningOptions(effort=ReasoningEffort.LOW),
        additional_properties={"reasoning_effort": "medium"},
    )
    assert body(options, model="gpt-oss-20b")["reasoning_effort"] == "medium"


def test_output_none_sends_include_reasoning_false_on_vllm() -> None:
    options = ChatOptions(reasoning=ReasoningOptions(output=ReasoningOutput.NONE))
    assert body(options)["include_reasoning"] is False
    assert "include_reasoning" not in body(options, backend="sglang")


def test_without_reasoning_the_body_is_the_one_before() -> None:
    plain = ChatOptions(temperature=0.5)
    assert body(plain) == body(ChatOptions(temperature=0.5, reasoning=None))
    assert "chat_template_kwargs" not in body(plain)
    assert "reasoning_effort" not in body(plain)


# --- refusals and the policy -------------------------------------------------------------------


def test_thinking_off_on_an_always_thinking_model_raises_before_sending() -> None:
    with pytest.raises(UnsupportedOptionError) as caught:
        body(OFF, model="Qwen/QwQ-32B")
    error = caught.value
    assert (error.option, error.backend, error.family) == ("reasoning.effort", "vllm", "qwq")
    assert "cannot stop thinking" in str(error)


@respx.mock
async def test_a_raised_refusal_sends_nothing() -> None:
    route = respx.post(f"{BASE}/v1/chat/completions").mock(return_value=httpx.Response(500))
    async with OpenAiCompatibleChatClient(BASE, "deepseek-r1:8b", backend="llamacpp") as chat:
        with pytest.raises(UnsupportedOptionError):
            await chat.get_response("hi", OFF)
    assert not route.called


def test_warn_emits_the_event_and_sends_without_the_option() -> None:
    options = ChatOptions(
        reasoning=ReasoningOptions(effort=ReasoningEffort.NONE, output=ReasoningOutput.NONE)
    )
    with capture_logs() as logs:
        sent = body(options, model="Qwen/QwQ-32B", unsupported_options="warn")
    assert "chat_template_kwargs" not in sent and "reasoning_effort" not in sent
    assert sent["include_reasoning"] is False  # the output part still goes
    refused = [log for log in logs if log["event"] == REQUEST_OPTION_REFUSED]
    assert len(refused) == 1
    assert refused[0]["option"] == "reasoning.effort"
    assert (refused[0]["backend"], refused[0]["family"]) == ("vllm", "qwq")


def test_ignore_sends_without_the_option_quietly() -> None:
    with capture_logs() as logs:
        sent = body(OFF, backend="llama-cpp-python", unsupported_options="ignore")
    assert "chat_template_kwargs" not in sent
    assert [log for log in logs if log["event"] == REQUEST_OPTION_REFUSED] == []


@respx.mock
async def test_warn_sends_the_request_without_the_option() -> None:
    answer = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}}]}
    route = respx.post(f"{BASE}/v1/chat/completions").mock(
        return_value=httpx.Response(200, json=answer)
    )
    async with OpenAiCompatibleChatClient(
        BASE, "gpt-oss:20b", backend="sglang", unsupported_options="warn"
    ) as chat:
        with capture_logs():
            response = await chat.get_response("hi", OFF)
    assert response.text == "ok"
    sent = json.loads(route.calls.last.request.content)
    assert "reasoning_effort" not in sent


# --- request_family ----------------------------------------------------------------------------


def test_request_family_reads_the_id_once_per_id() -> None:
    chat = OpenAiCompatibleChatClient(BASE, "Qwen/Qwen3-8B")
    assert chat.request_family(None) == "qwen3"
    assert chat._family_of == ("Qwen/Qwen3-8B", "qwen3")
    assert chat.request_family(ChatOptions(model_id="gpt-oss:20b")) == "gpt-oss"
    assert chat.request_family(ChatOptions()) == "qwen3"
    assert OpenAiCompatibleChatClient(BASE, None).request_family(None) is None
    assert OpenAiCompatibleChatClient(BASE, "x", model_family="glm").request_family(None) == "glm"
