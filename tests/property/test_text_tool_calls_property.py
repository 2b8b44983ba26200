"""Properties of ``TextToolCallParser`` (issue 3 items 1 and 4).

* Any cutting of any text into deltas gives the contents ``parse`` gives (call ids aside).
* Text without a marker passes through byte-identical, and while streaming only a suffix that
  could still become a marker is ever held back.
* Nothing is dropped or duplicated: ordinary text, error text and the markup of recognised calls
  add up to the input, in order.
"""

from __future__ import annotations

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from providers.abstractions.contents import AIContent, FunctionCallContent, TextContent
from providers.text_tool_calls import FORMAT_NAMES, TextToolCallParser
from providers.text_tool_calls.registry import table_for
from tests.unit.providers.text_tool_calls.helpers import comparable, cut, stream, tool

SETTINGS = settings(max_examples=150, deadline=None)

DS = {
    "calls": "<\uff5ctool\u2581calls\u2581begin\uff5c>",
    "end": "<\uff5ctool\u2581calls\u2581end\uff5c>",
    "call": "<\uff5ctool\u2581call\u2581begin\uff5c>",
    "call_end": "<\uff5ctool\u2581call\u2581end\uff5c>",
    "sep": "<\uff5ctool\u2581sep\uff5c>",
}

TEXT = ("Sure. ", "ok", " ", "\n", "é ", "a < b ", "[x] ", "{y} ", "|", "\u2028", "\uff5c")
FRAGMENTS: dict[str, tuple[str, ...]] = {
    "hermes": (
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>',
        '<tool_call>\n{"name": "f", "parameters": {"q": "</tool_call"}}\n</tool_call>',
        '<tool_call>{"name": "f", "arguments": {bad}}</tool_call>',
        '<tool_call>{"name": "f"',
        "<tool_call>",
        "</tool_call>",
        "<tool_",
        "<tool_call> is a tag",
        '{"name": "x"}',
        "\\",
        '"',
    ),
    "qwen3_coder": (
        "<tool_call>\n<function=get_weather>\n<parameter=days>\n3\n</parameter>\n</function>\n"
        "</tool_call>",
        "<function=f><parameter=a>x</parameter></function>",
        "<tool_call><function=broken\n</tool_call>",
        "<tool_call>",
        "<function=",
        "</function>",
        "<parameter=a>",
        "</parameter>",
    ),
    "mistral": (
        '[TOOL_CALLS][{"name": "a", "arguments": {"x": [1, "]"]}}]',
        '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}',
        '[TOOL_CALLS]f{"a": "\\"}"}',
        "[TOOL_CALLS]",
        "[TOOL_CALLS] x",
        "[ARGS]",
        "{",
        "}",
        "[",
        "]",
    ),
    "llama3_json": (
        '<|python_tag|>{"name": "a", "parameters": {"x": 1}}',
        '; {"name": "b", "arguments": {}}',
        '{"name": "c", "parameters": {}}',
        "<|python_tag|>",
        "{",
        "}",
        ";",
        '{ "name"',
    ),
    "pythonic": (
        "[f(a=1, b='x]')]",
        "<|python_start|>[g(c=None)]<|python_end|>",
        "[f(1)]",
        "[a](b) ",
        "[",
        "]",
        "(",
        "'",
        "<|python_start|>",
    ),
    "kimi_k2": (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.a:0<|tool_call_argument_begin|>"
        '{"x": 1}<|tool_call_end|><|tool_calls_section_end|>',
        "<|tool_call_begin|>functions.b.c:1<|tool_call_argument_begin|>{}<|tool_call_end|>",
        "<|tool_call_begin|>bad<|tool_call_argument_begin|>{}<|tool_call_end|>",
        "<|tool_calls_section_begin|>",
        "<|tool_calls_section_end|>",
        "<|tool_call_end|>",
        "<|",
    ),
    "deepseek_v3": (
        f"{DS['calls']}{DS['call']}function{DS['sep']}a\n```json\n{{}}\n```{DS['call_end']}"
        f"{DS['end']}",
        DS["calls"],
        DS["end"],
        DS["call"],
        "<\uff5c",
    ),
    "deepseek_v31": (
        f'{DS["calls"]}{DS["call"]}a{DS["sep"]}{{"x": 1}}{DS["call_end"]}{DS["end"]}',
        f"{DS['call']}b{DS['sep']}{{}}{DS['call_end']}",
        f"{DS['call']}b{DS['sep']}{{oops{DS['call_end']}",
        DS["calls"],
        DS["end"],
    ),
    "gpt_oss": (
        "<|channel|>analysis<|message|>think<|end|>",
        "<|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json"
        '<|message|>{"a": 1}<|call|>',
        "<|start|>assistant to=functions.g<|channel|>commentary<|message|>{}",
        "<|channel|>commentary<|message|>Preamble.<|end|>",
        "<|channel|>final<|message|>Answer",
        "<|channel|>commentary to=functions.h<|message|>not json<|call|>",
        "<|start|>",
        "<|message|>",
        "<|end|>",
        "<|start|>user<|message|>Hi<|end|>",
        '<|start|>functions.f to=assistant<|channel|>commentary<|message|>{"ok": 1}<|end|>',
        '<|channel|>final {"answer": "hi"}<|return|>',
        "<|start|>assistant",
        '<|channel|>analysis to=functions.f<|message|>{"a": ',
    ),
    "nemotron": (
        '<TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Paris"}}]</TOOLCALL>',
        '<TOOLCALL>{"name": "f", "arguments": "{\\"a\\": 1}"}</TOOLCALL>',
        '<TOOLCALL>[{"name": "f", "arguments": {}</TOOLCALL>',
        '<TOOLCALL>[{"name": "f", "arguments": {"a": "</TOOLCALL>',
        "<TOOLCALL>",
        "</TOOLCALL>",
        "<TOOL",
        "<TOOLCALL> in prose",
    ),
}
FORMATS = tuple(name for name in FORMAT_NAMES if name != "auto")
TOOLS = [tool("get_weather", {"days": {"type": "integer"}, "city": {"type": "string"}})]


