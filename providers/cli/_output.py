"""How the commands show results on a terminal: the probe table, the streamed answer and the
statistics after it.

Answers go to stdout and everything about them (finish, usage, timings) to stderr, so
``oaicompat chat … > answer.txt`` keeps only the answer.
"""

from __future__ import annotations

from typing import Any, TextIO

from providers.abstractions.chat_response import ChatResponse, ChatResponseUpdate
from providers.abstractions.contents import TextContent, TextReasoningContent
from telemetry import CacheEvolution, request_timings

__all__ = ["StreamView", "print_probe_table", "print_stats"]


def print_probe_table(data: dict[str, Any], out: TextIO) -> None:
    """``field  value  source``, one capability a row, columns aligned."""
    rows: list[tuple[str, str, str]] = []
    for key, value in data.items():
        if isinstance(value, dict) and set(value) == {"value", "source"}:
            rows.append((key, _cell(value["value"]), value["source"]))
        else:
            rows.append((key, _cell(value), ""))
    widths = [max(len(r[i]) for r in [("field", "value", "source"), *rows]) for i in range(2)]
    for name, value, source in [("field", "value", "source"), *rows]:
        out.write(f"{name:<{widths[0]}}  {value:<{widths[1]}}  {source}".rstrip() + "\n")


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value) or "-"
    return str(value)


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
        self.out.write(text)
        self.out.flush()

    def end(self) -> None:
        if self.tty and self.kind == "reasoning":
            self.out.write(self.RESET)
        if self.kind is not None:
            self.out.write("\n")


def print_stats(response: ChatResponse, updates: list[ChatResponseUpdate], out: TextIO) -> None:
    """Finish reason, usage, and the request's timings and cache evolution when recorded."""
    out.write(f"finish: {response.finish_reason}\n")
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
        out.write(f"{name}: {measurement.value:.1f} {measurement.unit}\n")
    evolution = CacheEvolution()
    evolution.add(timings)
    out.write(evolution.render_text() + "\n")
