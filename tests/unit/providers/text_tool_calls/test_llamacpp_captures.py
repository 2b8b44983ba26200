"""Real llama.cpp streams whose tool calls were left in ``delta.content`` (grammar-forced text).

The deltas are fed exactly as the server cut them (``<t``, ``oo``, ``l``, ``_cal``, ``l``, ``>``,
…), then at every single cut and one character at a time.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from providers.text_tool_calls import TextToolCallParser
from tests.unit.providers.text_tool_calls.helpers import (
    assert_split_invariant,
    calls,
    comparable,
    errors,
    stream,
    tool,
)

CAPTURES = Path(__file__).resolve().parents[4] / "transcripts" / "llamacpp"
WEATHER = tool(
    "get_weather",
    {
        "city": {"type": "string"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        "days": {"type": "integer"},
    },
)
TIME = tool("get_time", {"tz": {"type": "string"}})


def content_deltas(scenario: str) -> list[str]:
    """``delta.content`` of every chunk of a captured stream, in order."""
    path = CAPTURES / f"captured--qwen25-plain--{scenario}.sse"
    deltas = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        for choice in json.loads(line[len("data: ") :]).get("choices", []):
            text = (choice.get("delta") or {}).get("content")
            if text:
                deltas.append(text)
    return deltas


CASES: list[tuple[str, list[tuple[str, dict[str, Any]]]]] = [
    ("stream-text-tool-call-in-content", [("get_weather", {"city": "Paris", "unit": "celsius"})]),
    (
        "stream-text-parallel-tool-calls-in-content",
        [
            ("get_weather", {"city": "Paris", "unit": "celsius"}),
            ("get_time", {"tz": "Europe/Paris"}),
        ],
    ),
    ("stream-qwen3-coder-xml-in-content", [("get_weather", {"city": "Paris", "days": 3})]),
]


@pytest.mark.parametrize(("scenario", "expected"), CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("fmt", ["auto", "hermes", "qwen3_coder"])
def test_captured_token_by_token_stream(
    scenario: str, expected: list[tuple[str, dict[str, Any]]], fmt: str
) -> None:
    deltas = content_deltas(scenario)
    assert len(deltas) > 40 and deltas[0] in ("<", "<t")  # the tag is split across tokens
    is_xml = "qwen3-coder" in scenario
    if fmt != "auto" and (fmt == "qwen3_coder") != is_xml:
        out = stream(TextToolCallParser(fmt, [WEATHER, TIME]), deltas)
        assert not calls(out) and errors(out)  # the other <tool_call> format: kept as error text
        return
    out = stream(TextToolCallParser(fmt, [WEATHER, TIME]), deltas)
    assert calls(out) == expected
    assert all(call.error is None for call in TextToolCallParser(fmt, [WEATHER, TIME]).parse(
        "".join(deltas)).tool_calls)  # fmt: skip
    assert "".join(c[1] for c in comparable(out) if c[0] == "text").strip() == ""
    assert not errors(out)


@pytest.mark.parametrize(("scenario", "expected"), CASES, ids=[c[0] for c in CASES])
def test_captured_text_at_every_cut(
    scenario: str, expected: list[tuple[str, dict[str, Any]]]
) -> None:
    assert_split_invariant("".join(content_deltas(scenario)), "auto", [WEATHER, TIME])


def test_without_tools_the_xml_values_stay_strings() -> None:
    out = stream(TextToolCallParser(), content_deltas("stream-qwen3-coder-xml-in-content"))
    assert calls(out) == [("get_weather", {"city": "Paris", "days": "3"})]
