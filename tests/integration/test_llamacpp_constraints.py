"""Constraints against a real llama-server (issue 33 item 2).

The tiny model has random weights, so whatever it writes is noise unless the server constrains
sampling: a text that fits the grammar, is one of the choices or obeys the schema proves the
constraint reached llama.cpp's sampler in the form this library wrote (a choice as a GBNF
alternation, a ``guided_choice`` extra translated, a schema in ``response_format``). The
client's own check after the answer must pass on those. The control without a constraint shows
the noise fits none of them, so the tests can fail.

A regex, which llama.cpp has no key for (an unknown key is ignored: the answer would come back
unconstrained), is refused before anything is sent: the request goes through a counting proxy
that sees nothing. And the pair the server refuses with a 500 (a JSON Schema and a grammar) is
shown failing on the raw server, then refused by the client before sending.
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest

from providers import (
    ChatOptions,
    ChatResponse,
    ChatResponseFormat,
    OpenAiCompatibleChatClient,
)
from providers.abstractions.errors import UnsupportedOptionError
from providers.chat_completions.constraint_check import violation
from providers.chat_completions.schema_check import schema_problems
from tests.faults.proxy_server import LoopbackProxy

PROMPT = "Answer the question."
CHOICES = ['say "yes"', "back\\slash", "two\nlines", "naïve ☃"]
SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 8},
        "n": {"type": "integer", "minimum": 0, "maximum": 99},
        "ok": {"type": "boolean"},
    },
    "required": ["name", "n", "ok"],
    "additionalProperties": False,
}
GRAMMAR = ChatResponseFormat.grammar('root ::= "id-" [0-9] [0-9] [0-9] ("!" | "?")', "gbnf")
GRAMMAR_LANGUAGE = re.compile(r"id-[0-9]{3}[!?]")


def options(
    fmt: ChatResponseFormat | None = None, seed: int = 5, tokens: int = 120, **extra: Any
) -> ChatOptions:
    return ChatOptions(
        max_output_tokens=tokens, seed=seed, response_format=fmt, additional_properties=extra
    )


async def answer(base_url: str, opts: ChatOptions, *, stream: bool) -> ChatResponse:
    async with OpenAiCompatibleChatClient(base_url, backend="llamacpp") as client:
        if not stream:
            return await client.get_response(PROMPT, opts)
        updates = [u async for u in client.get_streaming_response(PROMPT, opts)]
    return ChatResponse.from_updates(updates)


@pytest.mark.parametrize("stream", [False, True])
async def test_a_gbnf_grammar_is_obeyed(plain_server: Any, stream: bool) -> None:
    response = await answer(plain_server.base_url, options(GRAMMAR), stream=stream)
    assert GRAMMAR_LANGUAGE.fullmatch(response.text), response.text
    assert response.finish_reason == "stop"


@pytest.mark.parametrize("stream", [False, True])
async def test_a_choice_becomes_a_gbnf_alternation_and_is_obeyed(
    plain_server: Any, stream: bool
) -> None:
    fmt = ChatResponseFormat.choice(CHOICES)
    seen = set()
    for seed in (1, 2, 3):
        response = await answer(plain_server.base_url, options(fmt, seed), stream=stream)
        assert response.text in CHOICES, response.text  # exactly, escapes and all
        assert violation(response, fmt, "llamacpp") is None  # the client's check agreed
        seen.add(response.text)
    assert seen  # (which options a random model picks is its business)


async def test_a_guided_choice_extra_is_translated_and_obeyed(plain_server: Any) -> None:
    response = await answer(
        plain_server.base_url, options(guided_choice=["left", "right"]), stream=False
    )
    assert response.text in ("left", "right")


@pytest.mark.parametrize("stream", [False, True])
async def test_a_json_schema_is_obeyed_and_the_check_passes(
    plain_server: Any, stream: bool
) -> None:
    fmt = ChatResponseFormat.json_schema(SCHEMA, "thing")
    response = await answer(plain_server.base_url, options(fmt, tokens=200), stream=stream)
    assert response.finish_reason == "stop"
    assert schema_problems(json.loads(response.text), SCHEMA) == []
    assert violation(response, fmt, "llamacpp") is None


async def test_the_control_without_a_constraint_fits_none_of_them(plain_server: Any) -> None:
    response = await answer(plain_server.base_url, options(), stream=False)
    text = response.text
    assert not GRAMMAR_LANGUAGE.fullmatch(text) and text not in CHOICES
    assert violation(response, ChatResponseFormat.choice(CHOICES), "llamacpp") is not None


@pytest.mark.parametrize("stream", [False, True])
async def test_a_regex_is_refused_before_anything_is_sent(plain_server: Any, stream: bool) -> None:
    regex = options(ChatResponseFormat.regex("[0-9]+"))
    async with (
        LoopbackProxy() as proxy,
        OpenAiCompatibleChatClient(
            plain_server.base_url, backend="llamacpp", proxy=proxy.url, trust_env=False
        ) as client,
    ):
        with pytest.raises(UnsupportedOptionError) as info:
            if stream:
                async for _ in client.get_streaming_response(PROMPT, regex):
                    pass
            else:
                await client.get_response(PROMPT, regex)
        assert proxy.requests == []  # the server saw nothing
        await client.get_response(PROMPT, options(GRAMMAR))  # the same path does carry requests
        assert len(proxy.requests) == 1
    assert (info.value.option, info.value.backend) == ("response_format.regex", "llamacpp")


async def test_a_schema_and_a_grammar_fail_on_the_server_and_are_refused_here(
    plain_server: Any,
) -> None:
    """What the refusal spares the caller: beside ``response_format`` the server drops the
    grammar without a word (the answer is JSON, not the grammar's ``x``), and beside its own
    ``json_schema`` key it answers 500."""
    url = f"{plain_server.base_url}/v1/chat/completions"
    base = {"messages": [{"role": "user", "content": PROMPT}], "max_tokens": 8, "seed": 1}
    fmt = ChatResponseFormat.json_schema(SCHEMA)
    async with httpx.AsyncClient(timeout=120) as http:
        dropped = await http.post(
            url, json={**base, "response_format": fmt.to_openai(), "grammar": 'root ::= "x"'}
        )
        both = await http.post(url, json={**base, "json_schema": SCHEMA, "grammar": 'root ::= "x"'})
    assert dropped.status_code == 200
    content = dropped.json()["choices"][0]["message"]["content"]
    assert content != "x" and content.lstrip()[:1] in ("", "{")  # the schema's grammar won
    assert both.status_code == 500 and "Cannot use both json_schema and grammar" in both.text
    for extra in ({"grammar": 'root ::= "x"'}, {"json_schema": SCHEMA}):
        async with (
            LoopbackProxy() as proxy,
            OpenAiCompatibleChatClient(
                plain_server.base_url, backend="llamacpp", proxy=proxy.url, trust_env=False
            ) as client,
        ):
            with pytest.raises(UnsupportedOptionError) as info:
                await client.get_response(PROMPT, options(fmt, tokens=8, **extra))
            assert proxy.requests == []
        assert info.value.option == f"additional_properties.{next(iter(extra))}"
