"""Resolution matrix: (value, source) of every field for every (backend fake, model) pair.

This is a snapshot test. It catches change, not error: ``snapshots/resolution_matrix.json`` is
the resolver's own output, so a wrong value that was there when the snapshot was written passes.
A change to any layer (a parser, the merge order, a family-table row, a default) shows up as a
diff that someone must review. Regenerate with
``UPDATE_SNAPSHOTS=1 pytest tests/unit/capabilities/test_resolution_matrix.py`` and read the diff.

Each entry was reviewed once on 2026-12-03 against what its fake answers (``fakes.py``, the
``transcripts/<backend>/discovery`` files) and the servers' documented behaviour. Key facts:

- llamacpp / (none): window 2048 from /props default_generation_settings.n_ctx (= /slots n_ctx);
  training 8192 from /v1/models meta.n_ctx_train; version b0-unknown from /props build_info;
  tools from chat_template_caps; 2 slots from total_slots; text-only from /props modalities;
  model field ignored; no family. Consistent.
- llamacpp / rig/tiny.gguf: same answers as (none); the id matches the one served. Consistent.
- llamacpp / Qwen/Qwen3-8B: probe values as (none), matched to rig/tiny.gguf. JUDGED WRONG:
  family qwen3 and supports_reasoning=true (family_table) come from a name the server ignores;
  it serves rig/tiny.gguf, with /props reasoning_format "none". Intended by the case, but not
  what a reader of the fake expects.
- vllm / Qwen/Qwen3-0.6B: window 4096 from /v1/models max_model_len; no training window (vLLM
  exposes none); version 0.33.0 from /version; tools/reasoning from the qwen3 family row.
  Consistent.
- vllm / (none): the only served id is matched; otherwise as above. Consistent.
- sglang / Qwen/Qwen3-0.6B: window 4096 from /v1/models max_model_len; version none (/version
  is 404 on SGLang, the fake has no /server_info); text-only from /model_info
  has_image_understanding=false; tools/reasoning from the qwen3 row (tool_call_parser and
  reasoning_parser are null: the server will not parse them). Consistent.
- ollama / qwen3:8b: backend from "Ollama is running" at /; version 0.12.6 from /api/version;
  window 4096 from /api/ps context_length (loaded); training 40960 from /api/show
  qwen3.context_length; tools/thinking from /api/show capabilities. Consistent.
- lmstudio / qwen2-vl-7b-instruct: text+image from /api/v0/models type "vlm"; no version
  endpoint; no family row (qwen2_vl), so tools/reasoning unknown. Window 32768 is
  max_context_length (model not loaded, no loaded_context_length), used as the window by the
  merge rule; LM Studio may load it with less. Consistent with that rule.
- lmstudio / meta-llama-3.1-8b-instruct: window 131072 = max_context_length (same caveat);
  text from type "llm"; tools=true, reasoning=false from the llama-3.x row. Consistent.
- lmstudio / text-embedding-nomic-embed-text-v1.5: window 2048 = max_context_length. JUDGED
  WRONG: type "embeddings" yields no modalities, so input/output fall back to text (default);
  an embedding model has no text output and cannot serve chat.
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
