"""Key paths: how configuration errors say where the mistake is.

"field required" without a location is useless in a file with ten backends, so every message
names the file, the line and the key path (``backends.gpu.retry.max_attempts``), and a wrong
name gets its nearest known one. The lines come from the one walk of the YAML node graph
(``providers.config.document``). Values from the environment are never quoted: they may be
secrets (``providers.config.interpolation``). Keys and names are the file's own text, and a
file may come from anywhere: their control characters are written out (``printable``) before a
message shows them.
"""

from __future__ import annotations

import difflib
from pathlib import Path

__all__ = ["KeyPath", "Locator", "did_you_mean", "dotted", "printable"]

KeyPath = tuple[str | int, ...]

_CONTROLS = (*range(0x20), 0x7F, *range(0x80, 0xA0))  # C0, DEL, C1
_ESCAPED = {code: f"\\x{code:02x}" for code in _CONTROLS}


def printable(text: str) -> str:
    """``text`` with every C0, DEL and C1 control character written as ``\\xNN``, as the CLI's
    ``terminal_safe`` writes a server's text: a key named ``"gpu\\e]0;pwned\\a"`` (YAML's
    double quotes spell any character) must not retitle the terminal, or forge a log line,
    of whoever reads the error. Quoting with ``repr`` escapes them too; a bare key needs this."""
    return text.translate(_ESCAPED)


class Locator:
    """``file:line`` for a key path: the line of the deepest key that exists in the file."""

    def __init__(self, path: Path, lines: dict[KeyPath, int]) -> None:
        self.path = path
        self.lines = lines

    def __call__(self, key_path: KeyPath) -> str:
        for depth in range(len(key_path), -1, -1):
            line = self.lines.get(key_path[:depth])
            if line is not None:
                return f"{self.path}:{line}"
        return str(self.path)


def dotted(key_path: KeyPath) -> str:
    """``("backends", "a", "tags", 0)`` → ``backends.a.tags[0]``, control characters escaped."""
    text = ".".join(f"[{p}]" if isinstance(p, int) else p for p in key_path).replace(".[", "[")
    return printable(text)


def did_you_mean(word: str, candidates: list[str]) -> str:
    close = difflib.get_close_matches(word, candidates, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
