"""No lost text and idempotent merging in ``ChatResponse.from_updates`` (STYLE.md 9 and 15)."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from providers import (
    ChatResponse,
    ChatResponseUpdate,
    FunctionCallContent,
    TextContent,
    TextReasoningContent,
)
from providers.abstractions.contents import AIContent

SETTINGS = settings(max_examples=200, deadline=None)

_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=8)


@SETTINGS
@given(deltas=st.lists(_TEXT, max_size=60))
def test_text_equals_the_concatenation(deltas: list[str]) -> None:
    result = ChatResponse.from_updates(ChatResponseUpdate([TextContent(d)]) for d in deltas)
    assert result.text == "".join(deltas)


# Non-empty, as the normaliser makes them: it never emits an empty text or reasoning content.
_NONEMPTY = st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=8)
_PIECE = st.one_of(
    _NONEMPTY.map(TextContent),
    _NONEMPTY.map(TextReasoningContent),
    st.integers(0, 9).map(lambda i: FunctionCallContent(f"c{i}", f"f{i}")),
)


@SETTINGS
@given(pieces=st.lists(_PIECE, max_size=40), per_update=st.integers(1, 4))
def test_text_reasoning_and_calls_all_kept_in_order(
    pieces: list[AIContent], per_update: int
) -> None:
    updates = [
        ChatResponseUpdate(list(pieces[i : i + per_update]))
        for i in range(0, len(pieces), per_update)
    ]
    result = ChatResponse.from_updates(updates)
    texts = "".join(p.text for p in pieces if type(p) is TextContent)
    thoughts = "".join(p.text for p in pieces if type(p) is TextReasoningContent)
    calls = [p for p in pieces if type(p) is FunctionCallContent]
    assert result.text == texts
    assert result.reasoning == thoughts
    assert result.tool_calls == calls
    contents = result.messages[0].contents if result.messages else []
    # merged: never two adjacent contents of the same text kind
    for before, after in pairwise(contents):
        assert not (type(before) is type(after) and type(before) is not FunctionCallContent)
    # the kinds appear in the order of the pieces, runs collapsed
    kinds = [type(p) for p in pieces]
    collapsed = [
        k
        for i, k in enumerate(kinds)
        if i == 0 or k is not kinds[i - 1] or k is FunctionCallContent
    ]
    assert [type(c) for c in contents] == collapsed


@SETTINGS
@given(pieces=st.lists(_PIECE, max_size=30))
def test_merging_is_idempotent(pieces: list[AIContent]) -> None:
    once = ChatResponse.from_updates([ChatResponseUpdate([p]) for p in pieces])
    again = ChatResponse.from_updates([ChatResponseUpdate(list(m.contents)) for m in once.messages])
    assert again.messages == once.messages
