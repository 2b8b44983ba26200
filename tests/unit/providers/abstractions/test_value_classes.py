"""Every value type of the library is made by ``value_class`` (``abstractions/records.py``).

Each public value type is a real slotted dataclass, frozen exactly where it should be, so
``dataclasses.fields``, ``replace``, ``asdict``, ``copy`` and ``pickle`` work on every one of them
(the classes once written as hand-made records had lost them). A guard keeps a new class from
writing its own equality instead: outside dataclasses, only the two deliberate exceptions do.
``ChatResponseUpdate`` is one: the object built per streamed chunk, with its own slots and
constructors (``providers/abstractions/response_update.py`` says why). ``OpenValue`` is the
other: a string compared case-insensitively, not a record of fields.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
import inspect
import pickle
import pkgutil
from dataclasses import FrozenInstanceError, field, fields
from pathlib import Path
from typing import Any

import pytest

from providers.abstractions import value_inits
from providers.abstractions.contents import TextContent
from providers.abstractions.embeddings import EmbeddingVector
from providers.abstractions.messages import ChatMessage
from providers.abstractions.open_values import ChatFinishReason, ChatRole, OpenValue
from providers.abstractions.options import ChatResponseFormat, ChatToolMode, ToolDeclaration
from providers.abstractions.reasoning_options import (
    ReasoningEffort,
    ReasoningOptions,
    ReasoningOutput,
)
from providers.abstractions.records import value_class
from providers.abstractions.response_update import ChatResponseUpdate
from providers.abstractions.usage import UsageDetails
from providers.transport.endpoint import Endpoint
from telemetry.timings import ClientTimings, RequestTimings, ServerTimings

PACKAGES = ("providers", "capabilities", "telemetry")
ROOT = Path(__file__).resolve().parents[4]

MUTABLE = {
    "providers.abstractions.chat_response": "ChatResponse",
    "providers.abstractions.contents": (
        "AIContent TextContent TextReasoningContent FunctionCallContent FunctionResultContent "
        "DataContent UriContent ErrorContent UsageContent"
    ),
    "providers.abstractions.messages": "ChatMessage",
    "providers.abstractions.options": "ChatOptions",
    "providers.abstractions.usage": "UsageDetails",
    "providers.transport.sse": "ServerSentEvent",
}
FROZEN = {
    "providers.abstractions.limits": "Limits",
    "providers.abstractions.options": "ToolDeclaration ChatResponseFormat",
    "providers.abstractions.usage": "UsageNames",
    "providers.backends": "BackendProfile",
    "providers.layers.retry": "RetryPolicy",
    "providers.layers.retry_decision": "RetryDecision",
    "providers.transport.endpoint": "Endpoint",
    "providers.transport.timeouts": "Timeouts",
    "telemetry.recorder": "RequestRecord",
    "telemetry.timings": "ServerTimings ClientTimings RequestTimings",
    "telemetry.extractors": "BackendTimingsExtractor",
}
"""The public value types (by the module that exports them), mutable and frozen."""

OWN_EQUALITY: set[type[Any]] = {ChatResponseUpdate, OpenValue, EmbeddingVector}
"""The classes that may define ``__eq__`` without being dataclasses (the module docstring;
``EmbeddingVector`` is a sequence of floats compared as a list is, not a record)."""

PLAIN_DATACLASSES = {"providers.integrations.pydantic_ai.model._Stream"}
"""Dataclasses ``value_class`` does not make: ``_Stream`` extends pydantic-ai's own (unslotted)
dataclass ``StreamedResponse``, so it is whatever that base is."""


def _named(table: dict[str, str]) -> list[type[Any]]:
    module_names = ((importlib.import_module(m), names.split()) for m, names in table.items())
    return [getattr(module, name) for module, names in module_names for name in names]


def _id(value: Any) -> str:
    return value.__name__ if isinstance(value, type) else ("frozen" if value else "mutable")


VALUE_TYPES = [(cls, False) for cls in _named(MUTABLE)] + [(cls, True) for cls in _named(FROZEN)]


def _every_class() -> list[type[Any]]:
    """Every class defined in the three packages (an integration whose framework is not
    installed is skipped)."""
    found: dict[int, type[Any]] = {}
    for root in PACKAGES:
        package = importlib.import_module(root)
        for info in pkgutil.walk_packages(package.__path__, f"{root}."):
            if info.name.endswith(".__main__"):
                continue
            try:
                module = importlib.import_module(info.name)
            except ModuleNotFoundError as exc:
                if (exc.name or "").split(".")[0] in PACKAGES:
                    raise
                continue
            for value in vars(module).values():
                if isinstance(value, type) and value.__module__ == info.name:
                    found[id(value)] = value
    return list(found.values())


def test_no_class_writes_its_own_equality_outside_dataclasses() -> None:
    """A value type is a dataclass: a hand-made record (slots, ``__init__`` and ``__eq__``
    written out) would be a second idiom, without ``fields``/``replace``/``asdict``."""
    written = {
        cls
        for cls in _every_class()
        if _ours(cls.__dict__.get("__eq__")) and not dataclasses.is_dataclass(cls)
    }
    assert written == OWN_EQUALITY


def test_every_dataclass_of_the_library_is_a_value_class() -> None:
    """One idiom: a value type is declared with ``value_class``, whose ``__eq__`` is its own."""
    shared = value_class(type("Probe", (), {"__doc__": "-"})).__eq__.__code__
    plain = {
        f"{cls.__module__}.{cls.__qualname__}"
        for cls in _every_class()
        if dataclasses.is_dataclass(cls) and cls.__eq__.__code__ is not shared
    }
    assert plain == PLAIN_DATACLASSES


def _ours(method: Any) -> bool:
    """Whether ``method`` is written in this repository (not inherited from a framework's base,
    as pydantic-ai's ``Model`` hands its ``__eq__`` to ``OaicompatModel``)."""
    code = getattr(method, "__code__", None)
    # (by package folder, not by the checkout: CI's virtualenv lives inside the checkout)
    return (
        code is not None
        and Path(code.co_filename).is_relative_to(ROOT)
        and (Path(code.co_filename).relative_to(ROOT).parts[0] in PACKAGES)
    )


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
    "tuple[str, str]": (("a", "b"), ("c", "d")),
    "tuple[tuple[str, ...], ...]": ((("a",),), (("b", "c"),)),
    "tuple[tuple[str, str], ...]": ((("a", "b"),), (("c", "d"),)),
    "ReasoningEffort": (ReasoningEffort.NONE, ReasoningEffort.HIGH),
    "ReasoningOutput": (ReasoningOutput.NONE, ReasoningOutput.FULL),
    "ReasoningOptions": (
        ReasoningOptions(ReasoningEffort.LOW),
        ReasoningOptions(output=ReasoningOutput.NONE),
    ),
    "tuple[JsonSchemaField, ...]": (("json_schema",), ("structured_outputs",)),
    "TimingsKind": ("vllm", "sglang"),
    "EmbeddingEncoding": ("base64", "float"),
    "RequestStatus": ("ok", "error"),
    "BaseException": (ValueError("a"), KeyError("b")),
    "UsageDetails": (UsageDetails(1), UsageDetails(2)),
    "list[AIContent]": ([TextContent("a")], [TextContent("b")]),
    "ChatRole": (ChatRole.USER, ChatRole.ASSISTANT),
    "ChatToolMode": (ChatToolMode.AUTO, ChatToolMode.REQUIRED),
    "ChatResponseFormat": (ChatResponseFormat.TEXT, ChatResponseFormat.JSON),
    "Sequence[ToolDeclaration | Mapping[str, Any] | Callable[..., Any]]": (
        [ToolDeclaration("f")],
        [{"type": "function", "function": {"name": "g"}}],
    ),
    "list[ChatMessage]": ([ChatMessage(ChatRole.USER)], [ChatMessage(ChatRole.TOOL)]),
    "ChatFinishReason": (ChatFinishReason.STOP, ChatFinishReason.LENGTH),
    "frozenset[int]": (frozenset({500}), frozenset({502})),
    "ClientTimings": (ClientTimings(1.0, 2.0, 3.0), ClientTimings(1.0, 2.0, 4.0)),
    "ServerTimings": (ServerTimings("vllm", 3), ServerTimings("sglang", 4)),
    "RequestTimings": (
        RequestTimings("vllm", True, ClientTimings(1.0, 2.0, 3.0)),
        RequestTimings("vllm", False, ClientTimings(1.0, 2.0, 3.0)),
    ),
}


