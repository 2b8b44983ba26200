"""Reading the YAML document: once, and within bounds.

The file is outside input, and YAML lets a few hundred bytes stand for gigabytes: an alias
names a node that may itself be made of aliases, so nine aliases of nine aliases of… (a
"billion laughs") compose into a tiny graph that expands into an exponential tree. Everything
after this module (interpolation, validation, error locations) walks the tree, so the tree is
what is bounded: the file's size, the nesting depth (as written, and as expanded through
aliases) and the number of values once aliases are expanded, each a ``ConfigurationError``
with ``file:line``, never a ``RecursionError`` or a swapped-out machine.

The node graph is composed once, by PyYAML's pure-Python ``SafeLoader`` (no Python tags; the
C parser would recurse past the depth check), and one walk of it builds both the value and
the key path → line map that error messages use.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NoReturn

import yaml  # type: ignore[import-untyped, unused-ignore]  # stubs: types-PyYAML

from providers.abstractions.errors import ConfigurationError
from providers.config.key_paths import KeyPath, Locator, dotted, printable

__all__ = ["MAX_DEPTH", "MAX_FILE_BYTES", "MAX_TEXT", "MAX_VALUES", "read_document"]

MAX_FILE_BYTES = 256 * 1024
"""A configuration of a hundred backends is a few tens of kilobytes; PyYAML's pure-Python
composer takes about a second for this much."""
MAX_DEPTH = 100
"""Nesting levels, aliases expanded: ``extra_body`` may hold a JSON schema, nothing needs more."""
MAX_VALUES = 100_000
"""Scalars, lists and mappings after alias expansion (an alias counts each time it is used)."""
MAX_TEXT = 1024 * 1024
"""Characters of keys and scalars after alias expansion: one long string used ten thousand
times is as large, to everything downstream, as ten thousand copies of it."""

_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_MERGE = "tag:yaml.org,2002:merge"


def read_document(path: Path) -> tuple[dict[Any, Any], Locator]:
    """The file's top-level mapping, and where each of its keys is written."""
    text = _read_text(path)
    try:
        loader = _BoundedLoader(text)
        try:
            root = loader.get_single_node()
            builder = _Builder(loader, path)
            data = builder.build(root, (), 1) if root is not None else None
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        raise ConfigurationError(_describe_yaml_error(path, text, exc)) from None
    locate = Locator(path, builder.lines)
    if data is None:
        return {}, locate
    if not isinstance(data, dict):
        raise ConfigurationError(f"{locate(())}: the top level must be a mapping")
    return data, locate


def _read_text(path: Path) -> str:
    """The file as text, refused before parsing when it is too large or not UTF-8."""
    try:
        with path.open("rb") as file:
            raw = file.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ConfigurationError(f"{path}: cannot read configuration: {exc.strerror}") from exc
    if len(raw) > MAX_FILE_BYTES:
        raise ConfigurationError(
            f"{path}: larger than {MAX_FILE_BYTES // 1024} KiB: not a configuration file"
        )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ConfigurationError(
            f"{path}:{line}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})"
        ) from None


def _describe_yaml_error(path: Path, text: str, exc: yaml.YAMLError) -> str:
    if isinstance(exc, yaml.reader.ReaderError):  # a control character, found by position
        line = text.count("\n", 0, exc.position) + 1
        return f"{path}:{line}: character U+{exc.character:04X} is not allowed in YAML"
    mark = getattr(exc, "problem_mark", None)
    where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
    problem = getattr(exc, "problem", None) or "invalid YAML"
    return f"{where}: {printable(problem)}"


class _BoundedLoader(yaml.SafeLoader):
    """``SafeLoader`` whose composer refuses to nest deeper than ``MAX_DEPTH``.

    Composing recurses once per level (``compose_node``), so an unbounded document would end
    in ``RecursionError`` before the walk below could count anything.
    """

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        if self._depth >= MAX_DEPTH:
            mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]  # untyped stub
            raise yaml.composer.ComposerError(
                None, None, f"nested deeper than {MAX_DEPTH} levels", mark
            )
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


class _Builder:
    """One walk of the node graph: the value, aliases expanded within the budget, and the line
    of every key path."""

    def __init__(self, loader: _BoundedLoader, path: Path) -> None:
        self.loader = loader
        self.path = path
        self.lines: dict[KeyPath, int] = {}
        self.values = 0
        self.text = 0
        self.open: set[int] = set()
        """Ids of the collections being built: meeting one again is an alias inside itself."""

    def build(self, node: yaml.Node, key_path: KeyPath, depth: int) -> Any:
        self.lines.setdefault(key_path, node.start_mark.line + 1)
        if depth > MAX_DEPTH:
            self._refuse(key_path, f"nested deeper than {MAX_DEPTH} levels once aliases expand")
        if isinstance(node, yaml.ScalarNode):
            return self._scalar(node, key_path)
        self._count(key_path, 0)
        if id(node) in self.open:
            self._refuse(key_path, "an alias refers to a node that contains it")
        self.open.add(id(node))
        try:
            if isinstance(node, yaml.SequenceNode) and node.tag == _SEQ:
                return [
                    self.build(item, (*key_path, index), depth + 1)
                    for index, item in enumerate(node.value)
                ]
            if isinstance(node, yaml.MappingNode) and node.tag == _MAP:
                return self._mapping(node, key_path, depth)
            self._refuse(key_path, f"unsupported tag {printable(node.tag)}")
        finally:
            self.open.discard(id(node))

    def _mapping(self, node: yaml.MappingNode, key_path: KeyPath, depth: int) -> dict[Any, Any]:
        """Merge keys (``<<: *base``) first, whatever their position, so written keys win; of
        several merged mappings the first listed wins, as the YAML merge spec says."""
        result: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE:
                sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else []
                for source in reversed(sources or [value_node]):
                    if not isinstance(source, yaml.MappingNode):
                        self._refuse(key_path, "a merge key (<<) takes a mapping or a list of them")
                    result.update(self.build(source, key_path, depth))
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE:
                continue
            if not isinstance(key_node, yaml.ScalarNode):
                self._refuse(key_path, "a key must be a plain value, not a list or a mapping")
            key = self._scalar(key_node, key_path)
            child = (*key_path, str(key_node.value))
            self.lines[child] = key_node.start_mark.line + 1
            result[key] = self.build(value_node, child, depth + 1)
        return result

    def _scalar(self, node: yaml.ScalarNode, key_path: KeyPath) -> Any:
        self._count(key_path, len(node.value))
        return self.loader.construct_object(node, deep=True)

    def _count(self, key_path: KeyPath, text: int) -> None:
        self.values += 1
        self.text += text
        if self.values > MAX_VALUES:
            self._refuse(key_path, f"more than {MAX_VALUES} values once aliases are expanded")
        if self.text > MAX_TEXT:
            self._refuse(key_path, f"more than {MAX_TEXT} characters once aliases are expanded")

    def _refuse(self, key_path: KeyPath, problem: str) -> NoReturn:
        where = Locator(self.path, self.lines)(key_path)
        raise ConfigurationError(f"{where}: {dotted(key_path) or '(top level)'}: {problem}")
