"""The contract between the shared scanner and the format modules.

A format answers three questions and nothing else: which markers open one of its blocks
(``markers``, and the unambiguous subset ``auto_markers`` that ``auto`` may detect it by), where a
block that began with a given marker ends (a ``BlockTracker``, fed the stream incrementally), and
what a complete block means (``parse_block``). Everything about streaming — holding back partial
markers, keeping unfinished blocks, releasing text — lives in ``scanner`` once, so every format
gets the same guarantees (any cutting of a text gives the same contents; nothing is lost).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, Protocol

from providers.abstractions.contents import AIContent, FunctionCallContent, TextContent
from providers.text_tool_calls.tools import ToolBook

__all__ = [
    "ERROR_KEY",
    "PART_KEY",
    "BlockTracker",
    "MalformedBlockError",
    "Segment",
    "Stop",
    "ToolCallFormat",
    "assemble",
    "error_text",
]

ERROR_KEY = "text_tool_call_error"
"""The ``additional_properties`` key that marks text which looked like a call but did not parse."""


PART_KEY = "message_part"
"""Marks text that is one message's visible part (harmony ``final`` or a preamble): the parser
joins consecutive parts with a line break and removes the mark."""


class MalformedBlockError(ValueError):
    """Raised by ``parse_block``: the block is not a call of this format. The message says why."""


class Stop(NamedTuple):
    """Where a block stops, as an offset from the first character of its marker.

    ``is_block`` false means the marker did not open a block after all (``<tool_call>`` in
    prose): the text up to ``at`` is ordinary text, and scanning resumes at ``at``.
    """

    at: int
    is_block: bool = True


class BlockTracker(Protocol):
    """Finds the end of one block, seeing each character once.

    ``feed(text, pos)`` consumes ``text[pos:]`` (the first call starts at the marker) and returns
    a ``Stop`` as soon as the end is known, else ``None``. A ``Stop`` may point before ``pos``
    (a format that needs lookahead, or an end marker split across deltas); the scanner re-reads
    what lies after it. ``finish()`` says where the block ends if the stream ends now, or
    ``None`` when the block is unclosed. Both must depend only on the characters, never on how
    they were cut into deltas.
    """

    def feed(self, text: str, pos: int) -> Stop | None: ...

    def finish(self) -> Stop | None: ...


class ToolCallFormat(Protocol):
    """One text tool-call format; see the module docstring."""

    @property
    def name(self) -> str: ...

    @property
    def markers(self) -> tuple[str, ...]: ...

    @property
    def auto_markers(self) -> tuple[str, ...]: ...

    def tracker(self, marker: str) -> BlockTracker: ...

    def parse_block(self, block: str, tools: ToolBook) -> list[AIContent]:
        """The contents of a complete block, or ``MalformedBlockError``.

        The result may mix calls with ``TextContent`` (plain, or an error text for one bad call
        among good ones); everything of ``block`` that is not markup must appear in it.
        """
        ...


def error_text(text: str, reason: str) -> TextContent:
    """Text that looked like a call but did not parse: returned as is, with the reason."""
    return TextContent(text, additional_properties={ERROR_KEY: reason})


class Segment(NamedTuple):
    """One call inside a multi-call block: its span and either the call or why it failed."""

    start: int
    end: int
    result: FunctionCallContent | str


def assemble(
    block: str, start: int, end: int, segments: Sequence[Segment], *, drop_gaps: bool = False
) -> list[AIContent]:
    """Contents of a block holding several calls between ``block[start:end]``.

    Whitespace between calls is markup. Anything else between them (unless ``drop_gaps``: a
    format whose servers drop it, Kimi-K2), and every call that failed, comes back as an error
    text holding exactly its characters, so one bad call does not sink the good ones. If no
    call parsed, the block as a whole is malformed (the caller then returns the
    entire block as error text rather than a patchwork).
    """
    out: list[AIContent] = []
    reasons: list[str] = []

    def gap(text: str) -> None:
        if text.strip() and not drop_gaps:
            reasons.append("unexpected text between calls")
            out.append(error_text(text, reasons[-1]))

    cursor = start
    for segment in segments:
        gap(block[cursor : segment.start])
        if isinstance(segment.result, str):
            reasons.append(segment.result)
            out.append(error_text(block[segment.start : segment.end], segment.result))
        else:
            out.append(segment.result)
        cursor = segment.end
    gap(block[cursor:end])
    if not any(isinstance(c, FunctionCallContent) for c in out):
        raise MalformedBlockError(reasons[0] if reasons else "no call in the block")
    return out