def _samples(spec: dataclasses.Field[Any]) -> tuple[Any, Any]:
    annotation = str(spec.type).removesuffix(" | None")
    assert annotation in _SAMPLES, f"add a sample for {annotation!r} ({spec.name})"
    return _SAMPLES[annotation]


def _example(cls: type[Any]) -> Any:
    """An instance with every required field set from its samples."""
    required = [f for f in fields(cls) if f.init and f.default is dataclasses.MISSING]
    return cls(
        **{f.name: _samples(f)[0] for f in required if f.default_factory is dataclasses.MISSING}
    )


@pytest.mark.parametrize(("cls", "frozen"), VALUE_TYPES, ids=_id)
def test_each_value_type_is_a_slotted_dataclass_frozen_where_it_should_be(
    cls: type[Any], frozen: bool
) -> None:
    assert dataclasses.is_dataclass(cls)
    assert cls.__dataclass_params__.frozen is frozen  # type: ignore[attr-defined]
    value = _example(cls)
    assert not hasattr(value, "__dict__")  # slotted, as far as the base classes go
    name = fields(cls)[-1].name
    other = _samples(fields(cls)[-1])
    if frozen:
        with pytest.raises(FrozenInstanceError):
            setattr(value, name, other[1])
        if not _unhashable_field(value):  # (a frozen record holding a list is not hashable)
            assert hash(value) == hash(_example(cls))
    else:
        setattr(value, name, other[1])
        assert getattr(value, name) == other[1]
        with pytest.raises(TypeError):
            hash(value)


