"""Every text-parser fixture of netclaw's test suite (research/netclaw.md §3), verbatim inputs.

netclaw's ``ToolCallTextFilter`` answered "suppressed or not" per delta; the equivalent here is
whether ``feed`` released the delta as text. Its bugs (research/netclaw.md §4, items 2 and 3) are
asserted fixed: suppressed text never vanishes, and the preamble is not emitted twice.
"""

from __future__ import annotations

from providers.abstractions.contents import FunctionCallContent
from providers.text_tool_calls import TextToolCallParser
from tests.unit.providers.text_tool_calls.helpers import calls, comparable, stream, visible

STORE_MEMORY = (
    "<tool_call>\n<function=store_memory>\n<parameter=Content>Important note</parameter>\n"
    "<parameter=Domain>project:test</parameter>\n</function>\n</tool_call>"
)
WEB_SEARCH = (
    "<tool_call>\n<function=web_search>\n<parameter=Query>test</parameter>\n</function>\n"
    "</tool_call>"
)


def test_non_stream_content_with_a_store_memory_block() -> None:
    result = TextToolCallParser().parse("Let me save that for you.\n" + STORE_MEMORY)
    assert calls(result.contents) == [
        ("store_memory", {"Content": "Important note", "Domain": "project:test"})
    ]
    assert "Let me save that" in result.content
    assert "<tool_call>" not in result.content


def test_filter_does_not_suppress_ordinary_text() -> None:
    assert visible(TextToolCallParser().feed("Hello ")) == "Hello "


def test_filter_suppresses_from_the_marker_on() -> None:
    parser = TextToolCallParser()
    assert parser.feed("<tool_call><function=test>") == []
    assert parser.feed("<parameter=x>1</parameter>") == []
    assert parser.feed("</function>") == []
    assert calls(parser.feed("</tool_call>")) == [("test", {"x": "1"})]


def test_filter_cleaned_text() -> None:
    result = TextToolCallParser().parse("Preamble text " + WEB_SEARCH + " Done")
    assert "Preamble text" in result.content
    assert "<tool_call" not in result.content and "<function" not in result.content


def test_filter_split_marker() -> None:
    parser = TextToolCallParser()
    assert visible(parser.feed("some text <tool_")) == "some text "
    assert parser.feed("call><function=test>") == []


def test_filter_one_character_at_a_time() -> None:
    parser = TextToolCallParser()
    for char in "<tool_call":
        assert parser.feed(char) == []
    assert parser.feed(">") == []
    assert parser.feed("<function=test>") == []


def test_filter_empty_deltas_never_trigger() -> None:
    parser = TextToolCallParser()
    assert parser.feed("") == []
    assert parser.feed("") == []
    assert visible(parser.feed("text")) == "text"
    assert parser.feed("<tool_call>") == []


def test_filter_marker_at_the_very_start() -> None:
    parser = TextToolCallParser()
    assert parser.feed("<tool_call>") == []
    assert parser.feed("<function=test>") == []


def test_suppressed_block_that_never_parses_is_not_lost() -> None:
    # netclaw bug: text after the marker vanished when nothing parsed.
    parser = TextToolCallParser()
    assert parser.feed("<tool_call><function=test>") == []
    (call,) = parser.finish()
    # Surfaced as a call that must not run, its text kept on it.
    assert isinstance(call, FunctionCallContent)
    assert (call.name, call.raw) == ("test", "<function=test>")
    assert call.error is not None


def test_sse_single_chunk_with_the_whole_block() -> None:
    out = stream(TextToolCallParser(), [WEB_SEARCH])
    assert not any("<tool_call>" in text for kind, text, *_ in comparable(out) if kind == "text")
    assert calls(out) == [("web_search", {"Query": "test"})]


def test_sse_text_then_xml_in_three_deltas() -> None:
    deltas = [
        "Let me ",
        "help. ",
        "<tool_call>\n<function=search>\n",
        "<parameter=Query>what is TextForge</parameter>\n",
        "</function>\n</tool_call>",
    ]
    parser = TextToolCallParser()
    released = [parser.feed(delta) for delta in deltas]
    assert [visible(r) for r in released] == ["Let me ", "help. ", "", "", ""]
    assert calls(released[-1]) == [("search", {"Query": "what is TextForge"})]
    tail = parser.finish()
    assert tail == []  # netclaw re-emitted the cleaned preamble here: it appeared twice
    assert visible(c for r in released for c in r) == "Let me help. "


def test_sse_store_memory_block_in_one_delta() -> None:
    out = stream(TextToolCallParser(), [STORE_MEMORY])
    assert calls(out) == [("store_memory", {"Content": "Important note", "Domain": "project:test"})]
    assert visible(out) == ""
