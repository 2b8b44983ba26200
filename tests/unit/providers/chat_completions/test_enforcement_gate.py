"""The chat client loads the enforcement planner only when ``asks_for_enforcement`` says a
request may need it: so every request the planner would act on must pass that gate."""

from __future__ import annotations

import pytest

from providers import (
    ChatOptions,
    ChatResponseFormat,
    ReasoningEffort,
    ReasoningOptions,
    ReasoningOutput,
    ToolDeclaration,
)
from providers.backends import PROFILES
from providers.chat_completions.option_enforcement import enforcement_for
from providers.chat_completions.request import asks_for_enforcement

OPTIONS = [
    None,
    ChatOptions(),
    ChatOptions(temperature=0.1, max_output_tokens=5),
    ChatOptions(tools=[ToolDeclaration("f")], allow_multiple_tool_calls=False),
    ChatOptions(tools=[ToolDeclaration("f")], allow_multiple_tool_calls=True),
    ChatOptions(stop_sequences=["END"], model_id="Qwen/Qwen3-8B"),
    ChatOptions(stop_sequences=["END"]),
    ChatOptions(response_format=ChatResponseFormat.choice(["a", "b"])),
    ChatOptions(response_format=ChatResponseFormat.JSON),
    ChatOptions(response_format=ChatResponseFormat.TEXT),
    ChatOptions(additional_properties={"guided_regex": "a+"}),
    ChatOptions(additional_properties={"chat_template_kwargs": {"x": 1}}),
    ChatOptions(reasoning=ReasoningOptions(output=ReasoningOutput.NONE)),
    ChatOptions(reasoning=ReasoningOptions(effort=ReasoningEffort.LOW)),
]


@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("backend", sorted(PROFILES))
@pytest.mark.parametrize("family", [None, "qwen3", "gpt-oss"])
def test_every_request_the_planner_acts_on_passes_the_gate(
    options: ChatOptions | None, backend: str, family: str | None
) -> None:
    plan = enforcement_for(options, PROFILES[backend], family=family)
    if plan is not None:
        assert asks_for_enforcement(options)


def test_a_plain_request_does_not_pass_the_gate() -> None:
    assert not asks_for_enforcement(None)
    assert not asks_for_enforcement(ChatOptions(temperature=0.2, max_output_tokens=9))
