"""Issue 32 item 13: a ``ChatOptions`` field of the wrong type is a typed error where the options
are made, naming the field, never an untyped error from a layer far away.

An int ``conversation_id`` failed in the session-affinity layer (``len()`` of an int), a str
``tool_mode`` or a dict ``response_format`` in the request builder (``AttributeError``), a dict
tool without a name there too (``KeyError``), a non-dict ``additional_properties`` wherever it
was merged; a str ``stop_sequences`` was silently sent as one stop per character. Each is now
a ``ConfigurationTypeError``: a ``ConfigurationError`` (so a ``ProviderError`` and a
``ValueError``) and a ``TypeError``, the error Python raises for the same mistake.
"""

from __future__ import annotations

import dataclasses
from typing import Any, cast

import pytest

from providers import (
    ChatMessage,
    ChatOptions,
    ChatResponseFormat,
    ChatToolMode,
    ConfigurationError,
    ConfigurationTypeError,
    ProviderError,
    SessionAffinity,
    SessionAffinityChatClient,
    ToolDeclaration,
)
from tests.unit.scripted_client import ScriptedClient, answer

SECRET = "conv-secret-81d2"


class _Opaque:
    def __repr__(self) -> str:
        return SECRET


WRONG: dict[str, tuple[str, Any]] = {
    "int-conversation-id": ("conversation_id", 5),
    "object-conversation-id": ("conversation_id", _Opaque()),
    "int-model-id": ("model_id", 7),
    "str-temperature": ("temperature", "0.7"),
    "bool-temperature": ("temperature", True),
    "float-top-k": ("top_k", 4.0),
    "str-max-output-tokens": ("max_output_tokens", "100"),
    "bool-seed": ("seed", False),
    "str-top-p": ("top_p", "1"),
    "none-like-penalty": ("frequency_penalty", "none"),
    "list-presence-penalty": ("presence_penalty", [0.5]),
    "str-stop-sequences": ("stop_sequences", "STOP"),
    "int-in-stop-sequences": ("stop_sequences", ["a", 1]),
    "one-tool-not-a-list": ("tools", ToolDeclaration("f")),
    "str-in-tools": ("tools", ["get_weather"]),
    "dict-tool-without-name": ("tools", [{"type": "function", "function": {}}]),
    "str-tool-mode": ("tool_mode", "auto"),
    "str-parallel-tool-calls": ("allow_multiple_tool_calls", "yes"),
    "int-parallel-tool-calls": ("allow_multiple_tool_calls", 1),
    "dict-response-format": ("response_format", {"type": "json_object"}),
    "none-additional-properties": ("additional_properties", None),
    "list-additional-properties": ("additional_properties", [("grammar", "x")]),
    "int-key-additional-properties": ("additional_properties", {1: "x"}),
    "list-headers": ("headers", [("X-Trace", "1")]),
    "str-headers": ("headers", "X-Trace: 1"),
}


@pytest.mark.parametrize(("name", "value"), WRONG.values(), ids=WRONG.keys())
def test_a_field_of_the_wrong_type_is_a_typed_error_at_construction(name: str, value: Any) -> None:
    with pytest.raises(ConfigurationTypeError) as info:
        ChatOptions(**{name: value})
    error = info.value
    assert isinstance(error, ConfigurationError | ProviderError | TypeError | ValueError)
    assert f"ChatOptions.{name}" in str(error)
    assert SECRET not in str(error) and "STOP" not in str(error)  # the value is never quoted


@pytest.mark.parametrize(("name", "value"), WRONG.values(), ids=WRONG.keys())
def test_replace_checks_the_new_value_too(name: str, value: Any) -> None:
    with pytest.raises(ConfigurationTypeError):
        dataclasses.replace(ChatOptions(), **{name: value})


def test_every_value_of_the_right_type_is_accepted() -> None:
    options = ChatOptions(
        model_id="m",
        temperature=1,  # an int is a number
        top_p=0.9,
        top_k=40,
        max_output_tokens=128,
        # Any sequence of str: the run-time check takes a tuple, though the field is annotated
        # ``list[str]``; the cast lets the checker accept what this test holds the check to.
        stop_sequences=cast(list[str], ("###",)),
        seed=0,
        frequency_penalty=0.0,
        presence_penalty=-0.5,
        tools=[
            ToolDeclaration("a"),
            {"type": "function", "function": {"name": "b", "strict": True}},
            {"name": "c"},  # the flat form ``ToolDeclaration.from_openai`` reads
        ],
        tool_mode=ChatToolMode.require("a"),
        allow_multiple_tool_calls=False,
        response_format=ChatResponseFormat.JSON,
        additional_properties={"grammar": "root ::= x"},
        headers={"X-Trace": "1"},
        conversation_id="c-1",
    )
    assert [t.name for t in options.tool_declarations()] == ["a", "b", "c"]
    assert ChatOptions.from_openai(options.to_openai()).to_openai() == options.to_openai()


async def test_an_int_conversation_id_no_longer_reaches_the_affinity_layer() -> None:
    """The issue's case: the error is raised where the caller wrote the mistake."""
    client = SessionAffinityChatClient(
        ScriptedClient(answer("hi")), SessionAffinity("header", "x-k")
    )
    with pytest.raises(ConfigurationTypeError, match="conversation_id"):
        # Deliberately an int: the caller's mistake the issue reports; the cast hides it from
        # the checker, as an untyped caller would.
        options = ChatOptions(conversation_id=cast(str, 42))
        await client.get_response([ChatMessage.user("hi")], options)
