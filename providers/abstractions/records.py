"""``value_class``: the library's one value-type idiom, a ``@dataclass(slots=True)`` made without
``dataclass``'s pass over the class, its ``__init__`` compiled ahead of time.

Every value type of the library is one: contents, messages, options, responses, usage, limits,
endpoints, backend rows, retry decisions, timings and telemetry records (the one deliberate
exception is ``ChatResponseUpdate``, the object built per streamed chunk, whose slots its own
module explains). The class is a real slotted dataclass: ``fields``, ``replace``, ``asdict``,
``copy``, ``pickle`` and ``__match_args__`` work, and ``frozen=True`` refuses assignment with
``FrozenInstanceError``. ``tests/unit/providers/abstractions/test_value_classes.py`` checks
all of it against the class ``@dataclass`` makes of the same fields.

Why not ``@dataclass`` itself: on CPython 3.11 it writes each method as source text and compiles
it with ``exec`` when the module is imported (three methods a class, six frozen), and even with
every method off its pass over the class costs about 0.38M instructions a class. Here:

* the class is made directly, as ``dataclass(slots=True)`` makes it (its fields from the
  annotations and ``dataclasses.field`` specs, ``__dataclass_fields__`` and
  ``__dataclass_params__`` set here, the class made again with ``__slots__``, a slot not being
  addable to a made class): about 0.15M instructions a class, half of that the second class;
* ``__init__`` is made on first use (``_InitOnFirstUse``: a cold start defines 31 value types
  and builds 18), from code compiled ahead of time: ``value_inits.py`` holds the ``__init__``
  source of each value type a chat client is made of, compiled once into the bytecode cache
  like any module. A class whose source is not there (the CLI's, a test's, a user's, or one
  changed since the file was written: a source is looked up by its checksum) is compiled with
  ``exec``, about 0.5M instructions. ``tests/unit/providers/abstractions/test_value_inits.py``
  rewrites the file and fails when it was stale;
* ``__eq__``, ``__repr__``, ``__hash__`` and the frozen ``__setattr__`` are shared functions
  parametrised by the field names, which nothing on the hot path calls.

Measured on the first request (``python -m benchmarks.cold_import --first-request-instructions``:
a fresh interpreter from its first import to the first streamed answer, counted by valgrind, so
the load of the machine does not move it; ``benchmarks/README.md``, issues 31 and 32): the head
before the one idiom (four idioms: a generic ``__init__``, hand-written records and ``__init__``
methods) 742.2M instructions; ``value_class`` over ``dataclass``, ``__init__`` compiled on first
use, 764.9M; the class made here 757.3M; and ``__init__`` from ``value_inits.py`` 741.1M (plain
``@dataclass``: some 820M; ``value_inits.py`` holding all 66 value types of the library, where
a client had 28: 742.0M, the other functions loaded for nothing). Over issue 33's request
options (acebafc), which add 7.1M of their own: 772.0M with ``dataclass``, 746.2M with this.
Construction runs the same stores a hand-written ``__init__`` would (``TextContent("x")``: 2,903
instructions a call, the loop included, 2,902 before). Methods written in the class body are
kept, as ``dataclass`` keeps them. Not supported (no class uses them): ``InitVar``
pseudo-fields, ``KW_ONLY``, ``order``, ``unsafe_hash``, ``weakref_slot``.
"""

from __future__ import annotations

import dataclasses
import sys
from _thread import get_ident
from collections.abc import Callable
from dataclasses import MISSING, Field, FrozenInstanceError
from operator import attrgetter
from types import FunctionType
from typing import Any, TypeVar, dataclass_transform, overload
from zlib import crc32

from providers.abstractions import value_inits

__all__ = ["init_source", "value_class"]

_C = TypeVar("_C", bound=type[Any])
_FIELD = vars(dataclasses)["_FIELD"]
"""The mark ``dataclasses.fields`` selects a field by (``dataclass`` gives it to every field
that is not a ``ClassVar`` nor an ``InitVar``; private, the same since Python 3.7)."""


