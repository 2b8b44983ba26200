"""``value_class``: the library's one value-type idiom, a ``@dataclass(slots=True)`` that compiles
only its ``__init__``.

Every value type of the library is one: contents, messages, options, responses, usage, limits,
endpoints, backend rows, retry decisions, timings and telemetry records (the one deliberate
exception is ``ChatResponseUpdate``, the object built per streamed chunk, whose slots its own
module explains). The class is a real slotted dataclass: ``fields``, ``replace``, ``asdict``,
``copy``, ``pickle`` and ``__match_args__`` work, and ``frozen=True`` refuses assignment with
``FrozenInstanceError``. ``tests/unit/providers/abstractions/test_value_classes.py`` checks
all of it.

Why not ``@dataclass`` itself: on CPython 3.11 it writes each method as source text and compiles
it with ``exec`` when the module is imported, about 0.1 ms a method: three methods a class, six
frozen, 126 compilations for the 28 value types a cold start defines before its first answer.
Measured on the first request (``benchmarks/cold_import.py``'s probe: a fresh interpreter from
its first import to the first streamed answer, counted by valgrind, so the load of the machine
does not move it): plain ``@dataclass`` 820M instructions, ``value_class`` compiling every
``__init__`` when its class is made 762M, compiling each on first use (``_CompiledOnFirstUse``:
15 of the value types are built on a first request) 757M, the four idioms it replaced (a
generic ``__init__``, hand-written records and ``__init__``s) 740M.
Here only ``__init__`` is compiled, so construction runs the same stores a hand-written one
would (``TextContent("x")`` as fast as before); ``__eq__``, ``__repr__``, ``__hash__`` and the
frozen ``__setattr__`` are shared functions parametrised by the field names, which nothing on
the hot path calls. Methods written in the class body are kept, as ``dataclass`` keeps them.
Not supported (no class uses them): ``InitVar`` pseudo-fields, ``order``, ``unsafe_hash``.
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

__all__ = ["value_class"]

_C = TypeVar("_C", bound=type[Any])


@overload
def value_class(cls: _C, /) -> _C: ...
@overload
def value_class(*, frozen: bool = False, kw_only: bool = False) -> Callable[[_C], _C]: ...
@dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field))
def value_class(
    cls: _C | None = None, /, *, frozen: bool = False, kw_only: bool = False
) -> _C | Callable[[_C], _C]:
    """``@dataclass(slots=True, frozen=frozen, kw_only=kw_only)``, compiling only ``__init__``."""

    def wrap(cls: _C) -> _C:
        return _make(cls, frozen, kw_only)

    return wrap if cls is None else wrap(cls)


def _make(cls: _C, frozen: bool, kw_only: bool) -> _C:
    body = dict(cls.__dict__)
    # A dataclass is frozen exactly when its dataclass bases are. ``dataclass`` told ``frozen``
    # would compile its own ``__setattr__`` and ``__delattr__``: told only where a base is (it
    # checks the bases' flag, which ``_make`` sets below).
    spaces = [vars(base) for base in cls.__mro__[1:]]
    bases = [
        space["__dataclass_params__"].frozen for space in spaces if "__dataclass_params__" in space
    ]
    if any(base != frozen for base in bases):
        raise TypeError(f"{cls.__name__}: frozen={frozen}, unlike its dataclass bases")
    made: Any = dataclasses.dataclass(
        cls, init=False, repr=False, eq=False, slots=True, kw_only=kw_only, frozen=any(bases)
    )
    specs = dataclasses.fields(made)
    methods: dict[str, Any] = {
        "__eq__": _eq(_getter([f.name for f in specs if f.compare])),
        "__repr__": _repr([f.name for f in specs if f.repr]),
    }
    if frozen:
        names = tuple(f.name for f in specs)
        methods["__setattr__"], methods["__delattr__"] = _frozen(made, frozenset(names))
        methods["__getstate__"], methods["__setstate__"] = _getstate(names), _setstate(names)
    for name, method in methods.items():
        if name not in body:
            method.__qualname__ = f"{made.__qualname__}.{name}"
            setattr(made, name, method)
    if "__init__" not in body:
        made.__init__ = _CompiledOnFirstUse(made, specs, frozen)
    explicit_hash = body.get("__hash__", MISSING)
    if explicit_hash is MISSING or (explicit_hash is None and "__eq__" in body):
        keys = [f.name for f in specs if (f.compare if f.hash is None else f.hash)]
        made.__hash__ = _hash(_getter(keys), made.__qualname__) if frozen else None
    if not body.get("__doc__"):  # (dataclass read the signature before __init__ was made)
        shown = str(_signature(made)).replace(" -> None", "")
        made.__doc__ = f"{made.__name__}{shown}"
    params = made.__dataclass_params__
    params.init = params.repr = params.eq = True
    params.frozen = frozen
    value: _C = made
    return value


def _signature(cls: type[Any]) -> Any:
    import inspect  # (only for a class without a docstring; none of the library's)

    return inspect.signature(cls)


class _CompiledOnFirstUse:
    """The class's ``__init__`` until anything reads it: the first construction, ``inspect``, or
    ``typing.get_type_hints`` compiles the real one (``_init``), puts it on the class and hands
    it out, so from then on the class holds a plain function, as a dataclass does. Compiling is
    most of what defining a value type costs (about 0.8M instructions, ``exec`` of its source),
    and a cold start defines types it never builds."""

    __slots__ = ("cls", "frozen", "specs")

    def __init__(self, cls: type[Any], specs: tuple[Field[Any], ...], frozen: bool) -> None:
        self.cls, self.specs, self.frozen = cls, specs, frozen

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
    """The ``__init__`` ``dataclass`` writes for ``specs``, compiled once: the same parameters,
    defaults, factories (called per instance) and ``__post_init__`` call."""
    taken = [f for f in specs if f.init]
    ordered = [f for f in taken if not f.kw_only] + [f for f in taken if f.kw_only]
    scope: dict[str, Any] = {"_FACTORY": _FACTORY, "_set": object.__setattr__}
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
    names = list(scope)
    source = (
        f"def __make__({', '.join(names)}):\n"
        f" def __init__({', '.join(params)}):\n"
        + "".join(f"  {statement}\n" for statement in statements)
        + " return __init__\n"
    )
    exec(source, scope)
    made: Any = scope["__make__"](*[scope[name] for name in names])
    # Rebuilt over the class's module globals, as the dataclass's is, so that
    # ``typing.get_type_hints(cls.__init__)`` resolves the annotations where they were written.
    module = sys.modules.get(cls.__module__)
    qualname = f"{cls.__qualname__}.__init__"
    code = made.__code__.replace(co_qualname=qualname)
    init = FunctionType(code, vars(module) if module else {}, "__init__", None, made.__closure__)
    init.__defaults__, init.__kwdefaults__ = made.__defaults__, made.__kwdefaults__
    init.__annotations__ = {f.name: f.type for f in ordered} | {"return": None}
    return init


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


def _hash(key: Callable[[Any], tuple[Any, ...]], qualname: str) -> Callable[[Any], int]:
    def __hash__(self: Any) -> int:
        return hash(key(self))

    __hash__.__qualname__ = f"{qualname}.__hash__"
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
