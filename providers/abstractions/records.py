"""``Record`` and ``FrozenRecord``: small value classes without ``dataclasses``' import cost.

``@dataclass`` writes each class's ``__init__``, ``__eq__`` and ``__repr__`` as source text and
compiles it every time the module is imported: 0.4 to 1.3 ms a class on CPython 3.11 (measured
over the classes on the path of the first request, which built some twenty of them; issue 21's
cold start). A value class that nothing rebuilds with ``dataclasses.replace`` or inspects with
``dataclasses.fields`` is a record instead: its ``__init__`` is written out in its module (so
compiled once, into the bytecode cache), and equality, hashing and ``repr`` come from here,
read off ``__slots__`` (in field order), as the dataclass would have made them.
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError
from typing import Any

__all__ = ["FrozenRecord", "Record"]


class Record:
    """A mutable value: equal to a record of the same class with equal fields; unhashable."""

    __slots__ = ()
    __hash__ = None  # type: ignore[assignment]  # (mutable and compared by value)

    def _names(self) -> tuple[str, ...]:
        names: tuple[str, ...] = self.__slots__
        return names

    def _fields(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._names())

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._fields() == other._fields()

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._names())
        return f"{type(self).__qualname__}({fields})"


class FrozenRecord(Record):
    """An immutable value: as ``Record``, hashable, and assigning a field raises
    ``dataclasses.FrozenInstanceError`` as a frozen dataclass does. ``__init__`` sets its
    fields with ``object.__setattr__``."""

    __slots__ = ()

    def __hash__(self) -> int:  # type: ignore[override]  # (Record is unhashable)
        return hash(self._fields())

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")