@overload
def value_class(cls: _C, /) -> _C: ...
@overload
def value_class(*, frozen: bool = False, kw_only: bool = False) -> Callable[[_C], _C]: ...
@dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field))
def value_class(
    cls: _C | None = None, /, *, frozen: bool = False, kw_only: bool = False
) -> _C | Callable[[_C], _C]:
    """``@dataclass(slots=True, frozen=frozen, kw_only=kw_only)``, compiling no method but
    ``__init__``, and that one only outside ``value_inits.py``."""

    def wrap(cls: _C) -> _C:
        return _make(cls, frozen, kw_only)

    return wrap if cls is None else wrap(cls)


def _make(cls: _C, frozen: bool, kw_only: bool) -> _C:
    """The class ``dataclass(slots=True, init=..., repr=..., eq=...)`` makes of ``cls``."""
    body = dict(cls.__dict__)
    if "__slots__" in body:
        raise TypeError(f"{cls.__name__} already specifies __slots__")
    specs = _fields(cls, body, frozen, kw_only)
    values = tuple(specs.values())
    qualname = cls.__qualname__
    init = _InitOnFirstUse(values, frozen)
    ours: dict[str, Any] = {
        "__init__": init,
        "__repr__": _repr([f.name for f in values if f.repr]),
        "__eq__": _eq(_getter([f.name for f in values if f.compare])),
        "__match_args__": tuple(f.name for f in values if f.init and not f.kw_only),
    }
    if frozen:
        names = tuple(specs)
        ours["__getstate__"], ours["__setstate__"] = _getstate(names), _setstate(names)
    explicit_hash = body.get("__hash__", MISSING)
    if explicit_hash is MISSING or (explicit_hash is None and "__eq__" in body):
        keys = [f.name for f in values if (f.compare if f.hash is None else f.hash)]
        ours["__hash__"] = _hash(_getter(keys)) if frozen else None
    for name, attribute in ours.items():
        if name not in body:  # (a method written in the class body is kept, as dataclass does)
            if isinstance(attribute, FunctionType):
                attribute.__qualname__ = f"{qualname}.{name}"
            body[name] = attribute
    inherited = {name for base in cls.__mro__[1:-1] for name in _slots(base)}
    body.pop("__dict__", None)
    body.pop("__weakref__", None)
    body["__slots__"] = tuple(name for name in specs if name not in inherited)
    body["__qualname__"] = qualname
    body["__dataclass_fields__"] = specs
    body["__dataclass_params__"] = _Params(frozen)
    metaclass: Any = type(cls)
    made = metaclass(cls.__name__, cls.__bases__, body)
    init.cls = made
    if frozen:  # (the two name the class they guard, so they follow it)
        guards = _frozen(made, frozenset(specs))
        for name, method in zip(("__setattr__", "__delattr__"), guards, strict=True):
            if name not in body:
                method.__qualname__ = f"{qualname}.{name}"
                type.__setattr__(made, name, method)
    if not body.get("__doc__"):
        shown = str(_signature(made)).replace(" -> None", "")
        made.__doc__ = f"{made.__name__}{shown}"
    value: _C = made
    return value


_UNSUPPORTED = ("InitVar", "dataclasses.InitVar", "KW_ONLY", "dataclasses.KW_ONLY")
_SPECIAL = ("ClassVar", "typing.ClassVar", *_UNSUPPORTED)


