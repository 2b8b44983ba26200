"""``providers/abstractions/value_inits.py``: the ``__init__`` source of each value type a chat
client is made of, compiled ahead of time (``providers/abstractions/records.py`` says why).

The file is written here: ``test_the_file_holds_the_init_of_each_value_type_of_a_client``
renders it from the classes as they are and, when the file differs, writes the new one and
fails, so a changed value type shows up as a failed run and a diff to commit. Until then the
changed class is not wrong, only slower to build the first time: its ``__init__`` source has
another checksum, is not found in the file, and is compiled as a class outside it is.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from dataclasses import field, fields
from pathlib import Path
from typing import Any

import pytest

from providers.abstractions import value_inits
from providers.abstractions.records import init_source, value_class

HEADER = '''"""The ``__init__`` of each value type a chat client is made of, as
``value_class`` writes it (``records.init_source``), compiled once into the bytecode cache like
any module where a cold start would otherwise compile each with ``exec`` (``records.py`` says
what that costs).

Written by ``tests/unit/providers/abstractions/test_value_inits.py``: do not edit. A function is
named after its class and its source's checksum, which is how ``value_class`` finds it.
"""
# mypy: ignore-errors

'''
FILE = Path(value_inits.__file__)
ROOT = Path(__file__).resolve().parents[4]
_LIST = """
import sys
import providers
from providers.abstractions.records import _Params

providers.create_chat_client("http://127.0.0.1:9/v1", "m", backend="vllm")
for name, module in list(sys.modules.items()):
    for value in list(vars(module).values()):
        if isinstance(value, type) and value.__module__ == name:
            if isinstance(vars(value).get("__dataclass_params__"), _Params):
                print(name, value.__qualname__)
"""


def client_value_types() -> list[type[Any]]:
    """The value types a fresh interpreter defines by making a chat client: the modules of a
    cold start's first request (the CLI, replay, capabilities and integrations compile theirs
    on first use: a file holding every value type's cost 0.8M instructions more to load)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", _LIST], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    found = []
    for line in done.stdout.splitlines():
        module, qualname = line.split()
        value: Any = importlib.import_module(module)
        for part in qualname.split("."):
            value = getattr(value, part)
        found.append(value)
    return found


def _source(cls: type[Any]) -> str:
    return init_source(cls, fields(cls), cls.__dataclass_params__.frozen)[0]


def test_the_file_holds_the_init_of_each_value_type_of_a_client() -> None:
    classes = client_value_types()
    assert len(classes) > 20  # (the listing found them)
    expected = HEADER + "".join(sorted({_source(cls) for cls in classes}))
    if FILE.read_text(encoding="utf-8") != expected:
        FILE.write_text(expected, encoding="utf-8")
        pytest.fail(f"{FILE.name} was stale and has been rewritten: commit it")


def test_those_value_types_get_their_init_from_the_file() -> None:
    classes = client_value_types()
    elsewhere = [c.__qualname__ for c in classes if c.__init__.__code__.co_filename != str(FILE)]
    assert elsewhere == []


def test_a_class_whose_source_is_not_in_the_file_is_compiled() -> None:
    @value_class(frozen=True)
    class Elsewhere:
        """Not a value type of the library."""

        number: int
        names: list[str] = field(default_factory=list)

    value = Elsewhere(1)
    assert Elsewhere.__init__.__code__.co_filename == "<string>"
    assert (value.number, value.names) == (1, [])


def test_a_changed_class_never_gets_the_init_of_its_former_fields() -> None:
    """A value type edited without rewriting the file: the same name, another field first. The
    file holds an ``__init__`` for the class's old fields, under the old source's checksum;
    the new source's is not there, so the new fields are set by a compiled ``__init__``."""
    from providers.transport.timeouts import Timeouts as Library

    @value_class(frozen=True)
    class Timeouts:
        """``Timeouts`` with a field added in front."""

        extra: int
        connect: float | None = 5.0

    assert _source(Library) in FILE.read_text(encoding="utf-8")
    assert _source(Timeouts).split("(")[0] != _source(Library).split("(")[0]
    value = Timeouts(7)
    assert Timeouts.__init__.__code__.co_filename == "<string>"
    assert (value.extra, value.connect) == (7, 5.0)
