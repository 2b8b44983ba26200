"""The constrained answers a real llama-server gave (issue 33), replayed through the client with
the constraint they were asked under: the client's check passes them. Asked under a constraint
they do not obey (as if the server had ignored it), the same bytes end in
``ConstraintViolationError``, the whole answer kept."""

from __future__ import annotations

import pytest

from providers import ChatOptions, ChatResponseFormat
from providers.replay.transcripts import Transcript, default_root
from tests.transcripts.replaying import PieceServer, outcome

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 8},
        "n": {"type": "integer", "minimum": 0, "maximum": 99},
    },
    "required": ["name", "n"],
    "additionalProperties": False,
}
ASKED = {
    "choice-gbnf": ChatResponseFormat.choice(["yes", "no", 'say "maybe"']),
    # a grammar is not checked here (nothing parses GBNF), so this one only has to go through
    "grammar-gbnf": ChatResponseFormat.grammar('root ::= "id-" [0-9] [0-9] [0-9]', "gbnf"),
    "json-schema": ChatResponseFormat.json_schema(SCHEMA, "thing"),
}
BROKEN = {
    "choice-gbnf": ChatResponseFormat.choice(["yes", "no"]),
    "json-schema": ChatResponseFormat.json_schema({**SCHEMA, "required": ["name", "n", "x"]}),
}
NAMES = [
    "stream-choice-gbnf",
    "nonstream-choice-gbnf",
    "stream-grammar-gbnf",
    "stream-json-schema",
    "nonstream-json-schema",
]


def transcript(name: str) -> Transcript:
    return Transcript.load(default_root() / "llamacpp" / f"captured--qwen25-plain--{name}.json")


@pytest.mark.parametrize("name", NAMES)
async def test_the_recorded_answer_passes_the_check(name: str) -> None:
    server = PieceServer(transcript(name))
    fmt = ASKED[name.split("-", 1)[1]]
    result = await outcome(server.client, server.transcript, ChatOptions(response_format=fmt))
    assert result["error"] is None
    assert result["text"] == server.transcript.expected["text"]


@pytest.mark.parametrize("name", [name for name in NAMES if "grammar" not in name])
async def test_under_a_constraint_it_does_not_obey_it_is_the_typed_error(name: str) -> None:
    server = PieceServer(transcript(name))
    fmt = BROKEN[name.split("-", 1)[1]]
    result = await outcome(server.client, server.transcript, ChatOptions(response_format=fmt))
    assert result["error"] is not None and result["error"]["class"] == "ConstraintViolationError"
    assert result["text"] == server.transcript.expected["text"]  # the whole answer kept
    assert result["usage"] == server.transcript.expected["usage"]
