"""The ``<tool_call>…</tool_call>`` wrapper that hermes and qwen3_coder share.

In ``auto`` both formats open on the same marker and are told apart by the block's content, so
they must agree on where the block ends; this is that single definition.
"""

from __future__ import annotations

from providers.text_tool_calls.trackers import EndMarkerTracker

__all__ = ["CLOSE", "OPEN", "tool_call_tracker"]

OPEN = "<tool_call>"
CLOSE = "</tool_call>"


def _body_start(char: str) -> bool:
    # A JSON object (hermes) or ``<function=`` (qwen3_coder). Anything else after the tag means
    # the tag was mentioned in prose: release it at once instead of holding the whole answer.
    return char in "{<"


def tool_call_tracker(marker: str) -> EndMarkerTracker:
    """Up to ``</tool_call>``; a second ``<tool_call>`` before it ends the block unclosed."""
    return EndMarkerTracker(marker, (CLOSE,), restarts=(OPEN,), lead=_body_start)
