"""The fast path's friend list: who may touch a hot type's private state.

``ChatResponseUpdate`` packs its fields into six slots (``response_update``'s docstring says
why), and per-update code reads it through ``plain_text`` and ``head`` instead of building
``contents``. That economy must stay inside the type (STYLE.md, "speed stays inside the type
that needs it"): only the modules named in ``FRIENDS`` may read or write an update's private
slots, call its private methods, write its read-only fields or build one without its
constructor (``object.__new__``). Everyone else in ``providers``, ``capabilities`` and
``telemetry`` uses the public fields. Two more hot types are held the same way: the text
recovery's ``ChoiceRecovery`` answers ``passes`` for its fast path, and the chunk normaliser
shares its learnt templates with the event reader through a ``ReaderState``.

The check reads the source with ``ast``. A private name is one of the class's own (its slots
and methods that start with one underscore, read from the class, so a new slot is covered the
day it is added); touching it on anything but ``self`` or ``cls`` outside the friends, or
through ``getattr``/``setattr`` with the name written out, is a violation. ``self._x`` is a
class's own state and never counted: the names are common (``_text``, ``_event``). The check
goes by name, not by type (``ast`` cannot tell what ``x`` is in ``x._plain``): a sealed
class's private name touched on any other object is reported, and the fix is a public
accessor or another name, not a longer friend list.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from providers.abstractions.response_update import ChatResponseUpdate
from providers.chat_completions.normalize import ChunkNormalizer
from providers.layers.choice_recovery import ChoiceRecovery
from providers.layers.choice_stages import ChoiceStages
from tests.unit.architecture.import_graph import ROOT, module_files

OWN_MODULES = (
    "providers.abstractions.response_update",  # the update itself
    "providers.abstractions.update_parts",  # the parts it packs its fields into
)
PRODUCERS: dict[str, str] = {
    "providers.chat_completions.normalize": "the full path: makes every folded update",
    "providers.chat_completions.event_reader": "keeps each update's event as its bytes",
}
"""The chat client's chunk producers, which make every update of a stream, and why each needs
the update's private state."""
FRIENDS = frozenset((*OWN_MODULES, *PRODUCERS))
"""The modules that may touch an update's private state."""

READ_ONLY = ("plain_text", "head")
"""Public slots of an update that only ``FRIENDS`` may write (everyone may read them)."""


@dataclass(frozen=True, slots=True)
class Sealed:
    """One type whose private names only ``friends`` may touch."""

    cls: type
    friends: frozenset[str]
    read_only: tuple[str, ...] = ()
    constructor_only: bool = False
    """Must every module but the friends build it through its constructor?"""

    def private_names(self) -> frozenset[str]:
        names = {name for name in getattr(self.cls, "__slots__", ()) if name.startswith("_")}
        names |= {
            name for name in vars(self.cls) if name.startswith("_") and not name.startswith("__")
        }
        return frozenset(names)


SEALED = (
    Sealed(ChatResponseUpdate, FRIENDS, READ_ONLY, constructor_only=True),
    Sealed(ChoiceRecovery, frozenset({"providers.layers.choice_recovery"})),
    Sealed(ChoiceStages, frozenset({"providers.layers.choice_stages"})),
    Sealed(ChunkNormalizer, frozenset({"providers.chat_completions.normalize"})),
)
_OWN = ("self", "cls")


def violations(module: str, source: str, types: tuple[Sealed, ...] = SEALED) -> list[str]:
    """What ``source`` (the text of ``module``) does to the private state of ``types`` that
    their friend lists do not allow, one line each."""
    found: list[tuple[int, str]] = []
    tree = ast.parse(source)
    for sealed in types:
        if module in sealed.friends:
            continue
        private = sealed.private_names()
        name = sealed.cls.__name__
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                owner = node.value.id if isinstance(node.value, ast.Name) else None
                if node.attr in private and owner not in _OWN:
                    found.append(
                        (node.lineno, f"{module}:{node.lineno} touches {name}.{node.attr}")
                    )
                elif (
                    node.attr in sealed.read_only
                    and not isinstance(node.ctx, ast.Load)
                    and owner not in _OWN
                ):
                    found.append((node.lineno, f"{module}:{node.lineno} writes {name}.{node.attr}"))
                elif (
                    sealed.constructor_only and node.attr == "__new__" and owner in ("object", name)
                ):
                    found.append(
                        (node.lineno, f"{module}:{node.lineno} builds with {owner}.__new__")
                    )
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "setattr", "delattr")
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
                and node.args[1].value in private | set(sealed.read_only)
                and not (node.func.id == "getattr" and node.args[1].value in sealed.read_only)
            ):
                found.append(
                    (
                        node.lineno,
                        f"{module}:{node.lineno} {node.func.id} {name}.{node.args[1].value}",
                    )
                )
    return [line for _, line in sorted(found, key=lambda item: item[0])]


