"""Every ``value_class`` behaves as the ``@dataclass(slots=True)`` it stands for.

Each class the decorator made (found by importing every module of the three packages) is held
to a twin that ``dataclasses.make_dataclass`` builds from the class's own fields, with the same
flags: signature, fields, equality, ``repr``, hashing, frozenness, ``replace``/``asdict``,
copying, pickling and the ``TypeError`` of a bad call must all come out the same. The samples
are picked by annotation, so a new field with a type this file does not know fails loudly.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
import inspect
import pickle
import pkgutil
import typing
from collections.abc import Callable
from dataclasses import FrozenInstanceError, field, fields
from types import FunctionType, MemberDescriptorType
from typing import Any

import pytest

from providers.abstractions.contents import TextContent
from providers.abstractions.errors import ConfigurationError
from providers.abstractions.messages import ChatMessage
from providers.abstractions.open_values import ChatFinishReason, ChatRole
from providers.abstractions.options import ChatResponseFormat, ChatToolMode, ToolDeclaration
from providers.abstractions.records import _VALUE_CLASSES, value_class
from providers.abstractions.usage import UsageDetails
from providers.transport.endpoint import Endpoint


@value_class()
class Flags:
    number: int
    names: list[str] = field(default_factory=list)
    derived: str = field(default="derived", init=False)
    hidden: str = field(default="h", repr=False, kw_only=True)
    ignored: int = field(default=0, compare=False)


@value_class(frozen=True)
class FrozenFlags:
    number: int
    unhashed: str = field(default="x", hash=False)
    hashed_only: int = field(default=0, compare=False, hash=True)
    later: tuple[str, ...] = field(default=(), kw_only=True)


def _import_everything() -> list[type[Any]]:
    for root in ("providers", "capabilities", "telemetry"):
        package = importlib.import_module(root)
        for info in pkgutil.walk_packages(package.__path__, f"{root}."):
            if info.name.endswith(".__main__"):
                continue
            try:
                importlib.import_module(info.name)
            except ModuleNotFoundError as exc:  # an integration whose framework is not installed
                if (exc.name or "").split(".")[0] in ("providers", "capabilities", "telemetry"):
                    raise
    return list(_VALUE_CLASSES)


CLASSES = _import_everything()

FROZEN = {"ToolDeclaration", "ChatResponseFormat", "Limits"}
FROZEN |= {"BackendProfile", "Endpoint", "Timeouts", "RetryPolicy"}
FLAGS = ("default", "default_factory", "init", "repr", "hash", "compare", "metadata", "kw_only")
OWNERS = (
    "providers.abstractions.contents providers.abstractions.options providers.abstractions.limits "
    "providers.abstractions.messages providers.abstractions.usage providers.backends "
    "providers.transport.endpoint providers.transport.timeouts providers.layers.retry "
    "providers.abstractions.chat_response"
)
"""Modules whose every dataclass is a value class."""

_SAMPLES: dict[str, tuple[Any, Any]] = {
    "int": (5, 7),
    "float": (1.5, 2.5),
    "str": ("a", "b"),
    "bool": (True, False),
    "bytes": (b"a", b"b"),
    "Any": ("a", {"k": [1]}),
    "dict[str, Any]": ({"k": 1}, {"k": 2}),
    "dict[str, int]": ({"k": 1}, {"k": 2}),
    "Mapping[str, Any]": ({"k": "v"}, {"k": "w"}),
    "Mapping[str, str]": ({"k": "v"}, {"k": "w"}),
    "list[str]": (["a"], ["b"]),
    "tuple[str, ...]": (("a",), ("b",)),
    "tuple[JsonSchemaField, ...]": (("json_schema",), ("structured_outputs",)),
    "TimingsKind": ("vllm", "sglang"),
    "UsageDetails": (UsageDetails(1), UsageDetails(2)),
    "list[AIContent]": ([TextContent("a")], [TextContent("b")]),
    "ChatRole": (ChatRole.USER, ChatRole.ASSISTANT),
    "ChatToolMode": (ChatToolMode.AUTO, ChatToolMode.REQUIRED),
    "ChatResponseFormat": (ChatResponseFormat.TEXT, ChatResponseFormat.JSON),
    "Sequence[ToolDeclaration | Mapping[str, Any]]": ([ToolDeclaration("f")], [{"f": 1}]),
    "list[ChatMessage]": ([ChatMessage(ChatRole.USER)], [ChatMessage(ChatRole.TOOL)]),
    "ChatFinishReason": (ChatFinishReason.STOP, ChatFinishReason.LENGTH),
    "frozenset[int]": (frozenset({500}), frozenset({502})),
}


def _samples(spec: dataclasses.Field[Any]) -> tuple[Any, Any]:
    annotation = str(spec.type).removesuffix(" | None")
    assert annotation in _SAMPLES, f"add a sample for {annotation!r} ({spec.name})"
    return _SAMPLES[annotation]


def _twin(cls: Any) -> type[Any]:
    """The class ``@dataclass`` makes from the same fields and flags."""
    specs = [(f.name, f.type, field(**{k: getattr(f, k) for k in FLAGS})) for f in fields(cls)]
    namespace: dict[str, Any] = {"__qualname__": cls.__qualname__, "__module__": cls.__module__}
    if hasattr(cls, "__post_init__"):
        namespace["__post_init__"] = cls.__post_init__
    frozen = cls.__dataclass_params__.frozen  # (held to FROZEN for the public classes)
    return dataclasses.make_dataclass(
        cls.__name__, specs, namespace=namespace, frozen=frozen, slots=True
    )


class Pair:
    """One class and its twin, with a base instance of each and one variant per field."""

    def __init__(self, cls: type[Any]) -> None:
        self.cls: Any = cls
        self.twin = _twin(cls)
        self.base = {
            f.name: _samples(f)[0]
            for f in fields(cls)
            if f.init and f.default is dataclasses.MISSING
            if f.default_factory is dataclasses.MISSING
        }
        self.variants: dict[str, dict[str, Any]] = {}
        for spec in fields(cls):
            if spec.init:
                current = self.build(cls).__getattribute__(spec.name)
                first, second = _samples(spec)
                self.variants[spec.name] = {
                    **self.base,
                    spec.name: second if first == current else first,
                }

    def build(self, kind: type[Any], **changes: Any) -> Any:
        return kind(**{**self.base, **changes})

    def both(self, **values: Any) -> tuple[Any, Any]:
        return self.cls(**values), self.twin(**values)


def _outcome(call: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, ...]:
    """What ``call(*args, **kwargs)`` does: the value, or the exception's type and message."""
    try:
        value = call(*args, **kwargs)
    except Exception as exc:
        return ("raises", type(exc), str(exc))
    return ("returns", value)


