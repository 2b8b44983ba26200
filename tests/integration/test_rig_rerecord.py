"""Re-record ``transcripts/{vllm,sglang}/captured--*`` chat exchanges from the scripted rigs
(opt-in).

    .venv/bin/pytest tests/integration/test_rig_rerecord.py --rerecord-transcripts -s -k vllm-plain

Without the flag this test is deselected (``tests/integration/conftest.py``). With it, one test per
``<backend>-<server set>`` takes every captured chat exchange of that set whose original capture
(``shared/transcripts-captured/<backend>/<set>--<name>.meta.json``) states the ``model_text`` the
scripted model emitted and the request sent, scripts the rig server of the set to emit that text
again, sends the request through the library's own recorder
(``providers.replay.recording.record_exchange``) and rewrites the transcript in place: new body
bytes, new provenance (detected server and version, the capture's flags, date), new ``expected``
(read by ``tools/import_transcripts.py``'s reference reader, never by the client),
and the prompt the engine was given as ``engine_prompt``. The first capture's provenance is kept
under ``provenance.first_capture``, and a hand-written ``expected_recovered`` keeps its model text
(as the llama.cpp re-recorder does).

Because the model is a script, what it wrote must come out the same: the status, the error
class and the model text (text, reasoning, tool calls without their ids, finish reason) are
checked against the old ``expected``; ids and usage are reported when they change. A set whose
server the rig has no fixture for (a one-off capture set-up) is skipped with the reason.
Afterwards run ``pytest tests/transcripts`` and review ``git diff``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from providers.replay.recording import record_exchange, write_transcript
from providers.replay.transcripts import Transcript, default_root, iter_transcripts
from tests.integration.rigs.scripted import ScriptedServer
from tests.integration.sglang import conftest as sglang_sets
from tests.integration.sglang.conftest import (  # noqa: F401
    sglang_plain,
    sglang_qwen3_qwen25,
    sglang_qwen3_qwen25_store,
    sglang_qwen3coder,
    sglang_r1_deepseek,
)
from tests.integration.test_llamacpp_rerecord import (
    changed_fields,
    comparable_model_text,
    first_capture,
    refreshed_recovery,
)
from tests.integration.vllm import conftest as vllm_sets
from tests.integration.vllm.conftest import (  # noqa: F401
    vllm_plain,
    vllm_qwen3_hermes,
    vllm_qwen3_hermes_store,
    vllm_qwen3coder,
    vllm_r1_deepseek,
)
from tools.import_transcripts import expected_for

# The rigs' server fixtures (imported above) live in conftests beside their suites, which pytest
# shows only to tests in those folders; imported here, request.getfixturevalue finds them too.
pytestmark = pytest.mark.rerecord

SOURCE = "tests/integration/test_rig_rerecord.py (pytest --rerecord-transcripts)"
CAPTURED = default_root().parent.parent / "shared" / "transcripts-captured"
"""The original captures, whose metas hold what no transcript does: the scripted text."""
FIXTURES: dict[str, Mapping[str, str]] = {
    "vllm": vllm_sets.FIXTURES,
    "sglang": sglang_sets.FIXTURES,
}
"""Per backend, server fixture → server set."""
MODEL_TEXT_LINE = "model_text (the text the scripted engine emitted, one token per step, then EOS)"
"""Spelled as the first captures' notes spell it: the equivalence replay reads it back."""
PROMPT_LOG_WAIT = 5.0
"""How long a served request may take to reach the engine's prompt log after the answer ended
(the engine logs a request when it finishes it, which races the last bytes a little)."""


@dataclass(frozen=True)
class Capture:
    """A committed transcript and the meta of the capture it was imported from."""

    transcript: Transcript
    meta: dict[str, Any]


def rig_transcripts(backend: str) -> list[Transcript]:
    """The captured chat exchanges of a rig backend (discovery and Responses excluded)."""
    return [
        t
        for t in iter_transcripts(default_root())
        if t.backend == backend and t.scenario.startswith("captured--")
    ]


def server_sets() -> list[tuple[str, str]]:
    """Every ``(backend, set)`` named by a committed capture, in file order."""
    found: dict[tuple[str, str], None] = {}
    for backend in FIXTURES:
        for transcript in rig_transcripts(backend):
            found[(backend, transcript.scenario.split("--")[1])] = None
    return list(found)


def fixture_of(backend: str, set_name: str) -> str | None:
    return next((f for f, s in FIXTURES[backend].items() if s == set_name), None)


def captures_of(backend: str, set_name: str) -> tuple[list[Capture], list[str]]:
    """The set's re-recordable exchanges, and why the others are not."""
    members: list[Capture] = []
    skipped: list[str] = []
    for transcript in rig_transcripts(backend):
        if transcript.scenario.split("--")[1] != set_name:
            continue
        name = transcript.scenario.removeprefix("captured--")
        path = CAPTURED / backend / f"{name}.meta.json"
        if not path.is_file():
            skipped.append(f"{transcript.scenario}: no capture meta at {path}")
            continue
        meta: dict[str, Any] = json.loads(path.read_bytes())
        if "model_text" not in meta or "request" not in meta:
            skipped.append(f"{transcript.scenario}: its meta has no model_text or request")
            continue
        members.append(Capture(transcript, meta))
    return members, skipped


