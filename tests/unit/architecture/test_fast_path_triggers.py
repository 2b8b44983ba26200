"""The text-recovery fast path's trigger characters, held against the registered formats.

Text recovery hands a delta on without running its parsers when the delta holds none of the
characters that could start a marker (``ChoiceRecovery.take_passing``), with four ``in``
tests (``recovery_triggers.plain``): with a fifth character there is no fast path at all, and
every delta of every stream takes the parsers (right answers, several times the cost). In
``auto`` mode all four are in use (a newline, ``<``, ``[`` and Kimi's ``◁``), so a new text
format whose markup starts with another character would turn the fast path off without any
test failing, and a trigger set that missed a format's first character would let its markup
through as text. These tests derive what the set must hold from the format registry and fail
on either.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from providers.abstractions.contents import TextContent
from providers.abstractions.options import ToolDeclaration
from providers.abstractions.response_update import ChatResponseUpdate
from providers.layers import recovery_triggers
from providers.layers.choice_recovery import ChoiceRecovery
from providers.layers.recovery_triggers import AUTO, OFF, fresh_plain
from providers.reasoning import FORMATS as REASONING_FORMATS
from providers.reasoning import ReasoningParser
from providers.text_tool_calls import registry as _registry
from providers.text_tool_calls.formats.hermes import Hermes

TOOLS = [ToolDeclaration("get_weather")]
REASONING_MODES = (
    OFF,
    *(mode for mode in REASONING_FORMATS if ReasoningParser(mode).plain_triggers() is not None),
)
"""Every reasoning mode that has a fast path of its own (``deepseek_r1`` starts inside
reasoning and ``gpt_oss`` holds its start back, so neither has one when fresh)."""


def marker_starts(tools_mode: str) -> set[str]:
    """The first characters of the markup the tool-call parser of ``tools_mode`` listens for,
    read from the registered formats (``auto``: every format's ``auto_markers``), and the
    newline at which a code fence may open."""
    if tools_mode == OFF:
        return set()
    if tools_mode == AUTO:
        markers = [m for fmt in _registry._ALL for m in fmt.auto_markers]
    else:
        markers = list(_registry.FORMATS[tools_mode].markers)
    return {marker[0] for marker in markers} | {"\n"}


def problems(reasoning_mode: str, tools_mode: str) -> list[str]:
    """What is wrong with the fast path of these modes: off, or blind to a marker's start."""
    chars = recovery_triggers.fresh_plain(reasoning_mode, tools_mode)
    needed = marker_starts(tools_mode)
    if reasoning_mode != OFF:
        needed |= set(ReasoningParser(reasoning_mode).plain_triggers() or "")
    if chars is None:
        return [
            f"{reasoning_mode}/{tools_mode}: no fast path, {len(needed)} trigger characters "
            f"{sorted(needed)} (recovery_triggers.plain tests at most 4)"
        ]
    missing = needed - set(chars)
    return [f"{reasoning_mode}/{tools_mode}: misses {sorted(missing)}"] if missing else []


def _clear_caches() -> None:
    _registry.table_for.cache_clear()
    recovery_triggers.fresh_plain.cache_clear()
    recovery_triggers.plain.cache_clear()


@pytest.mark.parametrize("reasoning_mode", REASONING_MODES)
def test_every_format_keeps_the_fast_path_on_and_seen(reasoning_mode: str) -> None:
    found = [p for tools in (*_registry.FORMAT_NAMES, OFF) for p in problems(reasoning_mode, tools)]
    assert found == []


def test_auto_mode_uses_all_four_characters() -> None:
    """The margin is nil: this is the test to read when the one above fails for ``auto``."""
    assert sorted(fresh_plain(AUTO, AUTO) or ()) == ["\n", "<", "[", "◁"]


def passes(recovery: ChoiceRecovery, text: str) -> bool:
    """Does the fast path hand a plain update of ``text`` on untouched, without the parsers?"""
    update = ChatResponseUpdate([TextContent(text)])
    update.make_plain()
    return recovery.take_passing([update], 0, 0, TextContent, []) == 1


def _past_a_line_start(recovery: ChoiceRecovery) -> ChoiceRecovery:
    assert recovery.process([TextContent("Hello")]) == [TextContent("Hello")]
    return recovery


_MARKUP = sorted(
    {(fmt.name, m) for fmt in _registry._ALL for m in fmt.markers}
    | {(AUTO, m) for fmt in _registry._ALL for m in fmt.auto_markers}
)


@pytest.mark.parametrize(("tools_mode", "marker"), _MARKUP)
def test_the_fast_path_never_passes_a_registered_marker(tools_mode: str, marker: str) -> None:
    """Past a line's start (where the fast path is open), a delta that holds markup the
    tool-call parser listens for (a format's own markers in its mode, every format's
    ``auto_markers`` in ``auto``) is never handed on untouched; ordinary text is."""
    recovery = ChoiceRecovery(AUTO, tools_mode, TOOLS, block_whitespace=True)
    _past_a_line_start(recovery)
    assert passes(recovery, " sunny")
    assert not passes(recovery, f" see {marker}")
    assert not passes(recovery, f"{marker} x")
    # A newline is no marker's start here, and the newline path hands prose across lines on;
    # never a marker on the next line.
    assert recovery.edit_text(" sunny\n today") == " sunny\n today"
    assert recovery.edit_text(f" see\n{marker}") is None
    assert recovery.edit_text(f"x\n {marker} x") is None


class _SectionSign(Hermes):
    """A made-up format whose markup starts with a fifth character."""

    name = "section_sign"
    markers = ("§call§",)
    auto_markers = ("§call§",)


@pytest.fixture
def fifth_character_format(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(_registry, "_ALL", (*_registry._ALL, _SectionSign()))
    _clear_caches()
    try:
        yield
    finally:
        monkeypatch.undo()
        _clear_caches()


@pytest.mark.usefixtures("fifth_character_format")
def test_a_format_starting_with_a_fifth_character_is_noticed() -> None:
    """The guard can fail: registering a format whose markup starts with ``§`` turns the
    ``auto`` fast path off, and ``problems`` says so (the first test would then fail)."""
    assert fresh_plain(AUTO, AUTO) is None
    assert problems(AUTO, AUTO) == [
        "auto/auto: no fast path, 5 trigger characters ['\\n', '<', '[', '§', '◁'] "
        "(recovery_triggers.plain tests at most 4)"
    ]
    recovery = _past_a_line_start(ChoiceRecovery(AUTO, AUTO, TOOLS, block_whitespace=True))
    assert not passes(recovery, " sunny")  # (the cliff: every delta is parsed)


def test_a_trigger_set_blind_to_a_marker_is_noticed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The other way to fail: a trigger set without a format's first character (``[``, as if
    the registry's table had lost mistral's ``[TOOL_CALLS]``) is reported as missing it."""
    _clear_caches()
    monkeypatch.setattr(recovery_triggers, "fresh_plain", lambda r, t: ("\n", "<", "◁", "◁"))
    try:
        assert problems(AUTO, AUTO) == ["auto/auto: misses ['[']"]
    finally:
        monkeypatch.undo()
        _clear_caches()


def test_no_marker_starts_a_line_with_a_newline() -> None:
    """Prose spanning lines skips the parsers when it holds no other trigger (``lines``): the
    newline is a trigger only for code fences. A marker beginning with a newline would then
    pass as text, so none may (this fails the day a format needs one)."""
    starts = {m[0] for fmt in _registry._ALL for m in (*fmt.markers, *fmt.auto_markers)}
    assert not {char for char in starts if char.isspace()}
    recovery = ChoiceRecovery(AUTO, AUTO, TOOLS, block_whitespace=True)
    assert recovery_triggers.lines("<◁", "<[\n") == ("<", "[", "`", "~", "◁")
    assert recovery_triggers.lines("\n", "<[\n") is None  # (a reasoning trigger: no skip)
    assert recovery.edit_text("a\nb") == "a\nb"
    assert recovery.edit_text("a\n```") is None