def _shown(cls: type[Any], *args: Any, **kwargs: Any) -> str:
    return repr(cls(*args, **kwargs))


PAIRS = [pytest.param(Pair(cls), id=cls.__qualname__) for cls in CLASSES]


def test_every_dataclass_of_the_converted_modules_is_a_value_class() -> None:
    made: dict[str, Any] = {cls.__name__: cls for cls in CLASSES}
    for module in map(importlib.import_module, OWNERS.split()):
        found = [c for c in vars(module).values() if isinstance(c, type)]
        classes = [c for c in found if c.__module__ == module.__name__]
        for cls in filter(dataclasses.is_dataclass, classes):
            assert made.get(cls.__name__) is cls, cls
            assert cls.__dataclass_params__.frozen == (cls.__name__ in FROZEN), cls
    assert len(made) >= 18


@pytest.mark.parametrize("pair", PAIRS)
def test_signature_fields_and_flags_are_the_dataclass_ones(pair: Pair) -> None:
    cls, twin = pair.cls, pair.twin
    assert inspect.signature(cls) == inspect.signature(twin)
    assert str(inspect.signature(cls)) == str(inspect.signature(twin))
    assert inspect.signature(cls.__init__) == inspect.signature(twin.__init__)
    assert cls.__match_args__ == twin.__match_args__
    assert dataclasses.is_dataclass(pair.cls)
    assert [[getattr(f, k) for k in ("name", "type", *FLAGS)] for f in fields(cls)] == [
        [getattr(f, k) for k in ("name", "type", *FLAGS)] for f in fields(twin)
    ]
    flags = ("init", "repr", "eq", "order", "unsafe_hash", "frozen")
    assert [getattr(cls.__dataclass_params__, f) for f in flags] == [
        getattr(twin.__dataclass_params__, f) for f in flags
    ]
    slots = {name for kind in cls.__mro__ for name in kind.__dict__.get("__slots__", ())}
    assert slots == set(twin.__slots__)
    assert not hasattr(pair.build(cls), "__dict__")
    if (cls.__doc__ or "").startswith(f"{cls.__name__}("):
        assert cls.__doc__ == twin.__doc__


