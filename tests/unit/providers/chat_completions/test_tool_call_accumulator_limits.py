"""What a server can make the accumulator hold (``Limits``, issue #20), the normaliser's fast path
into it (``append_arguments``) and the flag on a call cut short (``mark_cut_call``)."""

from __future__ import annotations

from typing import Any

import pytest

from providers.abstractions.contents import FunctionCallContent
from providers.abstractions.errors import ResponseTooLargeError
from providers.abstractions.limits import Limits
from providers.chat_completions.tool_call_accumulator import (
    CUT_BY_LENGTH,
    CUT_BY_STREAM_END,
    ToolCallAccumulator,
    mark_cut_call,
    text_bytes,
)

TOO_LONG_9 = "the argument text passed 9 bytes (limits.max_tool_argument_bytes)"


def begun(index: int, arguments: Any = "", name: str = "f") -> dict[str, Any]:
    """An entry that begins call ``index`` (its id, name and first argument text)."""
    return {"index": index, "id": f"id{index}", "function": {"name": name, "arguments": arguments}}


def more(index: int, arguments: Any) -> dict[str, Any]:
    return {"index": index, "function": {"arguments": arguments}}


def bounded(**limits: int) -> ToolCallAccumulator:
    return ToolCallAccumulator(limits=Limits(**limits))


# --- max_tool_calls ------------------------------------------------------------------------------


@pytest.mark.parametrize("limit", [1, 3, 300])  # (300: past CPython's cache of small ints)
def test_exactly_max_tool_calls_are_accepted_and_one_more_raises(limit: int) -> None:
    accumulator = bounded(max_tool_calls=limit)
    accumulator.add([begun(i, "{}") for i in range(limit)])
    with pytest.raises(ResponseTooLargeError) as caught:
        accumulator.add([begun(limit, "{}")])
    assert caught.value.limit == "max_tool_calls"
    assert str(caught.value).startswith(f"the server sent more than {limit} tool calls")
    assert [c.call_id for c in accumulator.flush()] == [f"id{i}" for i in range(limit)]


def test_calls_already_flushed_count_towards_max_tool_calls() -> None:
    accumulator = bounded(max_tool_calls=2)
    accumulator.add([begun(0, "{}")])
    accumulator.flush()
    accumulator.add([begun(0, "{}")])
    accumulator.flush()
    with pytest.raises(ResponseTooLargeError):
        accumulator.add([begun(0, "{}")])


# --- max_tool_argument_bytes ---------------------------------------------------------------------


def test_argument_text_of_exactly_the_limit_is_accepted_and_one_byte_more_raises() -> None:
    accumulator = bounded(max_tool_argument_bytes=9)
    accumulator.add([begun(0, '{"a": ')])  # 6 bytes
    accumulator.add([more(0, "12}")])  # 9: the limit
    assert accumulator.pending_bytes() == 9
    with pytest.raises(ResponseTooLargeError) as caught:
        accumulator.add([more(0, " ")])
    assert caught.value.limit == "max_tool_argument_bytes"
    assert str(caught.value) == (
        "a tool call's argument text passed 9 bytes (limits.max_tool_argument_bytes)"
    )
    (call,) = accumulator.flush()
    assert call.raw_arguments == '{"a": 12}'  # the fragment past the limit is not kept
    assert call.arguments == {"a": 12}
    assert call.error == TOO_LONG_9  # cut short: never to be run


def test_a_call_cut_by_the_limit_keeps_both_reasons_when_its_text_does_not_parse() -> None:
    accumulator = bounded(max_tool_argument_bytes=9)
    accumulator.add([begun(0, '{"a": ')])
    with pytest.raises(ResponseTooLargeError):
        accumulator.add([more(0, "1234}")])
    (call,) = accumulator.flush()
    assert call.raw_arguments == '{"a": '
    assert call.error is not None
    assert call.error.startswith(TOO_LONG_9 + "; arguments are not valid JSON (")


def test_the_argument_limit_counts_utf8_bytes_not_characters() -> None:
    accumulator = bounded(max_tool_argument_bytes=10)
    accumulator.add([begun(0, '{"é": ')])  # 6 characters, 7 bytes
    assert accumulator.pending_bytes() == 7
    with pytest.raises(ResponseTooLargeError):
        accumulator.add([more(0, '"é"}')])  # 10 characters in all, but 12 bytes


