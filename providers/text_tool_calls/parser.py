"""``TextToolCallParser``: the public face — a format (or ``auto``), the tools, one scanner.

The parser owns the two decisions the scanner leaves open: what a finished block is (the
candidate formats for its marker are tried in order; none parsing makes it error text) and, for
``auto``, when detection happens (the first block that parses fixes the format for the rest of
the stream, so a later ``<|python_tag|>`` in a hermes answer is just text).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from providers.abstractions.contents import AIContent, TextContent
from providers.abstractions.limits import DEFAULT_LIMITS
from providers.abstractions.options import ToolDeclaration
from providers.abstractions.parsed_text import ParsedText
from providers.text_tool_calls.protocol import PART_KEY, MalformedBlockError, error_text
from providers.text_tool_calls.registry import AUTO, FORMAT_NAMES, table_for
from providers.text_tool_calls.scanner import Scanner, append_text
from providers.text_tool_calls.tools import ToolBook
from providers.text_tool_calls.unclosed import recover_unclosed

__all__ = ["TextToolCallParser"]


class _Session:
    """The state of one stream: the scanner and, for ``auto``, whether a format was detected."""

    __slots__ = ("_detecting", "_parts", "_scanner", "_table", "_tools", "cut")

    def __init__(self, name: str, tools: ToolBook) -> None:
        self._detecting = name == AUTO
        self._table = table_for(name)
        self._tools = tools
        self._parts = False  # a message part was emitted: the next one starts a new line
        self.cut = False  # the caller stopped reading mid-stream: unclosed blocks stay text
        self._scanner = Scanner(self._table, self._resolve, self._unclosed)

    @property
    def scanner(self) -> Scanner:
        return self._scanner

    def _resolve(self, marker: str, block: str) -> list[AIContent]:
        reasons = []
        for fmt in self._table.candidates[marker]:
            try:
                contents = fmt.parse_block(block, self._tools)
            except MalformedBlockError as exc:
                reasons.append(f"{fmt.name}: {exc}")
                continue
            if self._detecting:
                self._detecting = False
                self._table = table_for(fmt.name)
                self._scanner.use(self._table)
            return [self._joined(c) for c in contents]
        return [error_text(block, "; ".join(reasons))]

    def _joined(self, content: AIContent) -> AIContent:
        """A message part as plain text, after a line break if another part came before."""
        if not isinstance(content, TextContent) or not content.additional_properties:
            return content
        if PART_KEY not in content.additional_properties:
            return content
        text = "\n" + content.text if self._parts else content.text
        self._parts = True
        return TextContent(text)

    def _unclosed(self, marker: str, block: str) -> list[AIContent]:
        candidates = self._table.candidates[marker]
        names = "/".join(fmt.name for fmt in candidates)
        reason = f"{names}: {marker} not closed at end of stream"
        if self.cut:
            return [error_text(block, reason)]
        recovered = recover_unclosed(candidates, block, self._tools, reason)
        if recovered is not None:
            return recovered
        return [error_text(block, reason)]


class TextToolCallParser:
    """Recovers tool calls that a model wrote as text, whole (``parse``) or streamed.

    ``format`` is a format name (``hermes``, ``qwen3_coder``, ``mistral``, ``llama3_json``,
    ``pythonic``, ``kimi_k2``, ``deepseek_v3``, ``deepseek_v31``, ``gpt_oss``, ``nemotron``) or
    ``auto``, which
    detects the format from the first block that parses and keeps it for the stream. ``tools``
    (OpenAI-style dicts or ``ToolDeclaration``) type qwen3_coder values by their schemas and
    mark calls of tools that were not offered with an ``error``; so do arguments nesting past
    ``max_json_depth`` (``Limits.max_json_depth``).

    A call quoted in a Markdown code fence is text: markers are not looked for inside one.

    Guarantees, for every format: text outside calls is returned unchanged and in order; a block
    that does not parse comes back as a ``TextContent`` holding exactly its text, with the reason
    in ``additional_properties["text_tool_call_error"]``; streaming releases text at once,
    holding only a suffix that may still become a marker; and any cutting of a text into deltas
    gives the same contents as ``parse`` (ids of calls aside: they are fresh per call unless the
    format carries them).
    """

    __slots__ = ("_format", "_scanner", "_session", "_tools")

    def __init__(
        self,
        format: str = AUTO,  # noqa: A002 - the name the issue and the settings use
        tools: Sequence[ToolDeclaration | Mapping[str, Any]] | None = None,
        *,
        max_json_depth: int = DEFAULT_LIMITS.max_json_depth,
    ) -> None:
        if format not in FORMAT_NAMES:
            known = ", ".join(FORMAT_NAMES)
            raise ValueError(f"unknown text tool-call format {format!r}; known: {known}")
        self._format = format
        self._tools = ToolBook(tools, max_json_depth)
        self._session = _Session(format, self._tools)
        self._scanner = self._session.scanner

    @property
    def format(self) -> str:
        return self._format

    def parse(self, text: str) -> ParsedText:
        """All of ``text`` at once; independent of any stream in progress."""
        scanner = _Session(self._format, self._tools).scanner
        contents = scanner.feed(text)
        for content in scanner.finish():
            if type(content) is TextContent and content.additional_properties is None:
                append_text(contents, content.text)
            else:
                contents.append(content)
        return ParsedText(contents)

    def feed(self, delta: str) -> list[AIContent]:
        """Contents that ``delta`` completes, in order; text is released as soon as it can be."""
        return self._scanner.feed(delta)

    def plain_triggers(self) -> str | None:
        """The characters that could start a marker (or a line), if ``feed`` would now return
        a delta free of them as one unchanged plain ``TextContent`` (outside any block, nothing
        held back); ``None`` otherwise. A caller may then skip ``feed`` for such deltas, as long
        as it asks again after each ``feed``, with one proviso: ``at_line_start``.
        """
        return self._scanner.plain_triggers()

    def at_line_start(self) -> bool:
        """Would the next text begin a line (where a code fence may open or close)? A delta
        skipped by ``plain_triggers`` must then have a first non-blank character that is
        neither a backtick nor a tilde, and the caller says it skipped it with ``line_begun``.
        """
        return self._scanner.at_line_start()

    def line_begun(self) -> None:
        """A delta the caller did not feed began the current line (see ``at_line_start``):
        what follows is mid-line, where no fence opens."""
        self._scanner.line_begun()

    def pass_lines(self, text: str) -> bool:
        """Take in a delta the caller did not feed: one free of ``plain_triggers`` but for
        newlines, and with no backtick or tilde (no fence opens or closes in it); only the line
        state moves (``at_line_start``). ``False`` when that cannot be vouched for (a fence run
        at the line's start being counted): then ``feed`` it."""
        return self._scanner.pass_lines(text)

    def held_bytes(self) -> int:
        """How much ``feed`` holds back: a possible marker and an unclosed block (which grows
        until its end marker comes, so a caller bounds it)."""
        return self._scanner.held_bytes()

    def finish(self, *, cut: bool = False) -> list[AIContent]:
        """End of stream: held text, and any unclosed block, surfaced as a call with ``error``
        when a name can be read, else as error text. ``cut``: the caller stopped reading before
        the stream ended (a limit), so an unclosed block is only the text it is. Resets the
        stream."""
        self._session.cut = cut
        contents = self._scanner.finish()
        self._session = _Session(self._format, self._tools)
        self._scanner = self._session.scanner
        return contents