def test_only_the_friends_touch_the_sealed_types() -> None:
    found = [
        line
        for module, path in module_files().items()
        for line in violations(module, path.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_every_producer_on_the_list_needs_to_be_there() -> None:
    """A producer that no longer touches an update's private state leaves the list, so the
    list stays the shortest that holds."""
    modules = module_files()
    assert set(FRIENDS) <= set(modules)
    unfriended = (Sealed(ChatResponseUpdate, frozenset(), READ_ONLY, constructor_only=True),)
    for producer in PRODUCERS:
        source = modules[producer].read_text(encoding="utf-8")
        assert violations(producer, source, unfriended), f"{producer} needs no access"


def test_the_read_only_fields_are_slots_and_the_private_names_are_read_from_the_class() -> None:
    assert set(READ_ONLY) <= set(ChatResponseUpdate.__slots__)
    update_private = SEALED[0].private_names()
    assert {"_contents", "_event", "_rare", "_fold"} <= update_private
    assert {"_plain", "_lines", "_edges_in_text"} <= SEALED[1].private_names()
    assert {"_line_start", "_tools", "_edges"} <= SEALED[2].private_names()
    assert {"_fingerprint", "_tools", "_normalize"} <= SEALED[3].private_names()


_PROBE = """
from providers.abstractions.response_update import ChatResponseUpdate

def probe(update, recovery, normalizer):
    update.plain_text = "x"
    kind = update._rare
    made = object.__new__(ChatResponseUpdate)
    event = getattr(update, "_event")
    plain = recovery._plain
    template = normalizer._fingerprint
    return update.plain_text, update.head, kind, made, event, plain, template
"""


def test_a_module_outside_the_friends_is_caught(tmp_path: Path) -> None:
    """The check can fail: a probe module placed among the layers does six forbidden things
    (and two allowed reads), and each is reported; the same text in a friend of the update is
    reported only for the other types' state."""
    probe = tmp_path / "probe.py"
    probe.write_text(_PROBE, encoding="utf-8")
    found = violations("providers.layers.probe", probe.read_text(encoding="utf-8"))
    assert [line.split(" ", 1)[1] for line in found] == [
        "writes ChatResponseUpdate.plain_text",
        "touches ChatResponseUpdate._rare",
        "builds with object.__new__",
        "getattr ChatResponseUpdate._event",
        "touches ChoiceRecovery._plain",
        "touches ChunkNormalizer._fingerprint",
    ]
    as_friend = violations("providers.chat_completions.event_reader", _PROBE)
    assert [line.split(" ", 1)[1] for line in as_friend] == [
        "touches ChoiceRecovery._plain",
        "touches ChunkNormalizer._fingerprint",
    ]


def test_a_mutated_copy_of_a_real_layer_is_caught(tmp_path: Path) -> None:
    """Text recovery as it was before the seal (reading the update's slots per update): one
    line of that, put back into a copy of today's module, fails the check."""
    source = (ROOT / "providers/layers/text_recovery.py").read_text(encoding="utf-8")
    anchor = "        text = update.plain_text  # (a plain update's text: no list made)\n"
    assert anchor in source
    mutated = tmp_path / "text_recovery.py"
    mutated.write_text(
        source.replace(anchor, anchor + "        rare = update._rare\n"), encoding="utf-8"
    )
    assert violations("providers.layers.text_recovery", source) == []
    found = violations("providers.layers.text_recovery", mutated.read_text(encoding="utf-8"))
    assert len(found) == 1 and found[0].endswith("touches ChatResponseUpdate._rare")