def _fields(cls: type[Any], body: dict[str, Any], frozen: bool, kw_only: bool) -> dict[str, Any]:
    """``dataclass``'s fields of ``cls``: its dataclass bases' first, in MRO order, then one
    per annotated name of the body (whose default leaves the body: the slot takes its name)."""
    specs: dict[str, Field[Any]] = {}
    for base in cls.__mro__[-1:0:-1]:
        inherited = vars(base).get("__dataclass_fields__")
        if inherited is not None:
            if vars(base)["__dataclass_params__"].frozen != frozen:
                raise TypeError(f"{cls.__name__}: frozen={frozen}, unlike its dataclass bases")
            specs.update(inherited)
    for name, annotation in body.get("__annotations__", {}).items():
        shown = annotation if isinstance(annotation, str) else repr(annotation)
        if shown.startswith(_SPECIAL):  # (a string, as ``dataclass`` reads one: by its prefix)
            if shown.startswith(_UNSUPPORTED):
                raise TypeError(f"value_class does not support {shown}")
            continue  # a ClassVar
        default = body.pop(name, MISSING)
        spec: Field[Any] = (
            default if isinstance(default, Field) else dataclasses.field(default=default)
        )
        spec.name, spec.type, spec._field_type = name, annotation, _FIELD  # type: ignore[attr-defined]
        if spec.kw_only is MISSING:
            spec.kw_only = kw_only
        if spec.default is not MISSING and spec.default.__class__.__hash__ is None:
            raise ValueError(
                f"mutable default {type(spec.default)} for {name}: use default_factory"
            )
        specs[name] = spec
    stray = [name for name, value in body.items() if isinstance(value, Field)]
    if stray:
        raise TypeError(f"{stray[0]!r} is a field but has no type annotation")
    return specs


def _slots(base: type[Any]) -> tuple[str, ...]:
    slots = vars(base).get("__slots__", ())
    return (slots,) if isinstance(slots, str) else tuple(slots)


class _Params:
    """``__dataclass_params__``: the flags the class was made with (``dataclass`` reads
    ``frozen`` of a base)."""

    __slots__ = ("eq", "frozen", "init", "order", "repr", "unsafe_hash")

    def __init__(self, frozen: bool) -> None:
        self.init = self.repr = self.eq = True
        self.order = self.unsafe_hash = False
        self.frozen = frozen


def _signature(cls: type[Any]) -> Any:
    import inspect  # (only for a class without a docstring; none of the library's)

    return inspect.signature(cls)


class _InitOnFirstUse:
    """The class's ``__init__`` until anything reads it: the first construction, ``inspect``, or
    ``typing.get_type_hints`` makes the real one (``_init``), puts it on the class and hands
    it out, so from then on the class holds a plain function, as a dataclass does. Making one
    costs about 0.05M instructions (its source is written to find it in ``value_inits.py``):
    13 of the 31 value types a cold start defines are not built on its first request."""

    __slots__ = ("cls", "frozen", "specs")

    def __init__(self, specs: tuple[Field[Any], ...], frozen: bool) -> None:
        self.cls: type[Any] = object  # (the class, once made)
        self.specs, self.frozen = specs, frozen

    def __get__(self, instance: object, owner: type[Any] | None = None) -> Any:
        init = _init(self.cls, self.specs, self.frozen)
        type.__setattr__(self.cls, "__init__", init)
        return init if instance is None else init.__get__(instance, owner)


