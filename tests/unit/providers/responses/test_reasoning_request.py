"""``ChatOptions.reasoning`` in the ``/v1/responses`` body: ``reasoning.effort`` for an effort
word, the template switch in ``chat_template_kwargs``, the same refusals as the chat path."""

from __future__ import annotations

from typing import Any

import pytest
from structlog.testing import capture_logs

from providers import ChatOptions
from providers.abstractions.errors import UnsupportedOptionError
from providers.abstractions.event_names import REQUEST_OPTION_REFUSED
from providers.abstractions.reasoning_options import (
    ReasoningEffort,
    ReasoningOptions,
    ReasoningOutput,
)
from providers.responses import OpenAiCompatibleResponsesClient

BASE = "http://llm.test"


def body(effort: ReasoningEffort | None, model: str, **kwargs: Any) -> dict[str, Any]:
    extras = kwargs.pop("extras", {})
    output = kwargs.pop("output", None)
    client = OpenAiCompatibleResponsesClient(
        BASE, model, backend=kwargs.pop("backend", "vllm"), **kwargs
    )
    options = ChatOptions(
        reasoning=ReasoningOptions(effort=effort, output=output), additional_properties=extras
    )
    return client.build_request_body("hi", options, stream=False)


def test_gpt_oss_gets_reasoning_effort_nested() -> None:
    sent = body(ReasoningEffort.HIGH, "openai/gpt-oss-20b")
    assert sent["reasoning"] == {"effort": "high"}
    assert "reasoning_effort" not in sent


def test_a_qwen3_model_gets_its_template_switch() -> None:
    sent = body(ReasoningEffort.NONE, "Qwen/Qwen3-8B")
    assert sent["chat_template_kwargs"] == {"enable_thinking": False}


def test_the_callers_reasoning_object_keeps_its_own_entries() -> None:
    sent = body(
        ReasoningEffort.LOW,
        "gpt-oss-20b",
        extras={"reasoning": {"summary": "auto", "effort": "medium"}},
    )
    assert sent["reasoning"] == {"effort": "medium", "summary": "auto"}


def test_output_none_sends_include_reasoning_false_on_vllm() -> None:
    sent = body(None, "Qwen/Qwen3-8B", output=ReasoningOutput.NONE)
    assert sent["include_reasoning"] is False


def test_thinking_off_on_r1_is_refused_before_sending() -> None:
    with pytest.raises(UnsupportedOptionError) as caught:
        body(ReasoningEffort.NONE, "deepseek-r1:8b")
    assert caught.value.family == "deepseek-r1"


def test_warn_leaves_the_option_out_and_says_so() -> None:
    with capture_logs() as logs:
        sent = body(ReasoningEffort.NONE, "gpt-oss:20b", unsupported_options="warn")
    assert "reasoning" not in sent
    assert [log["family"] for log in logs if log["event"] == REQUEST_OPTION_REFUSED] == ["gpt-oss"]


def test_the_explicit_family_applies_on_responses_too() -> None:
    sent = body(ReasoningEffort.NONE, "alias", model_family="deepseek-v3.1")
    assert sent["chat_template_kwargs"] == {"thinking": False}