def _unhashable_field(value: Any) -> bool:
    try:
        hash(dataclasses.astuple(value))
    except TypeError:
        return True
    return False


@pytest.mark.parametrize(("cls", "frozen"), VALUE_TYPES, ids=_id)
def test_fields_replace_asdict_copy_and_pickle_work(cls: type[Any], frozen: bool) -> None:
    value = _example(cls)
    assert value == _example(cls)
    assert list(dataclasses.asdict(value)) == [f.name for f in fields(cls)]
    for spec in fields(cls):
        if not spec.init:
            continue
        first, second = _samples(spec)
        changed = dataclasses.replace(value, **{spec.name: second})
        assert getattr(changed, spec.name) == second
        assert (changed == value) is (not spec.compare or getattr(value, spec.name) == second)
        assert dataclasses.replace(changed, **{spec.name: first}) == dataclasses.replace(
            value, **{spec.name: first}
        )
    for copied in (copy.copy(value), copy.deepcopy(value)):
        assert copied is not value
        assert type(copied) is cls
        assert copied == value
    for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
        loaded = pickle.loads(pickle.dumps(value, protocol))
        assert type(loaded) is cls
        assert loaded == value or _holds_exception(value)
    assert repr(value).startswith(f"{cls.__qualname__}(")


def _holds_exception(value: Any) -> bool:
    """An exception compares by identity, so a copied record holding one is a different value."""
    return any(isinstance(getattr(value, f.name), BaseException) for f in fields(value))


def test_the_timings_records_serialise_and_rebuild() -> None:
    client = ClientTimings(
        10.0, 10.5, 12.0, first_token=11.0, last_token=11.5, substantive_updates=3
    )
    server = ServerTimings("llamacpp", output_tokens=5, prompt_ms=40.0, predicted_per_second=9.0)
    timings = RequestTimings("llamacpp", True, client, server)
    assert timings.to_dict() == {
        "ttft_ms_client": 500.0,
        "e2e_ms_client": 1500.0,
        "mean_inter_token_gap_ms_client": 250.0,
        "output_tokens_per_second_client": 8.0,
        "prompt_ms_server": 40.0,
        "predicted_per_second_server": 9.0,
    }
    slower = dataclasses.replace(timings, client=dataclasses.replace(client, last_token=12.0))
    assert slower.to_dict()["output_tokens_per_second_client"] == 4.0
    assert dataclasses.asdict(timings)["server"]["prompt_ms"] == 40.0


def test_a_password_never_reaches_the_repr() -> None:
    endpoint = Endpoint.from_base_url("http://someone:hunter2@host/v1")
    assert endpoint.password == "hunter2"
    assert "hunter2" not in repr(endpoint)
    assert "hunter2" not in str(dataclasses.replace(endpoint, api_base="http://h/v1"))


