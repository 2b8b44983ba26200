"""The request builders apply the constraint table and the client's ``unsupported_options``
policy: ``raise`` sends nothing, ``warn`` logs ``oaicompat.request.option_refused`` and sends the
request without the option, ``ignore`` does so quietly."""

from __future__ import annotations

from typing import Any

import pytest
from structlog.testing import capture_logs

from capabilities.option_verdicts import OptionPolicy
from providers import ChatMessage, ChatOptions, ChatResponseFormat
from providers.abstractions.errors import UnsupportedOptionError
from providers.abstractions.event_names import REQUEST_OPTION_REFUSED
from providers.backends import PROFILES
from providers.chat_completions.request import build_chat_request
from providers.responses.request import build_responses_request

REGEX = ChatResponseFormat.regex("[0-9]+")
SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}}


def chat(options: ChatOptions, backend: str, policy: OptionPolicy = "raise") -> dict[str, Any]:
    return build_chat_request(
        [ChatMessage.user("hi")],
        options,
        model_id="m",
        stream=False,
        profile=PROFILES[backend],
        policy=policy,
    )


def test_a_regex_on_vllm_goes_in_structured_outputs_and_joins_the_callers_options() -> None:
    options = ChatOptions(
        response_format=REGEX,
        additional_properties={"structured_outputs": {"disable_any_whitespace": True}},
    )
    body = chat(options, "vllm")
    assert body["structured_outputs"] == {"regex": "[0-9]+", "disable_any_whitespace": True}
    assert "response_format" not in body  # oaicompat's own form is never sent


def test_a_choice_on_llamacpp_is_a_gbnf_grammar() -> None:
    body = chat(ChatOptions(response_format=ChatResponseFormat.choice(["a", "b"])), "llamacpp")
    assert body["grammar"] == 'root ::= "a" | "b"' and "response_format" not in body


def test_a_regex_on_llamacpp_is_refused_before_sending() -> None:
    with pytest.raises(UnsupportedOptionError) as info:
        chat(ChatOptions(response_format=REGEX), "llamacpp")
    assert (info.value.option, info.value.backend) == ("response_format.regex", "llamacpp")


@pytest.mark.parametrize("policy", ["warn", "ignore"])
def test_warn_and_ignore_send_the_request_without_the_option(policy: OptionPolicy) -> None:
    with capture_logs() as logs:
        body = chat(ChatOptions(response_format=REGEX, temperature=0.5), "llamacpp", policy)
    assert body["temperature"] == 0.5
    assert not {"grammar", "regex", "response_format", "structured_outputs"} & set(body)
    refused = [log for log in logs if log["event"] == REQUEST_OPTION_REFUSED]
    if policy == "warn":
        (event,) = refused
        assert event["option"] == "response_format.regex" and event["backend"] == "llamacpp"
        assert "[0-9]" not in repr(event)
    else:
        assert refused == []


def test_guided_regex_reaches_vllm_translated() -> None:
    body = chat(ChatOptions(additional_properties={"guided_regex": "a+"}), "vllm")
    assert body["structured_outputs"] == {"regex": "a+"} and "guided_regex" not in body


@pytest.mark.parametrize("backend", ["llamacpp", "sglang"])
def test_a_schema_and_a_grammar_extra_are_refused_where_the_server_errors_on_both(
    backend: str,
) -> None:
    options = ChatOptions(
        response_format=ChatResponseFormat.json_schema(SCHEMA),
        additional_properties={"grammar": 'root ::= "a"'},
    )
    with pytest.raises(UnsupportedOptionError) as info:
        chat(options, backend)
    assert info.value.option == "additional_properties.grammar"
    body = chat(options, backend, "ignore")
    assert "grammar" not in body and body["response_format"]["type"] == "json_schema"


def test_llama_cpp_python_gets_json_object_with_the_schema() -> None:
    body = chat(
        ChatOptions(response_format=ChatResponseFormat.json_schema(SCHEMA)), "llama-cpp-python"
    )
    assert body["response_format"] == {"type": "json_object", "schema": SCHEMA}


def test_text_and_json_object_are_still_response_format() -> None:
    assert chat(ChatOptions(response_format=ChatResponseFormat.TEXT), "vllm")[
        "response_format"
    ] == {"type": "text"}
    assert chat(ChatOptions(response_format=ChatResponseFormat.JSON), "sglang")[
        "response_format"
    ] == {"type": "json_object"}


# --- the Responses API ------------------------------------------------------------------------


def responses(options: ChatOptions, backend: str, policy: OptionPolicy = "raise") -> dict[str, Any]:
    return build_responses_request(
        [],
        options,
        instructions=None,
        model_id="m",
        stream=False,
        profile=PROFILES[backend],
        policy=policy,
    )


def test_vllms_responses_api_takes_structured_outputs() -> None:
    body = responses(ChatOptions(response_format=ChatResponseFormat.choice(["a", "b"])), "vllm")
    assert body["structured_outputs"] == {"choice": ["a", "b"]} and "text" not in body


@pytest.mark.parametrize("backend", ["sglang", "llamacpp", "openai", "generic"])
def test_a_constraint_is_refused_on_other_responses_apis(backend: str) -> None:
    with pytest.raises(UnsupportedOptionError) as info:
        responses(ChatOptions(response_format=REGEX), backend)
    assert info.value.backend == backend and "Responses API" in info.value.reason
    body = responses(ChatOptions(response_format=REGEX), backend, "ignore")
    assert "text" not in body and "regex" not in body


def test_json_schema_on_the_responses_api_is_text_format_as_before() -> None:
    body = responses(
        ChatOptions(response_format=ChatResponseFormat.json_schema(SCHEMA, "r")), "sglang"
    )
    assert body["text"] == {"format": {"type": "json_schema", "name": "r", "schema": SCHEMA}}
