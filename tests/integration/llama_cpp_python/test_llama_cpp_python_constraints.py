"""Constraints on llama-cpp-python's server (issue 33 item 2).

Its ``response_format`` takes ``text`` or ``json_object``, with the schema beside the type
(``{"type": "json_object", "schema": {...}}``); OpenAI's ``json_schema`` type fails its request
validation and comes back as a 500. The row sends the first form: the random-weight model's
answer then obeys the schema, and the client's check agrees, except for the numeric bounds this
server's grammar leaves out, which the check catches. A choice goes as a GBNF grammar, which
this server passes to the sampler too.
"""

from __future__ import annotations

import json
from contextlib import aclosing
from typing import Any

import httpx
import pytest

from providers import (
    ChatOptions,
    ChatResponse,
    ChatResponseFormat,
    ConstraintViolationError,
    OpenAiCompatibleChatClient,
)
from providers.chat_completions.constraint_check import violation
from providers.chat_completions.schema_check import schema_problems
from tests.integration.llama_cpp_python.server import MODEL_ALIAS, LlamaCppPythonServer
from tests.integration.llama_cpp_python.test_llama_cpp_python_scenarios import BACKEND, pipeline

PROPERTIES: dict[str, Any] = {"ok": {"type": "boolean"}, "kind": {"enum": ["a", "b"]}}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {**PROPERTIES, "n": {"type": "integer"}},
    "required": ["ok", "kind", "n"],
    "additionalProperties": False,
}
FORMAT = ChatResponseFormat.json_schema(SCHEMA, "flag")
BOUNDED = ChatResponseFormat.json_schema(
    {
        **SCHEMA,
        "properties": {**PROPERTIES, "n": {"type": "integer", "minimum": 0, "maximum": 9}},
    },
    "bounded",
)


@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "nonstream"])
async def test_a_schema_goes_as_json_object_with_the_schema_and_is_obeyed(
    lcp_server: LlamaCppPythonServer, streaming: bool
) -> None:
    options = ChatOptions(max_output_tokens=60, seed=3, response_format=FORMAT)
    async with aclosing(pipeline(lcp_server)) as client:
        if streaming:
            updates = [u async for u in client.get_streaming_response("Answer.", options)]
            response = ChatResponse.from_updates(updates)
        else:
            response = await client.get_response("Answer.", options)
    assert response.finish_reason == "stop"
    assert schema_problems(json.loads(response.text), SCHEMA) == []
    assert violation(response, FORMAT, BACKEND) is None


@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "nonstream"])
async def test_a_bound_its_grammar_does_not_enforce_is_caught_by_the_check(
    lcp_server: LlamaCppPythonServer, streaming: bool
) -> None:
    """llama-cpp-python's schema-to-grammar conversion keeps types, enums and required keys but
    not ``minimum`` / ``maximum``: the random model writes a negative ``n`` (seed 3), and the
    client's check is what notices."""
    options = ChatOptions(max_output_tokens=60, seed=3, response_format=BOUNDED)
    async with aclosing(pipeline(lcp_server)) as client:
        with pytest.raises(ConstraintViolationError) as caught:
            if streaming:
                async for _ in client.get_streaming_response("Answer.", options):
                    pass
            else:
                await client.get_response("Answer.", options)
    assert caught.value.constraint == "json_schema" and "minimum" in caught.value.problem
    assert schema_problems(json.loads(caught.value.response.text), SCHEMA) == []  # the rest held


async def test_the_body_is_its_form_and_openais_form_is_a_500(
    lcp_server: LlamaCppPythonServer,
) -> None:
    async with OpenAiCompatibleChatClient(lcp_server.base_url, MODEL_ALIAS, backend=BACKEND) as c:
        body = c.build_request_body("Answer.", ChatOptions(response_format=FORMAT), stream=False)
    assert body["response_format"] == {"type": "json_object", "schema": SCHEMA}
    body["response_format"] = FORMAT.to_openai()  # what the other rows send
    body["max_tokens"] = 4
    async with httpx.AsyncClient(timeout=60) as http:
        refused = await http.post(f"{lcp_server.base_url}/v1/chat/completions", json=body)
    assert refused.status_code == 500  # its validation error, answered as a server error


async def test_a_choice_goes_as_a_gbnf_grammar_and_is_obeyed(
    lcp_server: LlamaCppPythonServer,
) -> None:
    fmt = ChatResponseFormat.choice(["alpha", "beta"])
    options = ChatOptions(max_output_tokens=20, seed=4, response_format=fmt)
    async with aclosing(pipeline(lcp_server)) as client:
        response = await client.get_response("Answer.", options)
    assert response.text in ("alpha", "beta")