@pytest.mark.parametrize("pair", PAIRS)
def test_a_written_out_init_takes_the_dataclass_parameters(pair: Pair) -> None:
    """``__signature__`` shows the dataclass's parameters whatever the code takes, so the code's
    own parameters are read here: a hand-written ``__init__`` must match them exactly."""
    init = pair.cls.__init__
    if init.__code__.co_flags & inspect.CO_VARARGS:  # the generic one: behaviour tests it
        return

    def code_signature(function: Any) -> list[tuple[str, Any, Any, str]]:
        bare = FunctionType(function.__code__, function.__globals__, "f", function.__defaults__)
        bare.__kwdefaults__ = function.__kwdefaults__
        found = inspect.signature(bare).parameters.values()
        return [(p.name, p.kind, p.default, str(p.annotation)) for p in found]

    assert code_signature(init) == code_signature(pair.twin.__init__)


@pytest.mark.parametrize("pair", PAIRS)
def test_equality_hash_and_repr_are_the_dataclass_ones(pair: Pair) -> None:
    ours, twin = pair.build(pair.cls), pair.build(pair.twin)
    assert repr(ours) == repr(twin)
    assert _outcome(hash, ours) == _outcome(hash, twin)
    assert ours == pair.build(pair.cls)
    assert not ours != pair.build(pair.cls)  # noqa: SIM202 - __ne__ is what is checked
    assert ours != twin
    assert twin != ours
    for name, values in pair.variants.items():
        other, other_twin = pair.both(**values)
        assert (ours == other) == (twin == other_twin), name
        assert (ours != other) == (twin != other_twin), name
        assert repr(other) == repr(other_twin), name
        assert _outcome(hash, other) == _outcome(hash, other_twin), name


@pytest.mark.parametrize("pair", PAIRS)
def test_frozen_classes_refuse_assignment_and_the_others_take_it(pair: Pair) -> None:
    ours, twin = pair.build(pair.cls), pair.build(pair.twin)
    for name, values in pair.variants.items():
        value = values[name]
        assert _outcome(setattr, ours, name, value) == _outcome(setattr, twin, name, value)
        # (a property a module puts over a slot, as ChatResponse.raw, has its own rules)
        if type(inspect.getattr_static(pair.cls, name)) is MemberDescriptorType:
            assert _outcome(delattr, ours, name) == _outcome(delattr, twin, name)
    if pair.cls.__dataclass_params__.frozen:
        # (CPython 3.11's own frozen slotted dataclass raises a TypeError from its super() here)
        with pytest.raises(FrozenInstanceError):
            ours.not_a_field = 1


@pytest.mark.parametrize("pair", PAIRS)
def test_replace_asdict_copy_and_pickle_work_as_on_the_dataclass(pair: Pair) -> None:
    ours, twin = pair.build(pair.cls), pair.build(pair.twin)
    assert dataclasses.asdict(ours) == dataclasses.asdict(twin)
    assert dataclasses.astuple(ours) == dataclasses.astuple(twin)
    assert _outcome(ours.__getstate__) == _outcome(twin.__getstate__)
    for name, values in pair.variants.items():
        changed = dataclasses.replace(ours, **{name: values[name]})
        assert repr(changed) == repr(dataclasses.replace(twin, **{name: values[name]}))
    for copied in (copy.copy(ours), copy.deepcopy(ours)):
        assert copied is not ours
        assert type(copied) is pair.cls
        assert copied == ours  # (not compared by repr: a copied set may iterate differently)
    for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
        loaded = pickle.loads(pickle.dumps(ours, protocol))
        assert type(loaded) is pair.cls
        assert loaded == ours


@pytest.mark.parametrize("pair", PAIRS)
def test_bad_calls_raise_the_dataclass_type_errors(pair: Pair) -> None:
    parameters = list(inspect.signature(pair.twin).parameters.values())
    positional = [p for p in parameters if p.kind is p.POSITIONAL_OR_KEYWORD]
    base = pair.base
    first = positional[0].name if positional else None
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
        ((), {}),
        ((), {**base, "not_a_field": 1}),
        (tuple(range(len(positional) + 1)), {}),
        (
            tuple(range(len(positional) + 1)),
            {p.name: 1 for p in parameters if p.kind is p.KEYWORD_ONLY},
        ),
    ]
    if first is not None:
        calls.append(((base.get(first, 1),), {first: 1}))
        calls.append((tuple(base[p.name] for p in positional if p.name in base), {}))
    for args, kwargs in calls:
        ours = _outcome(_shown, pair.cls, *args, **kwargs)
        assert ours == _outcome(_shown, pair.twin, *args, **kwargs), (args, kwargs)


