"""Issue 32 items 6 and 15 over generated input.

Item 6: a structured answer is read in pydantic's strict mode: for any JSON value, ``celsius``
is read only when it is a JSON integer (never a boolean, a string of digits or a float), and
then as that integer; ``list[int]`` likewise for every item.

Item 15: whatever characters a configuration file's backend name holds (YAML's double quotes
spell any), the ``ConfigurationError`` that names it holds no raw control character: one line
per problem, each starting with the file's name.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from providers import ChatMessage, ChatResponse, ConfigurationError, StructuredOutputError
from providers.abstractions.structured_output import read_structured
from providers.config import load_config

SETTINGS = settings(max_examples=300, deadline=None)

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=6,
)


class Weather(BaseModel):
    celsius: int


def _response(text: str) -> ChatResponse:
    return ChatResponse([ChatMessage.assistant(text)])


def _is_json_int(value: Any) -> bool:
    return type(value) is int


@SETTINGS
@given(JSON_VALUES)
def test_an_int_field_reads_a_json_integer_and_nothing_else(value: Any) -> None:
    text = json.dumps({"celsius": value})
    if _is_json_int(value):
        assert read_structured(Weather, _response(text)) == Weather(celsius=value)
    else:
        with pytest.raises(StructuredOutputError) as info:
            read_structured(Weather, _response(text))
        assert info.value.reason == "schema_mismatch"


@SETTINGS
@given(st.lists(JSON_VALUES, max_size=5))
def test_a_list_of_int_reads_only_json_integers(items: list[Any]) -> None:
    text = json.dumps({"data": items})
    if all(_is_json_int(item) for item in items):
        assert read_structured(list[int], _response(text)) == items
    else:
        with pytest.raises(StructuredOutputError):
            read_structured(list[int], _response(text))


_CONTROLS = {chr(code) for code in (*range(0x20), 0x7F, *range(0x80, 0xA0))}
NAMES = st.text(
    st.characters(exclude_categories=["Cs"]),  # a lone surrogate is not UTF-8: no file holds it
    min_size=1,
    max_size=12,
).filter(lambda name: any(char in _CONTROLS for char in name))


@settings(max_examples=150, deadline=None)
@given(NAMES)
def test_a_backend_name_with_control_characters_reaches_the_error_escaped(
    tmp_path_factory: pytest.TempPathFactory, name: str
) -> None:
    path: Path = tmp_path_factory.mktemp("config") / "oaicompat.yaml"
    quoted = json.dumps(name)  # JSON's escapes are YAML double-quoted escapes too
    path.write_text(
        f"backends:\n  {quoted}:\n    base_url: http://h\n    model_id: m\n    bogus: 1\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigurationError) as info:
        load_config(path, env={})
    message = str(info.value)
    lines = message.split("\n")
    assert all(line.startswith(str(path)) for line in lines), message
    assert not any(char in _CONTROLS for line in lines for char in line), message
