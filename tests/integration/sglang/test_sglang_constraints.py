"""Constraints against the real SGLang server (issue 33 item 2).

Each form reaches the sampling parameters SGLang builds from the chat request (the scripted
scheduler records ``regex`` and ``ebnf``): a regex as ``regex``, a choice, which SGLang has no
key for, as a regex alternation, an EBNF grammar as ``ebnf``, and a caller's ``guided_regex``
translated. The scheduler obeys nothing, so an answer that breaks the constraint comes back as
the typed error, streamed and not.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from providers import ChatOptions, ChatResponseFormat, ConstraintViolationError
from tests.integration.rigs.sglang.server import SglangServer
from tests.integration.sglang.helpers import STREAMING, STREAMING_IDS, pipeline

FORMS: list[tuple[ChatResponseFormat | None, dict[str, Any], str, str, str]] = [
    (ChatResponseFormat.regex("[0-9]{3}"), {}, "123", "regex", "[0-9]{3}"),
    (ChatResponseFormat.choice(["yes", "no"]), {}, "no", "regex", "(?:yes|no)"),
    (ChatResponseFormat.grammar('root ::= "a"', "ebnf"), {}, "a", "ebnf", 'root ::= "a"'),
    (None, {"guided_regex": "[a-z]+"}, "abc", "regex", "[a-z]+"),
]


async def ask(server: SglangServer, options: ChatOptions, *, streaming: bool) -> str:
    async with pipeline(server) as client:
        if not streaming:
            return (await client.get_response("Answer.", options)).text
        return "".join([u.text async for u in client.get_streaming_response("Answer.", options)])


@pytest.mark.parametrize("streaming", STREAMING, ids=STREAMING_IDS)
@pytest.mark.parametrize("case", FORMS, ids=["regex", "choice", "ebnf", "guided_regex"])
async def test_each_form_reaches_the_sampling_parameters(
    sglang_plain: SglangServer, streaming: bool, case: tuple[Any, ...]
) -> None:
    fmt, extra, answer, key, arrived = case
    sglang_plain.script(answer)
    options = ChatOptions(response_format=fmt, additional_properties=extra)
    assert await ask(sglang_plain, options, streaming=streaming) == answer
    received = sglang_plain.prompts()[-1]
    assert getattr(received, key) == arrived
    assert received.json_schema is None  # one constraint
    if key == "regex":
        assert re.fullmatch(arrived, answer)


@pytest.mark.parametrize("streaming", STREAMING, ids=STREAMING_IDS)
async def test_an_answer_the_scheduler_did_not_constrain_is_the_typed_error(
    sglang_plain: SglangServer, streaming: bool
) -> None:
    sglang_plain.script("maybe")
    options = ChatOptions(response_format=ChatResponseFormat.choice(["yes", "no"]))
    with pytest.raises(ConstraintViolationError) as caught:
        await ask(sglang_plain, options, streaming=streaming)
    assert caught.value.constraint == "choice" and caught.value.response.text == "maybe"