def served_name(flags: Sequence[str]) -> str | None:
    """``--served-model-name`` of a captured command line."""
    items = iter(flags)
    for flag in items:
        if flag == "--served-model-name":
            return next(items, None)
    return None


def request_for(meta: Mapping[str, Any], model_id: str) -> dict[str, Any] | str:
    """The captured request, its ``model`` now the rig server's when it named the captured
    server's (an unknown-model request keeps its wrong name: that is what it tests). A string
    body (a malformed-JSON capture) is sent verbatim."""
    request = meta["request"]
    if not isinstance(request, dict):
        return str(request)
    body = dict(request)
    if body.get("model") == served_name(meta.get("server_flags") or ()):
        body["model"] = model_id
    return body


def recorded_flags(meta: Mapping[str, Any]) -> list[str]:
    """The capture's flags without its per-run ``--port`` (noise in every re-recording)."""
    out: list[str] = []
    items = iter(meta.get("server_flags") or ())
    for flag in items:
        if flag == "--port":
            next(items, None)
        else:
            out.append(flag)
    return out


def engine_prompt(server: ScriptedServer[Any], before: int, status: int) -> str | None:
    """The prompt of the request just sent, if it reached the engine (an error answered by
    the serving layer never does; the last logged prompt is then an older request's)."""
    deadline = time.monotonic() + (PROMPT_LOG_WAIT if status < 400 else 0.5)
    while True:
        prompts = server.prompts()
        if len(prompts) > before:
            return str(prompts[-1].prompt)
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.05)


def invariants_broken(old: Transcript, status: int, new: Mapping[str, Any]) -> list[str]:
    """What a scripted model cannot change: status, error class, the text it wrote."""
    problems = []
    if status != old.status:
        problems.append(f"{old.scenario}: status {old.status} -> {status}")
    old_error, new_error = old.expected["error"], new["error"]
    if (old_error or {}).get("class") != (new_error or {}).get("class"):
        problems.append(f"{old.scenario}: error {json.dumps(old_error)} -> {json.dumps(new_error)}")
    if comparable_model_text(old.expected) != comparable_model_text(dict(new)):
        problems.append(f"{old.scenario}: the scripted model text came out differently")
    return problems


@pytest.mark.parametrize(
    ("backend", "set_name"), [pytest.param(b, s, id=f"{b}-{s}") for b, s in server_sets()]
)
async def test_rerecord_rig_transcripts(
    backend: str, set_name: str, request: pytest.FixtureRequest
) -> None:
    fixture = fixture_of(backend, set_name)
    if fixture is None:
        pytest.skip(f"{backend} set {set_name!r}: no server fixture rebuilds that capture set-up")
    members, skipped = captures_of(backend, set_name)
    if not members:
        pytest.skip(f"{backend} set {set_name!r}: nothing re-recordable: {'; '.join(skipped)}")
    server: ScriptedServer[Any] = request.getfixturevalue(fixture)
    root = default_root()
    report: list[str] = []
    problems: list[str] = []
    for capture in members:
        old, meta = capture.transcript, capture.meta
        server.script(str(meta["model_text"]))
        before = len(server.prompts())
        recording = await record_exchange(
            server.base_url,
            request_for(meta, server.model_id),
            root=root,
            scenario=old.scenario,
            backend=backend,
            flags=recorded_flags(meta),
            source=SOURCE,
            notes=(
                f"Scripted {backend} rig server set `{set_name}` "
                f"(tests/integration/{backend}/conftest.py), on 127.0.0.1. Re-recorded with the "
                "request of an earlier capture: see first_capture.\n"
                f"{MODEL_TEXT_LINE}: {json.dumps(meta['model_text'], ensure_ascii=False)}"
            ),
            reader=expected_for,
        )
        status = recording.exchange.status
        new = recording.sidecar["expected"]
        sidecar = recording.sidecar
        sidecar["provenance"]["first_capture"] = first_capture(old)
        sidecar.update(refreshed_recovery(old.sidecar, new))
        prompt = engine_prompt(server, before, status)
        if prompt is not None:
            sidecar["engine_prompt"] = prompt
        write_transcript(recording.body_path.parent, old.scenario, recording.exchange, sidecar)
        changes = changed_fields(old.expected, new)
        report.append(f"{old.scenario}: {', '.join(changes) or 'no change'}")
        problems += invariants_broken(old, status, new)
    print(f"\nre-recorded ({backend} {set_name}, {len(report)}):\n  " + "\n  ".join(report))
    if skipped:
        print("not re-recordable:\n  " + "\n  ".join(skipped))
    assert problems == []
