"""``value_class``, ``Record`` and ``FrozenRecord``: value classes without ``@dataclass``'s
import cost.

``@dataclass`` writes each class's ``__init__``, ``__eq__``, ``__repr__`` (and, frozen,
``__hash__``, ``__setattr__``, ``__delattr__``) as source text and compiles it with ``exec``
every time the module is imported: about 110 µs a method, 0.9 ms a class and 1.2 to 1.5 ms a
frozen one in a cold CPython 3.11, some 18 ms over the twenty public value classes on the path
of the first request (issue 21's cold start). ``value_class`` keeps them real dataclasses
(``fields``, ``replace``, ``asdict``, ``__match_args__``) but registers them with method
generation off and installs methods made here from the fields, without compiling anything
(``tests/unit/test_value_classes.py`` holds each to its ``@dataclass`` twin).

A value class that nothing rebuilds with ``dataclasses.replace`` or inspects with
``dataclasses.fields`` is a record instead: its ``__init__`` is written out in its module (so
compiled once, into the bytecode cache), and equality, hashing and ``repr`` come from here,
read off ``__slots__`` (in field order), as the dataclass would have made them.
"""

from __future__ import annotations

import builtins
import copy
import dataclasses
import inspect
import sys
from _thread import get_ident
from collections.abc import Callable
from dataclasses import MISSING, Field, FrozenInstanceError
from operator import attrgetter
from types import FunctionType
from typing import Any, TypeVar, dataclass_transform, overload

__all__ = ["FrozenRecord", "Record", "value_class"]


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


# --- value classes: dataclasses' fields, without its compiled methods ------------------------

_FACTORY: Any = getattr(dataclasses, "_HAS_DEFAULT_FACTORY", MISSING)
"""The default ``inspect.signature`` shows for a ``default_factory`` field (``<factory>``): the
object a dataclass's own ``__init__`` carries, so the two signatures compare equal."""

_VALUE_CLASSES: list[type[Any]] = []
"""Every class ``value_class`` made, for the tests that compare each with its dataclass twin."""

_C = TypeVar("_C", bound=type[Any])


@overload
def value_class(cls: _C, /) -> _C: ...
@overload
def value_class(*, frozen: bool = False) -> Callable[[_C], _C]: ...
@dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field), frozen_default=False)
def value_class(cls: _C | None = None, /, *, frozen: bool = False) -> _C | Callable[[_C], _C]:
    """``@dataclass(slots=True, frozen=frozen)`` for some 0.15 ms a class at import, not 0.9 to 1.5.

    The class is a real dataclass (``fields``, ``replace``, ``asdict``, ``is_dataclass`` and
    ``__match_args__`` as before), registered with every method generation off; its methods are
    this module's, parametrised by the fields instead of compiled from text. An ``__init__``
    written in the class body is kept (one class built per streamed chunk has one, so its
    construction does not pay for the generic argument binding); ``__eq__``, ``__repr__`` and
    ``__hash__`` written there are kept too, as ``dataclass`` keeps them. Not supported (no
    class uses them): ``InitVar`` pseudo-fields, ``order``, ``unsafe_hash``.
    """

    def wrap(cls: _C) -> _C:
        return _make_value_class(cls, frozen)

    return wrap if cls is None else wrap(cls)


def _make_value_class(cls: _C, frozen: bool) -> _C:
    body = dict(cls.__dict__)
    if not body.get("__doc__"):
        cls.__doc__ = "-"  # (written below: dataclass would ask inspect, 2 ms, for the same)
    made: Any = dataclasses.dataclass(cls, init=False, repr=False, eq=False, slots=True)
    specs = dataclasses.fields(made)
    names = tuple(f.name for f in specs)
    qualname = made.__qualname__
    methods: dict[str, Any] = {
        "__eq__": _eq(_getter([f.name for f in specs if f.compare])),
        "__repr__": _repr([f.name for f in specs if f.repr]),
    }
    explicit_hash = body.get("__hash__", MISSING)
    if frozen:
        methods["__setattr__"], methods["__delattr__"] = _frozen(made, frozenset(names))
        methods["__getstate__"], methods["__setstate__"] = _getstate(names), _setstate(names)
    init: Any = body.get("__init__")
    if init is None:
        init = methods["__init__"] = _init(made, specs, frozen)
    for name, method in methods.items():
        if name not in body:
            method.__qualname__ = f"{qualname}.{name}"
            setattr(made, name, method)
    if explicit_hash is MISSING or (explicit_hash is None and "__eq__" in body):
        keys = [f.name for f in specs if (f.compare if f.hash is None else f.hash)]
        made.__hash__ = _hash(_getter(keys), qualname) if frozen else None
    parameters = _parameters(specs)
    init.__signature__ = inspect.Signature([_SELF, *parameters], return_annotation=None)
    if not body.get("__doc__"):
        shown = inspect.Signature(parameters, __validate_parameters__=False)
        made.__doc__ = f"{made.__name__}{shown}"
    params = copy.copy(made.__dataclass_params__)
    params.init = params.repr = params.eq = True
    params.frozen = frozen
    made.__dataclass_params__ = params
    _VALUE_CLASSES.append(made)
    value: _C = made
    return value


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