def test_post_init_runs_as_the_dataclass_s_did() -> None:
    from providers.abstractions.limits import Limits
    from providers.transport.timeouts import Timeouts

    message = ChatMessage("user", "text")  # type: ignore[arg-type]
    assert message.contents == [TextContent("text")]
    assert type(message.role) is ChatRole
    with pytest.raises(ConfigurationError, match="max_tool_calls"):
        Limits(max_tool_calls=0)
    with pytest.raises(ConfigurationError, match="idle"):
        Timeouts(idle=-1)
    calls: list[tuple[type[Any], tuple[Any, ...], dict[str, Any]]] = [
        (ChatMessage, ("user", "text"), {}),
        (ChatMessage, ("tool",), {"contents": [TextContent("x")]}),
        (Limits, (True,), {}),
        (Limits, (), {"max_json_depth": 0}),
        (Limits, (1, 2), {}),
        (Timeouts, (0,), {}),
        (Timeouts, (None, 1.5), {"total": "x"}),
    ]
    for cls, args, kwargs in calls:
        ours = _outcome(_shown, cls, *args, **kwargs)
        assert ours == _outcome(_shown, _twin(cls), *args, **kwargs), (cls, args, kwargs)


def test_a_password_never_reaches_the_repr() -> None:
    endpoint = Endpoint.from_base_url("http://someone:hunter2@host/v1")
    assert endpoint.password == "hunter2"
    assert "hunter2" not in repr(endpoint)
    assert "hunter2" not in str(dataclasses.replace(endpoint, api_base="http://h/v1"))


def test_a_value_inside_itself_is_shown_as_an_ellipsis() -> None:
    message = ChatMessage(ChatRole.USER, [])
    message.contents.append(message)  # type: ignore[arg-type]
    shown = "role=ChatRole('user'), contents=[...], author_name=None, message_id=None"
    assert repr(message) == f"ChatMessage({shown}, additional_properties=None)"


def test_a_factory_runs_per_instance_and_a_non_init_field_gets_its_default() -> None:
    first, second = Flags(1), Flags(1)
    assert first.names == [] and first.names is not second.names
    assert first.derived == "derived"
    assert (
        Flags.__doc__
        == _twin(Flags).__doc__
        == (
            "Flags(number: 'int', names: 'list[str]' = <factory>, ignored: 'int' = 0, "
            "*, hidden: 'str' = 'h')"
        )
    )


def test_an_undocumented_class_gets_the_dataclass_docstring() -> None:
    from providers.backends import BackendProfile

    for cls in (Endpoint, BackendProfile):
        assert cls.__doc__ == _twin(cls).__doc__
        assert (cls.__doc__ or "").startswith(f"{cls.__name__}(")


def test_methods_written_in_the_class_are_kept_as_dataclass_keeps_them() -> None:
    @value_class(frozen=True)
    class OwnHash:
        number: int

        def __hash__(self) -> int:
            return 42

    @value_class()
    class OwnEq:  # noqa: PLW1641 - unhashable, as the dataclass makes it
        number: int

        def __eq__(self, other: object) -> bool:
            return True

        def __repr__(self) -> str:
            return "mine"

    assert hash(OwnHash(1)) == 42
    assert OwnEq(1) == OwnEq(2)
    assert repr(OwnEq(1)) == "mine"
    assert OwnEq.__hash__ is None


def test_a_field_without_default_after_one_with_is_refused_as_by_dataclass() -> None:
    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):

        @value_class()
        class Wrong:
            a: int = 0
            b: int  # type: ignore[misc]


@pytest.mark.parametrize("pair", PAIRS)
def test_the_init_annotations_resolve_as_the_dataclass_s_do(pair: Pair) -> None:
    expected = {f.name: f.type for f in fields(pair.cls) if f.init}
    hints = typing.get_type_hints(pair.cls)
    resolved = typing.get_type_hints(pair.cls.__init__)
    assert resolved == {name: hints[name] for name in expected} | {"return": type(None)}
