"""Derive the ``expected`` of transcripts our own recorders captured from their bodies alone.

    python tools/rederive_expected.py [FOLDER ...]   # default: transcripts/llama-cpp-python

The imported transcripts get ``expected`` from ``tools/import_transcripts.py``'s reference
reader; the ones recorded live (``tests/integration/llama_cpp_python/``, the rerecord tests) used
to carry the client's own reading, which can only catch change, never error. This rewrites each
sidecar's ``expected`` with the reference reading of its body, refreshes the fields of a
hand-written ``expected_recovered`` that the server stamps (ids, usage: the recording's
``VOLATILE`` fields), and replaces the provenance's note about the client's reading with one
naming the reader. ``tests/transcripts/test_expected_reading.py`` checks every chat transcript
against the same reader, so a sidecar written any other way fails the suite.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from providers.replay.recording import CLIENT_READING, reader_note  # noqa: E402
from tools.import_transcripts import expected_for  # noqa: E402

VOLATILE = ("usage", "response_id", "model_id", "stop_sequence", "error")
"""What the server stamps on a recording rather than what the model wrote."""


def rederive(sidecar_path: Path) -> bool:
    """Rewrite one sidecar; whether anything changed."""
    sidecar: dict[str, Any] = json.loads(sidecar_path.read_text(encoding="utf-8"))
    is_sse = sidecar_path.with_suffix(".sse").exists()
    body = sidecar_path.with_suffix(".sse" if is_sse else ".raw").read_bytes()
    expected = expected_for(body, sidecar["response"]["status"], is_sse)
    before = json.dumps(sidecar)
    sidecar["expected"] = expected
    if "expected_recovered" in sidecar:
        sidecar["expected_recovered"].update({key: expected[key] for key in VOLATILE})
    notes = sidecar["provenance"].get("notes", "")
    sidecar["provenance"]["notes"] = notes.replace(CLIENT_READING, reader_note(expected_for))
    if json.dumps(sidecar) == before:
        return False
    text = json.dumps(sidecar, indent=2, ensure_ascii=False) + "\n"
    sidecar_path.write_bytes(text.encode("utf-8"))
    return True


def main(argv: list[str]) -> int:
    folders = [Path(a) for a in argv] or [ROOT / "transcripts" / "llama-cpp-python"]
    for folder in folders:
        for sidecar_path in sorted(folder.glob("*.json")):
            if rederive(sidecar_path):
                print(f"rewrote {sidecar_path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