def _init(cls: type[Any], specs: tuple[Field[Any], ...], frozen: bool) -> Callable[..., None]:
    """The ``__init__`` ``dataclass`` would write for ``specs``: the same parameters, defaults,
    factories (called per instance), ``__post_init__`` call and ``TypeError`` messages."""
    taken = [f for f in specs if f.init]
    positional = [f for f in taken if not f.kw_only]
    follows_default = False
    for spec in positional:
        has_default = spec.default is not MISSING or spec.default_factory is not MISSING
        if follows_default and not has_default:
            raise TypeError(f"non-default argument {spec.name!r} follows default argument")
        follows_default = follows_default or has_default
    params = tuple(
        (f.name, f.default, f.default_factory) for f in positional + [f for f in taken if f.kw_only]
    )
    derived = tuple(
        (f.name, f.default, f.default_factory)
        for f in specs
        if not f.init and (f.default is not MISSING or f.default_factory is not MISSING)
    )
    qualname = f"{cls.__qualname__}.__init__"
    post_init = hasattr(cls, "__post_init__")
    made = _binder(qualname, params, len(positional), derived, frozen=frozen, post_init=post_init)
    # Rebuilt over the class's module globals, as the compiled one is, so that
    # ``typing.get_type_hints(cls.__init__)`` resolves the annotations where they were written.
    module = sys.modules.get(cls.__module__)
    scope = vars(module) if module is not None else {"__builtins__": builtins}
    init = FunctionType(made.__code__, scope, "__init__", None, made.__closure__)
    init.__annotations__ = {f.name: f.type for f in taken} | {"return": None}
    return init


def _binder(
    qualname: str,
    params: tuple[tuple[str, Any, Any], ...],
    npos: int,
    derived: tuple[tuple[str, Any, Any], ...],
    *,
    frozen: bool,
    post_init: bool,
) -> Callable[..., None]:
    """Hot path: the generic ``__init__``. Its code reads only its closure and builtins, so it
    can run over another module's globals (see ``_init``)."""
    positional = tuple(name for name, _, _ in params[:npos])
    rests = tuple(params[given:] for given in range(npos + 1))
    set_field = object.__setattr__ if frozen else setattr
    missing = MISSING
    error = _call_error

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        given = len(args)
        if given > npos:
            raise error(qualname, params, npos, args, kwargs)
        for name, value in zip(positional, args, strict=False):
            set_field(self, name, value)
        used = 0
        for name, default, factory in rests[given]:
            value = kwargs.get(name, missing)
            if value is missing:
                if default is not missing:
                    value = default
                elif factory is not missing:
                    value = factory()
                else:
                    raise error(qualname, params, npos, args, kwargs)
            else:
                used += 1
            set_field(self, name, value)
        if used != len(kwargs):
            raise error(qualname, params, npos, args, kwargs)
        for name, default, factory in derived:
            set_field(self, name, factory() if default is missing else default)
        if post_init:
            self.__post_init__()

    return __init__


def _call_error(
    qualname: str,
    params: tuple[tuple[str, Any, Any], ...],
    npos: int,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> TypeError:
    """The ``TypeError`` CPython raises for this call of the compiled ``__init__``, in the
    order it checks: keywords, then the positional count, then what is missing."""
    names = [name for name, _, _ in params]
    given = len(args)
    for key in kwargs:
        if key not in names:
            return TypeError(f"{qualname}() got an unexpected keyword argument {key!r}")
        if names.index(key) < min(given, npos):
            return TypeError(f"{qualname}() got multiple values for argument {key!r}")
    if given > npos:
        optional = sum(d is not MISSING or f is not MISSING for _, d, f in params[:npos])
        takes = f"from {npos + 1 - optional} to {npos + 1}" if optional else f"{npos + 1}"
        plural = "s" if optional or npos else ""
        kwonly = sum(names.index(key) >= npos for key in kwargs)
        also = f" positional arguments (and {kwonly} keyword-only argument" if kwonly else ""
        also += ("s)" if kwonly != 1 else ")") if kwonly else ""
        counted = f"{given + 1}{also}"
        return TypeError(
            f"{qualname}() takes {takes} positional argument{plural} but {counted} were given"
        )
    absent = [n for n, d, f in params[given:] if d is MISSING and f is MISSING and n not in kwargs]
    lacking = [name for name in absent if names.index(name) < npos]
    kind = "positional" if lacking else "keyword-only"
    lacking = lacking or absent
    quoted = [repr(name) for name in lacking]
    listed = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]
    if len(quoted) > 2:
        listed = ", ".join(quoted[:-1]) + ", and " + quoted[-1]
    plural = "s" if len(lacking) > 1 else ""
    return TypeError(
        f"{qualname}() missing {len(lacking)} required {kind} argument{plural}: {listed}"
    )


_SELF = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)


def _parameters(specs: tuple[Field[Any], ...]) -> list[inspect.Parameter]:
    """The parameters ``inspect.signature`` shows for the compiled ``__init__``, ``self`` aside."""
    kind = inspect.Parameter
    taken = [f for f in specs if f.init]
    params = []
    for spec in [f for f in taken if not f.kw_only] + [f for f in taken if f.kw_only]:
        default = spec.default
        if default is MISSING:
            default = kind.empty if spec.default_factory is MISSING else _FACTORY
        style = kind.KEYWORD_ONLY if spec.kw_only else kind.POSITIONAL_OR_KEYWORD
        params.append(kind(spec.name, style, default=default, annotation=spec.type))
    return params
