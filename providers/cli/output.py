"""How the commands show results on a terminal: the probe table, the streamed answer and the
statistics after it, and ``terminal_safe``, through which everything the CLI prints passes.

Answers go to stdout and everything about them (finish, usage, timings) to stderr, so
``oaicompat chat … > answer.txt`` keeps only the answer.

What the CLI prints is mostly other people's text: a server's model ids, error messages,
versions and streamed output, a configuration file's keys. A terminal acts on the control
characters in it (``ESC ] 0 ;`` retitles the window, ``ESC [ 2 J`` clears it, U+009B is a
one-character CSI on terminals that honour C1), so each is written out as ``\\xNN`` instead;
streamed text keeps its newlines and tabs, which are its layout.
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from providers.abstractions.chat_response import ChatResponse, ChatResponseUpdate
from providers.abstractions.contents import TextContent, TextReasoningContent
from telemetry import CacheEvolution, request_timings

__all__ = [
    "StreamView",
    "json_text",
    "print_probe_table",
    "print_stats",
    "print_waiting",
    "terminal_safe",
]

_CONTROLS = (*range(0x20), 0x7F, *range(0x80, 0xA0))  # C0, DEL, C1
_ESCAPED = {code: f"\\x{code:02x}" for code in _CONTROLS}
_ESCAPED_BUT_LAYOUT = {code: text for code, text in _ESCAPED.items() if chr(code) not in "\n\t"}
_JSON_ESCAPED = {code: f"\\u{code:04x}" for code in _CONTROLS if code >= 0x7F}


def terminal_safe(text: str, *, layout: bool = False) -> str:
    """``text`` with every C0, DEL and C1 control character written as ``\\xNN``.

    ``layout=True`` keeps newlines and tabs, for streamed text and multi-line messages; a
    value shown on one line (an id, a table cell) escapes them too, so it cannot break the line.
    """
    return text.translate(_ESCAPED_BUT_LAYOUT if layout else _ESCAPED)


def json_text(data: Any) -> str:
    """Indented JSON with no raw control character in it, the same value to any parser.

    ``json.dumps`` escapes C0 itself; with ``ensure_ascii=False`` (readable non-ASCII) it leaves
    DEL and C1 raw, so those become ``\\u`` escapes here (they can only occur inside strings).
    """
    return json.dumps(data, indent=2, ensure_ascii=False).translate(_JSON_ESCAPED)


def print_probe_table(data: dict[str, Any], out: TextIO) -> None:
    """``field  value  source``, one capability a row, columns aligned."""
    rows: list[tuple[str, str, str]] = []
    for key, value in data.items():
        if isinstance(value, dict) and set(value) == {"value", "source"}:
            rows.append(
                (terminal_safe(key), _cell(value["value"]), terminal_safe(str(value["source"])))
            )
        else:
            rows.append((terminal_safe(key), _cell(value), ""))
    widths = [max(len(r[i]) for r in [("field", "value", "source"), *rows]) for i in range(2)]
    for name, value, source in [("field", "value", "source"), *rows]:
        out.write(f"{name:<{widths[0]}}  {value:<{widths[1]}}  {source}".rstrip() + "\n")


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, list | tuple):
        return terminal_safe(", ".join(str(v) for v in value)) or "-"
    return terminal_safe(str(value))


class StreamView:
    """Prints text and reasoning as they arrive: reasoning dimmed on a terminal, labelled
    otherwise (escape codes in a file or a pipe are noise)."""

    DIM, RESET = "\x1b[2m", "\x1b[0m"

    def __init__(self, out: TextIO, *, tty: bool) -> None:
        self.out = out
        self.tty = tty
        self.kind: str | None = None

    def show(self, update: ChatResponseUpdate) -> None:
        for content in update.contents:
            if type(content) is TextReasoningContent and content.text:
                self._write("reasoning", content.text)
            elif type(content) is TextContent and content.text:
                self._write("text", content.text)

    def _write(self, kind: str, text: str) -> None:
        if kind != self.kind:
            if self.tty and self.kind == "reasoning":
                self.out.write(self.RESET + "\n")
            elif not self.tty:
                self.out.write(("\n" if self.kind else "") + f"[{kind}]\n")
            if self.tty and kind == "reasoning":
                self.out.write(self.DIM)
            self.kind = kind
        self.out.write(terminal_safe(text, layout=True))
        self.out.flush()

    def end(self) -> None:
        if self.tty and self.kind == "reasoning":
            self.out.write(self.RESET)
        if self.kind is not None:
            self.out.write("\n")


def print_stats(response: ChatResponse, updates: list[ChatResponseUpdate], out: TextIO) -> None:
    """Finish reason, usage, and the request's timings and cache evolution when recorded."""
    out.write(f"finish: {terminal_safe(str(response.finish_reason))}\n")
    usage = response.usage
    if usage is not None:
        out.write(
            f"usage: in {usage.input_token_count} out {usage.output_token_count} "
            f"cached {usage.cached_input_token_count}\n"
        )
    timings = next((t for u in reversed(updates) if (t := request_timings(u)) is not None), None)
    if timings is None:
        return
    for name, measurement in timings.measurements().items():
        out.write(terminal_safe(f"{name}: {measurement.value:.1f} {measurement.unit}") + "\n")
    evolution = CacheEvolution()
    evolution.add(timings)
    out.write(terminal_safe(evolution.render_text(), layout=True) + "\n")


def print_waiting(url: str, timeout: float | None, err: TextIO) -> None:
    """On a terminal only, say what a long silence is: a server may take minutes to a first
    token (600 s by default), which without a word looks like a hang."""
    if not err.isatty():
        return
    limit = f"up to {timeout:g} s" if timeout else "--timeout SECONDS to limit"
    err.write(f"oaicompat: waiting for {terminal_safe(url)}… ({limit}; Ctrl-C to stop)\n")
    err.flush()
