"""Constraints against the real ``vllm serve`` (issue 33 item 2).

Each form reaches ``structured_outputs`` where vLLM's front end honours it (the scripted engine
records the constraint vLLM built, and the grammar backend that validated it; a choice arrives
as the grammar vLLM made of it), and a caller's
``guided_regex``, which vLLM ≥ 0.12 accepts and ignores (200, unconstrained), arrives translated.
The engine obeys nothing (it has no model to constrain), so a scripted answer that breaks the
constraint comes back as the typed error, streamed and not: the client's check is what catches
a server that did not constrain.
"""

from __future__ import annotations

from contextlib import aclosing
from typing import Any

import httpx
import pytest

from providers import ChatOptions, ChatResponseFormat, ConstraintViolationError
from providers.responses import OpenAiCompatibleResponsesClient
from tests.integration.rigs.vllm.server import VllmServer
from tests.integration.vllm.test_vllm_plain import pipeline

FORMS: list[tuple[ChatResponseFormat | None, dict[str, Any], str, dict[str, Any]]] = [
    (ChatResponseFormat.regex("[0-9]{3}"), {}, "123", {"regex": "[0-9]{3}"}),
    # vLLM's front end turns a choice into a grammar for xgrammar before the engine sees it
    (ChatResponseFormat.choice(["yes", "no"]), {}, "no", {"grammar": 'root ::= "yes" | "no"'}),
    (
        ChatResponseFormat.grammar('root ::= "a" | "b"', "ebnf"),
        {},
        "a",
        {"grammar": 'root ::= "a" | "b"'},
    ),
    (None, {"guided_regex": "[a-z]+"}, "abc", {"regex": "[a-z]+"}),
    (None, {"guided_choice": ["x", "y"]}, "y", {"grammar": 'root ::= "x" | "y"'}),
]


async def ask(server: VllmServer, options: ChatOptions, *, streaming: bool) -> str:
    async with aclosing(pipeline(server)) as client:
        if not streaming:
            return (await client.get_response("Answer.", options)).text
        return "".join([u.text async for u in client.get_streaming_response("Answer.", options)])


@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "nonstream"])
@pytest.mark.parametrize(
    "case", FORMS, ids=["regex", "choice", "grammar", "guided_regex", "guided_choice"]
)
async def test_each_form_reaches_structured_outputs(
    vllm_plain: VllmServer, streaming: bool, case: tuple[Any, ...]
) -> None:
    fmt, extra, answer, arrived = case
    vllm_plain.script(answer)
    options = ChatOptions(response_format=fmt, additional_properties=extra)
    assert await ask(vllm_plain, options, streaming=streaming) == answer
    constraint = vllm_plain.prompts()[-1].structured_outputs
    assert constraint is not None, "the request reached the engine without a constraint"
    assert {k: v for k, v in constraint.items() if k != "backend"} == arrived
    assert constraint["backend"]  # a grammar backend validated it before the engine


@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "nonstream"])
async def test_an_answer_the_engine_did_not_constrain_is_the_typed_error(
    vllm_plain: VllmServer, streaming: bool
) -> None:
    vllm_plain.script("It is sunny.")
    options = ChatOptions(additional_properties={"guided_regex": "[0-9]+"})
    with pytest.raises(ConstraintViolationError) as caught:
        await ask(vllm_plain, options, streaming=streaming)
    assert caught.value.constraint == "regex" and caught.value.backend == "vllm"
    assert caught.value.response.text == "It is sunny."
    assert caught.value.response.usage is not None


async def test_the_old_guided_key_sent_as_it_is_reaches_the_engine_unconstrained(
    vllm_plain: VllmServer,
) -> None:
    """The control: vLLM accepts ``guided_regex`` (200) and drops it, which is why the client
    never sends it as it is."""
    vllm_plain.script("It is sunny.")
    body = {
        "model": vllm_plain.model_id,
        "messages": [{"role": "user", "content": "Answer."}],
        "guided_regex": "[0-9]+",
    }
    async with httpx.AsyncClient(timeout=60) as http:
        answer = await http.post(f"{vllm_plain.base_url}/v1/chat/completions", json=body)
    assert answer.status_code == 200
    assert answer.json()["choices"][0]["message"]["content"] == "It is sunny."
    assert vllm_plain.prompts()[-1].structured_outputs is None


async def test_the_responses_api_takes_the_constraint_in_structured_outputs(
    vllm_plain: VllmServer,
) -> None:
    """vLLM's ``ResponsesRequest`` has ``structured_outputs`` too (``text.format`` has no regex
    type), so the Responses client writes it there and the engine gets it."""
    vllm_plain.script("123")
    options = ChatOptions(response_format=ChatResponseFormat.regex("[0-9]+"))
    async with OpenAiCompatibleResponsesClient(
        vllm_plain.base_url, vllm_plain.model_id, backend="vllm"
    ) as client:
        response = await client.get_response("Answer.", options)
    assert response.text == "123"
    constraint = vllm_plain.prompts()[-1].structured_outputs
    assert constraint is not None and constraint["regex"] == "[0-9]+"
