"""Key paths: how configuration errors say where the mistake is.

"field required" without a location is useless in a file with ten backends, so every message
names the file, the line and the key path (``backends.gpu.retry.max_attempts``), and a wrong
name gets its nearest known one. Values are never quoted: they may be secrets.
"""

from __future__ import annotations

import difflib
from pathlib import Path

import yaml  # type: ignore[import-untyped, unused-ignore]  # stubs: types-PyYAML

__all__ = ["KeyPath", "Locator", "did_you_mean", "dotted", "line_map"]

KeyPath = tuple[str | int, ...]


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


def line_map(node: yaml.Node | None) -> dict[KeyPath, int]:
    """Key path → 1-based line, from the composed node tree (the same parse as ``safe_load``)."""
    lines: dict[KeyPath, int] = {}
    if node is None:
        return lines
    lines[()] = node.start_mark.line + 1

    def walk(current: yaml.Node, prefix: KeyPath) -> None:
        if isinstance(current, yaml.MappingNode):
            for key, value in current.value:
                if isinstance(key, yaml.ScalarNode):
                    child = (*prefix, str(key.value))
                    lines.setdefault(child, key.start_mark.line + 1)
                    walk(value, child)
        elif isinstance(current, yaml.SequenceNode):
            for index, item in enumerate(current.value):
                child = (*prefix, index)
                lines.setdefault(child, item.start_mark.line + 1)
                walk(item, child)

    walk(node, ())
    return lines


def dotted(key_path: KeyPath) -> str:
    """``("backends", "a", "tags", 0)`` → ``backends.a.tags[0]``."""
    return ".".join(f"[{p}]" if isinstance(p, int) else p for p in key_path).replace(".[", "[")


def did_you_mean(word: str, candidates: list[str]) -> str:
    close = difflib.get_close_matches(word, candidates, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