class _Factory:
    """The default of a ``default_factory`` parameter: ``<factory>``, as dataclass shows it."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


def _init(cls: type[Any], specs: tuple[Field[Any], ...], frozen: bool) -> Callable[..., None]:
    """The ``__init__`` ``dataclass`` writes for ``specs``: the same parameters, defaults,
    factories (called per instance) and ``__post_init__`` call. Its code comes from
    ``value_inits.py`` when that holds the same source, else it is compiled here."""
    source, scope = init_source(cls, specs, frozen)
    name = source[4 : source.index("(")]
    values = list(scope.values())
    make = getattr(value_inits, name, None)
    if make is None:
        exec(source, scope)
        make = scope[name]
    # Made over the class's module globals, as the dataclass's is, so that
    # ``typing.get_type_hints(cls.__init__)`` resolves the annotations where they were written.
    module = sys.modules.get(cls.__module__)
    init: Any = FunctionType(make.__code__, vars(module) if module else {})(*values)
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    taken = [f for f in specs if f.init]
    init.__annotations__ = {f.name: f.type for f in taken} | {"return": None}
    made: Callable[..., None] = init
    return made


def init_source(
    cls: type[Any], specs: tuple[Field[Any], ...], frozen: bool
) -> tuple[str, dict[str, Any]]:
    """The source of a function making ``cls``'s ``__init__`` from the defaults and factories
    (the dict, in the function's parameter order), named after the class and the source's
    checksum: ``value_inits.py`` holds those of the value types a chat client is made of."""
    taken = [f for f in specs if f.init]
    ordered = [f for f in taken if not f.kw_only] + [f for f in taken if f.kw_only]
    scope: dict[str, Any] = {"_set": object.__setattr__} if frozen else {}
    params, stores, follows_default = ["self"], [], False
    for spec in ordered:
        name = spec.name
        if spec.kw_only and "*" not in params:
            params.append("*")
        if spec.default is not MISSING:
            scope[f"_d_{name}"] = spec.default
            params.append(f"{name}=_d_{name}")
            stores.append((name, name))
        elif spec.default_factory is not MISSING:
            scope["_FACTORY"] = _FACTORY
            scope[f"_f_{name}"] = spec.default_factory
            params.append(f"{name}=_FACTORY")
            stores.append((name, f"_f_{name}() if {name} is _FACTORY else {name}"))
        elif follows_default and not spec.kw_only:
            raise TypeError(f"non-default argument {name!r} follows default argument")
        else:
            params.append(name)
            stores.append((name, name))
        follows_default = follows_default or params[-1] != name
    for spec in specs:  # a field left out of __init__ still gets its default
        if not spec.init and spec.default is not MISSING:
            scope[f"_d_{spec.name}"] = spec.default
            stores.append((spec.name, f"_d_{spec.name}"))
        elif not spec.init and spec.default_factory is not MISSING:
            scope[f"_f_{spec.name}"] = spec.default_factory
            stores.append((spec.name, f"_f_{spec.name}()"))
    store = "_set(self, {0!r}, {1})" if frozen else "self.{0} = {1}"
    statements = [store.format(field, value) for field, value in stores] or ["pass"]
    if hasattr(cls, "__post_init__"):
        statements.append("self.__post_init__()")
    body = (
        f"({', '.join(scope)}):\n"
        f"    def __init__({', '.join(params)}):\n"
        f"        {'; '.join(statements)}\n"
        "    return __init__\n"
    )
    return f"def _{cls.__name__}_{crc32(body.encode()):08x}{body}", scope


def _getter(names: list[str]) -> Callable[[Any], tuple[Any, ...]]:
    """The fields as the tuple ``dataclass`` compares and hashes (a tuple also for one field:
    ``(nan,) == (nan,)`` holds for the same object where ``nan == nan`` does not)."""
    if len(names) > 1:
        return attrgetter(*names)
    if not names:
        return lambda _: ()
    one = attrgetter(names[0])
    return lambda value: (one(value),)


def _eq(key: Callable[[Any], tuple[Any, ...]]) -> Callable[[Any, object], Any]:
    def __eq__(self: Any, other: object) -> Any:
        if other.__class__ is self.__class__:
            return key(self) == key(other)
        return NotImplemented

    return __eq__


def _hash(key: Callable[[Any], tuple[Any, ...]]) -> Callable[[Any], int]:
    def __hash__(self: Any) -> int:
        return hash(key(self))

    return __hash__


def _repr(names: list[str]) -> Callable[[Any], str]:
    running: set[tuple[int, int]] = set()  # a value inside itself is shown as "..."

    def __repr__(self: Any) -> str:
        key = (id(self), get_ident())
        if key in running:
            return "..."
        running.add(key)
        try:
            shown = ", ".join([f"{name}={getattr(self, name)!r}" for name in names])
        finally:
            running.discard(key)
        return f"{self.__class__.__qualname__}({shown})"

    return __repr__


def _frozen(cls: type[Any], names: frozenset[str]) -> tuple[Callable[..., None], ...]:
    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return __setattr__, __delattr__


def _getstate(names: tuple[str, ...]) -> Callable[[Any], list[Any]]:
    """Copying and pickling a frozen slotted value go through these two, as a dataclass's do
    (the default state would be restored with the ``__setattr__`` that refuses)."""

    def __getstate__(self: Any) -> list[Any]:
        return [getattr(self, name) for name in names]

    return __getstate__


def _setstate(names: tuple[str, ...]) -> Callable[[Any, list[Any]], None]:
    def __setstate__(self: Any, state: list[Any]) -> None:
        for name, value in zip(names, state, strict=False):
            object.__setattr__(self, name, value)

    return __setstate__
