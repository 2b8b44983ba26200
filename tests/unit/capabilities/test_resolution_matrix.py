"""Resolution matrix: (value, source) of every field for every (backend fixture, model) pair.

A change to any layer — a parser, the merge order, a family-table row, a default — shows up here
as a diff of ``snapshots/resolution_matrix.json`` that someone must review. Regenerate with
``UPDATE_SNAPSHOTS=1 pytest tests/unit/capabilities/test_resolution_matrix.py`` and read the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import respx

from capabilities import OpenAiCompatibleCapabilityResolver
from tests.unit.capabilities.fakes import mount

SNAPSHOT = Path(__file__).parent / "snapshots" / "resolution_matrix.json"
ROOT = "http://matrix.test/prefix"

CASES: list[tuple[str, str | None]] = [
    ("llamacpp", None),
    ("llamacpp", "rig/tiny.gguf"),
    ("llamacpp", "Qwen/Qwen3-8B"),  # ignored by the server; the family table still reads it
    ("vllm", "Qwen/Qwen3-0.6B"),
    ("vllm", None),
    ("sglang", "Qwen/Qwen3-0.6B"),
    ("ollama", "qwen3:8b"),
    ("lmstudio", "qwen2-vl-7b-instruct"),
    ("lmstudio", "meta-llama-3.1-8b-instruct"),
    ("lmstudio", "text-embedding-nomic-embed-text-v1.5"),
]


def case_key(backend: str, model_id: str | None) -> str:
    return f"{backend} / {model_id or '(none)'}"


async def resolved(backend: str, model_id: str | None) -> dict[str, Any]:
    with respx.mock(assert_all_called=False) as router:
        mount(router, ROOT, backend)
        async with OpenAiCompatibleCapabilityResolver(f"{ROOT}/v1") as resolver:
            caps = await resolver.resolve(model_id)
    return caps.to_dict()


async def test_resolution_matrix() -> None:
    actual = {case_key(b, m): await resolved(b, m) for b, m in CASES}
    if os.environ.get("UPDATE_SNAPSHOTS") or not SNAPSHOT.exists():
        SNAPSHOT.write_text(json.dumps(actual, indent=2, ensure_ascii=False) + "\n", "utf-8")
        if not os.environ.get("UPDATE_SNAPSHOTS"):
            pytest.fail(f"wrote a new snapshot to {SNAPSHOT}; review it and run again")
    expected = json.loads(SNAPSHOT.read_text("utf-8"))
    assert sorted(actual) == sorted(expected), "cases were added or removed: regenerate"
    for key in expected:
        assert actual[key] == expected[key], key
