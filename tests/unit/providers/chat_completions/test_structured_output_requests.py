"""Where each backend gets the schema of a structured answer (issue 22 part 6).

``BackendProfile.json_schema_fields`` is the data: every row sends OpenAI's ``response_format``
(llama-server, vLLM 0.33 and SGLang 0.5 all honour it, checked against the real servers in
``tests/integration``), and a row may name a server's native key instead: llama.cpp's top-level
``json_schema`` or vLLM's ``structured_outputs``. The Responses API's ``text.format`` is the same
object flattened.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from pydantic import BaseModel

from providers import ChatMessage, ChatOptions, ChatResponseFormat
from providers.backends import PROFILES, BackendProfile
from providers.chat_completions.request import build_chat_request
from providers.responses.request import build_responses_request


class Weather(BaseModel):
    """The weather in one city."""

    city: str
    celsius: int


FORMAT = ChatResponseFormat.for_type(Weather)
SCHEMA = dict(FORMAT.schema or {})


def body(profile: BackendProfile, response_format: ChatResponseFormat = FORMAT) -> dict[str, Any]:
    return build_chat_request(
        [ChatMessage.user("weather?")],
        ChatOptions(response_format=response_format),
        model_id="m",
        stream=True,
        profile=profile,
    )


@pytest.mark.parametrize("name", sorted(set(PROFILES) - {"llama-cpp-python"}))
def test_every_backend_sends_openais_response_format(name: str) -> None:
    sent = body(PROFILES[name])
    assert sent["response_format"] == {
        "type": "json_schema",
        "json_schema": {
            "name": "Weather",
            "description": "The weather in one city.",
            "schema": SCHEMA,
            "strict": True,
        },
    }
    assert "json_schema" not in sent and "structured_outputs" not in sent  # sent once


def test_llama_cpp_python_gets_the_schema_in_its_json_object_form() -> None:
    # its response_format type is text or json_object; json_schema is a 500 (research-33 §4)
    sent = body(PROFILES["llama-cpp-python"])
    assert sent["response_format"] == {"type": "json_object", "schema": SCHEMA}
    assert "json_schema" not in sent and "structured_outputs" not in sent


def test_a_row_can_name_the_servers_native_keys_instead() -> None:
    native = dataclasses.replace(
        PROFILES["generic"], json_schema_fields=("json_schema", "structured_outputs")
    )
    sent = body(native)
    assert sent["json_schema"] == SCHEMA  # llama.cpp: the schema alone
    assert sent["structured_outputs"] == {"json": SCHEMA}  # vLLM >= 0.10
    assert "response_format" not in sent


@pytest.mark.parametrize("fmt", [ChatResponseFormat.JSON, ChatResponseFormat.TEXT])
def test_formats_without_a_schema_are_response_format_everywhere(fmt: ChatResponseFormat) -> None:
    native = dataclasses.replace(PROFILES["generic"], json_schema_fields=("structured_outputs",))
    assert body(native, fmt)["response_format"] == {"type": fmt.kind}
    assert "structured_outputs" not in body(native, fmt)


def test_a_callers_extra_key_joins_but_never_replaces_the_format() -> None:
    options = ChatOptions(
        response_format=FORMAT,
        additional_properties={"structured_outputs": {"whitespace_pattern": " ?"}},
    )
    sent = build_chat_request(
        [ChatMessage.user("x")], options, model_id="m", stream=False, profile=PROFILES["vllm"]
    )
    assert sent["response_format"] == FORMAT.to_openai()
    assert sent["structured_outputs"] == {"whitespace_pattern": " ?"}


def test_the_responses_api_gets_the_same_format_flattened_into_text_format() -> None:
    sent = build_responses_request(
        [], ChatOptions(response_format=FORMAT), instructions=None, model_id="m", stream=False
    )
    assert sent["text"] == {
        "format": {
            "type": "json_schema",
            "name": "Weather",
            "description": "The weather in one city.",
            "schema": SCHEMA,
            "strict": True,
        }
    }
    plain = ChatResponseFormat.json_schema({"type": "object"}, "out")
    sent = build_responses_request(
        [], ChatOptions(response_format=plain), instructions=None, model_id="m", stream=False
    )
    assert sent["text"]["format"] == {"type": "json_schema", "name": "out", "schema": plain.schema}