@st.composite
def mixed_text(draw: st.DrawFn) -> tuple[str, str]:
    fmt = draw(st.sampled_from((*FORMATS, "auto")))
    pool = FRAGMENTS[fmt] if fmt != "auto" else tuple(f for v in FRAGMENTS.values() for f in v)
    pieces = draw(st.lists(st.sampled_from(pool + TEXT), max_size=10))
    return fmt, "".join(pieces)


def cuttings(text: str) -> st.SearchStrategy[list[int]]:
    return st.lists(st.integers(0, len(text)), max_size=25)


@SETTINGS
@given(data=st.data(), case=mixed_text())
def test_streaming_equals_parse_for_any_cutting(data: st.DataObject, case: tuple[str, str]) -> None:
    fmt, text = case
    positions = data.draw(cuttings(text))
    tools = data.draw(st.sampled_from([None, TOOLS]))
    expected = comparable(TextToolCallParser(fmt, tools).parse(text).contents)
    assert comparable(stream(TextToolCallParser(fmt, tools), cut(text, positions))) == expected


def _markup_and_text(contents: list[AIContent]) -> str:
    out = []
    for content in contents:
        if isinstance(content, TextContent):
            out.append(content.text)
        elif isinstance(content, FunctionCallContent):
            assert isinstance(content.raw, str)
            out.append(content.raw)
    return "".join(out)


@SETTINGS
@given(data=st.data(), pieces=st.lists(st.sampled_from(FRAGMENTS["hermes"] + TEXT), max_size=10))
def test_nothing_is_dropped_or_duplicated(data: st.DataObject, pieces: list[str]) -> None:
    # hermes keeps each block's full text as the call's ``raw``, so the input is reconstructible.
    text = "".join(pieces)
    out = stream(TextToolCallParser("hermes"), cut(text, data.draw(cuttings(text))))
    assert _markup_and_text(out) == text


MARKERLESS_ALPHABET = st.sampled_from(
    [*"<|>[]{}_/=\\\"' \n\tatoolcsTOLCASpyhn", "\uff5c", "\u2581", "é", "\u2028", "\r"]
)


@SETTINGS
@given(
    data=st.data(),
    fmt=st.sampled_from(("auto", "hermes", "qwen3_coder", "mistral", "kimi_k2", "gpt_oss")),
    text=st.text(MARKERLESS_ALPHABET, max_size=60) | st.text(max_size=60),
)
def test_text_without_markers_passes_through(data: st.DataObject, fmt: str, text: str) -> None:
    markers = table_for(fmt).candidates
    assume(not any(marker in text for marker in markers))
    assert TextToolCallParser(fmt).parse(text).contents == ([TextContent(text)] if text else [])
    parser = TextToolCallParser(fmt)
    released, fed = "", 0
    for piece in cut(text, data.draw(cuttings(text))):
        out = parser.feed(piece)
        fed += len(piece)
        assert all(type(c) is TextContent and c.additional_properties is None for c in out)
        released += "".join(c.text for c in out if isinstance(c, TextContent))
        held = text[len(released) : fed]
        assert text.startswith(released)
        assert len(held) < max(map(len, markers))  # only a possible marker prefix is held back
        assert not held or any(m.startswith(held) for m in markers)
    released += "".join(c.text for c in parser.finish() if isinstance(c, TextContent))
    assert released == text
