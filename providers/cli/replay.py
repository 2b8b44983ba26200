"""``oaicompat replay``: what the client makes of a recorded transcript, as JSON.

Needs no backend: the recorded bytes are served again by a loopback server
(``providers.replay.transcripts.replay_bytes``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from providers.cli.arguments import EXIT_BACKEND, EXIT_OK, EXIT_USAGE
from providers.cli.output import json_text, terminal_safe
from providers.replay.transcripts import Transcript, replay_bytes

__all__ = ["replay"]


async def replay(path: Path) -> int:
    sidecar = path.with_suffix(".json")
    if not sidecar.exists():
        print(f"oaicompat: no transcript sidecar at {terminal_safe(str(sidecar))}", file=sys.stderr)
        return EXIT_USAGE
    transcript = Transcript.load(sidecar)
    result = await replay_bytes(
        transcript.status,
        transcript.body,
        transcript.sidecar["response"].get("content_type", ""),
        streaming=bool(transcript.request.get("stream", transcript.is_stream)),
        backend=transcript.backend,
        api=transcript.api,
        request=transcript.request,
    )
    print(json_text(result))
    return EXIT_BACKEND if result["error"] else EXIT_OK
