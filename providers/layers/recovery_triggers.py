"""Which characters let the text-recovery layer hand a delta on without running its parsers.

Most deltas hold no marker at all; ``ChoiceRecovery`` recognises them with a few ``in`` tests on
the characters that could start one (or start a line, where a code fence may open), asked of the
parsers whenever their state changes. The sets depend on the formats only, so they are cached.
"""

from __future__ import annotations

from functools import cache
from typing import Final

from providers.reasoning import ReasoningParser

__all__ = ["AUTO", "OFF", "free_of", "free_of_each", "fresh_lines", "fresh_plain", "lines", "plain"]

OFF: Final = "off"
AUTO: Final = "auto"


@cache
def fresh_plain(reasoning_mode: str, tools_mode: str) -> tuple[str, str, str, str] | None:
    """``plain`` of fresh parsers in these modes (their triggers depend on the format only)."""
    triggers = _fresh_triggers(reasoning_mode, tools_mode)
    return None if triggers is None else plain(triggers[0] + triggers[1])


@cache
def fresh_lines(reasoning_mode: str, tools_mode: str) -> tuple[str, ...] | None:
    """``lines`` of fresh parsers in these modes."""
    triggers = _fresh_triggers(reasoning_mode, tools_mode)
    return None if triggers is None else lines(*triggers)


def _fresh_triggers(reasoning_mode: str, tools_mode: str) -> tuple[str, str] | None:
    reasoning = "" if reasoning_mode == OFF else ReasoningParser(reasoning_mode).plain_triggers()
    tools = "" if tools_mode == OFF else _tool_call_triggers(tools_mode)
    if reasoning is None or tools is None:
        return None
    return reasoning, tools


def _tool_call_triggers(tools_mode: str) -> str | None:
    # A request that offers no tool needs no tool-call parser, and the parser's formats cost
    # about 10 ms of a first request's cold start (-X importtime).
    # deferred: only with tools offered (cold start, above)
    from providers.text_tool_calls import TextToolCallParser

    return TextToolCallParser(tools_mode).plain_triggers()


@cache
def plain(triggers: str) -> tuple[str, str, str, str] | None:
    """The characters that could start a marker of either parser (or a line, which may open a
    code fence), as four ``in`` tests (the cheapest search for so few: no mode needs more;
    with more, there is no fast path)."""
    chars = sorted(set(triggers)) or ["\x00"]  # (NUL in a text only costs the full path)
    if len(chars) > 4:
        return None
    chars += chars[-1:] * (4 - len(chars))
    return (chars[0], chars[1], chars[2], chars[3])


@cache
def lines(reasoning: str, tools: str) -> tuple[str, ...] | None:
    """For a text holding a newline: the characters that must be absent for it to pass both
    parsers with only the tool-call parser's line state moving (``TextToolCallParser.pass_lines``).
    A newline is a trigger only because a code fence may open at a line's start; without a
    backtick or a tilde in the text none can. ``None`` when a newline is a trigger of the
    reasoning parser's, or not one of the tool-call parser's (then ``plain`` alone decides)."""
    if "\n" not in tools or "\n" in reasoning:
        return None
    return tuple(sorted(set(reasoning + tools + "`~") - {"\n"}))


def free_of_each(chars: tuple[str, ...], text: str) -> bool:
    """Does ``text`` hold none of ``chars``? (A loop: no generator made for a few ``in``.)"""
    for char in chars:  # noqa: SIM110
        if char in text:
            return False
    return True


def free_of(chars: tuple[str, str, str, str], text: str) -> bool:
    """Does ``text`` hold none of ``chars`` (what ``plain`` gave)?"""
    a, b, c, d = chars
    return a not in text and b not in text and c not in text and d not in text