def test_text_bytes_is_the_utf8_length() -> None:
    assert text_bytes("") == 0
    assert text_bytes('{"a": 1}') == 8
    assert text_bytes("aé€😀") == 1 + 2 + 3 + 4
    assert text_bytes("\ud800") == 3  # a lone surrogate, as a server's JSON escape can make


def test_arguments_sent_as_an_object_replace_the_text_before_them() -> None:
    accumulator = bounded(max_tool_argument_bytes=20)
    accumulator.add([begun(0, '{"partial": ')])  # 12 bytes: with what follows, past 20
    accumulator.add([more(0, {"city": "Zürich"})])
    assert accumulator.pending_bytes() == 19
    (call,) = accumulator.flush()
    assert call.raw_arguments == '{"city": "Zürich"}'  # as sent: not escaped to ASCII
    assert call.arguments == {"city": "Zürich"}
    assert call.error is None


def test_arguments_sent_as_an_object_are_held_to_the_limit() -> None:
    accumulator = bounded(max_tool_argument_bytes=9)
    with pytest.raises(ResponseTooLargeError):
        accumulator.add([begun(0, {"city": "Oslo"})])
    (call,) = accumulator.flush()
    assert (call.raw_arguments, call.error) == ("", TOO_LONG_9)


# --- append_arguments (the normaliser's fast path) -----------------------------------------------


def test_append_arguments_extends_a_begun_call() -> None:
    accumulator = ToolCallAccumulator()
    accumulator.add([begun(0, '{"a": ')])  # 6 bytes
    assert accumulator.append_arguments(0, "12}") is True
    assert accumulator.pending_bytes() == 9
    accumulator.add([{"function": {"arguments": ""}}])  # no index: continues call 0
    (call,) = accumulator.flush()
    assert (call.raw_arguments, call.arguments, call.error) == ('{"a": 12}', {"a": 12}, None)


def test_append_arguments_counts_utf8_bytes() -> None:
    accumulator = ToolCallAccumulator()
    accumulator.add([begun(0, '{"a": "')])  # 7 bytes
    assert accumulator.append_arguments(0, 'é"}')  # 3 characters, 4 bytes
    assert accumulator.pending_bytes() == 11
    assert accumulator.flush()[0].arguments == {"a": "é"}


def test_append_arguments_to_a_call_not_begun_does_nothing_and_says_so() -> None:
    accumulator = ToolCallAccumulator()
    assert accumulator.append_arguments(0, "{}") is False
    assert not accumulator
    accumulator.add([begun(0, "{}")])
    assert accumulator.append_arguments(1, '{"x": 1}') is False
    assert accumulator.pending_bytes() == 2
    assert [c.raw_arguments for c in accumulator.flush()] == ["{}"]


def test_append_arguments_holds_to_the_argument_byte_limit() -> None:
    accumulator = bounded(max_tool_argument_bytes=9)
    accumulator.add([begun(0, '{"a": ')])
    assert accumulator.append_arguments(0, "12}")  # exactly the limit
    with pytest.raises(ResponseTooLargeError) as caught:
        accumulator.append_arguments(0, " ")
    assert caught.value.limit == "max_tool_argument_bytes"
    (call,) = accumulator.flush()
    assert (call.raw_arguments, call.error) == ('{"a": 12}', TOO_LONG_9)


# --- mark_cut_call -------------------------------------------------------------------------------


def _calls(*errors: str | None) -> list[FunctionCallContent]:
    return [FunctionCallContent(f"c{i}", "f", {}, "{}", e) for i, e in enumerate(errors)]


def test_mark_cut_call_flags_only_the_last_call() -> None:
    calls = _calls(None, None, None)
    mark_cut_call(calls)
    assert [c.error for c in calls] == [None, None, CUT_BY_LENGTH]
    calls = _calls(None, None, None)
    mark_cut_call(calls, CUT_BY_STREAM_END)
    assert [c.error for c in calls] == [None, None, CUT_BY_STREAM_END]


def test_mark_cut_call_keeps_the_error_the_last_call_already_has() -> None:
    calls = _calls(None, None, "arguments are not valid JSON")
    mark_cut_call(calls)
    assert [c.error for c in calls] == [None, None, "arguments are not valid JSON"]


def test_mark_cut_call_without_calls_does_nothing() -> None:
    calls: list[FunctionCallContent] = []
    mark_cut_call(calls)
    assert calls == []