@pytest.mark.parametrize(("cls", "frozen"), VALUE_TYPES, ids=_id)
def test_the_init_is_the_generated_one(cls: type[Any], frozen: bool) -> None:
    """No value type writes its ``__init__`` out (``value_class`` keeps one written in the class
    body, as ``dataclass`` does): the generated one is as quick to call, and its parameters are
    the fields."""
    assert cls.__init__.__code__.co_filename == value_inits.__file__  # (test_value_inits.py)
    parameters = list(inspect.signature(cls).parameters)
    taken = [f for f in fields(cls) if f.init]
    assert parameters == [f.name for f in taken if not f.kw_only] + [
        f.name for f in taken if f.kw_only
    ]


# --- value_class against the dataclass it stands for -------------------------------------------


@value_class()
class Flags:
    """Every field option a value class may use."""

    number: int
    names: list[str] = field(default_factory=list)
    derived: str = field(default="derived", init=False)
    hidden: str = field(default="h", repr=False, kw_only=True)
    ignored: int = field(default=0, compare=False)


@value_class(frozen=True)
class FrozenFlags:
    """The frozen counterpart, hashed by the fields that take part."""

    number: int
    unhashed: str = field(default="x", hash=False)
    later: tuple[str, ...] = field(default=(), kw_only=True)


FLAGS = ("default", "default_factory", "init", "repr", "hash", "compare", "kw_only")


def _twin(cls: Any) -> Any:
    """The class ``@dataclass`` makes from the same fields and flags."""
    specs = [(f.name, f.type, field(**{k: getattr(f, k) for k in FLAGS})) for f in fields(cls)]
    namespace: dict[str, Any] = {"__qualname__": cls.__qualname__, "__module__": cls.__module__}
    if hasattr(cls, "__post_init__"):
        namespace["__post_init__"] = cls.__post_init__
    frozen = cls.__dataclass_params__.frozen
    return dataclasses.make_dataclass(
        cls.__name__, specs, namespace=namespace, frozen=frozen, slots=True
    )


def _outcome(call: Any, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
    try:
        value = call(*args, **kwargs)
    except Exception as exc:
        return ("raises", type(exc), str(exc))
    return ("returns", repr(value))


@pytest.mark.parametrize(
    "cls",
    [Flags, FrozenFlags, *(cls for cls, _ in VALUE_TYPES)],
    ids=lambda cls: cls.__qualname__,
)
def test_signature_repr_equality_and_bad_calls_are_the_dataclass_ones(cls: Any) -> None:
    twin = _twin(cls)
    assert str(inspect.signature(cls)) == str(inspect.signature(twin))
    assert cls.__match_args__ == twin.__match_args__
    ours, theirs = _example(cls), _example(twin)
    assert repr(ours) == repr(theirs)
    assert _outcome(hash, ours)[0] == _outcome(hash, theirs)[0]
    positional = [
        p for p in inspect.signature(twin).parameters.values() if p.kind is p.POSITIONAL_OR_KEYWORD
    ]
    for args, kwargs in [
        ((), {}),
        ((), {"not_a_field": 1}),
        (tuple(range(len(positional) + 1)), {}),
    ]:
        assert _outcome(cls, *args, **kwargs) == _outcome(twin, *args, **kwargs), (args, kwargs)


def test_factories_run_per_instance_and_a_field_out_of_init_gets_its_default() -> None:
    first, second = Flags(1), Flags(1)
    assert first.names == [] and first.names is not second.names
    assert first.derived == "derived"
    assert first == Flags(1, ignored=5)  # (not compared)
    assert hash(FrozenFlags(1, "a")) == hash(FrozenFlags(1, "b"))  # (not hashed)


def test_frozenness_follows_the_bases_as_in_dataclass() -> None:
    @value_class(frozen=True)
    class Child(FrozenFlags):
        """Frozen like its base."""

        extra: int = 0

    child = Child(1, extra=2)
    assert child.extra == 2
    with pytest.raises(FrozenInstanceError):
        child.extra = 3  # type: ignore[misc]
    with pytest.raises(TypeError, match="unlike its dataclass bases"):
        # Deliberately invalid, so mypy's dataclass check rejects it too.
        @value_class()
        class Thawed(FrozenFlags):  # type: ignore[misc]
            """Not frozen, over a frozen base."""


def test_methods_written_in_the_class_are_kept() -> None:
    @value_class(frozen=True)
    class OwnHash:
        """Hashes to a constant."""

        number: int

        def __hash__(self) -> int:
            return 42

    assert hash(OwnHash(1)) == 42
    assert OwnHash(1) == OwnHash(1)
