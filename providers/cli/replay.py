"""``oaicompat replay``: what the client makes of a recorded transcript, as JSON.

Needs no backend: the recorded bytes are served again by a loopback server
(``providers.replay.transcripts.replay_bytes``). A file that is not a transcript (no body beside
it, a discovery capture, not JSON) is a usage error naming what is wrong, not a traceback.
"""

from __future__ import annotations

from pathlib import Path

from providers.abstractions.errors import ConfigurationError
from providers.cli.arguments import EXIT_BACKEND, EXIT_OK
from providers.cli.output import json_text
from providers.replay.transcripts import Transcript, replay_bytes

__all__ = ["load_transcript", "replay"]

_LAYOUT = "a transcript is <scenario>.json beside its <scenario>.sse or .raw body"


def load_transcript(sidecar: Path) -> Transcript:
    """The transcript whose sidecar is ``sidecar``, or a ``ConfigurationError`` saying why not."""
    if not sidecar.exists():
        raise ConfigurationError(f"no transcript sidecar at {sidecar} ({_LAYOUT})")
    try:
        transcript = Transcript.load(sidecar)
    except FileNotFoundError:
        raise ConfigurationError(f"no .sse or .raw body beside {sidecar} ({_LAYOUT})") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigurationError(f"{sidecar}: not a readable transcript sidecar ({exc})") from None
    response = transcript.sidecar.get("response") if isinstance(transcript.sidecar, dict) else None
    if not isinstance(response, dict) or not isinstance(response.get("status"), int):
        raise ConfigurationError(
            f"{sidecar} has no recorded response (a discovery capture?): {_LAYOUT}, "
            "as `oaicompat record` writes"
        )
    return transcript


async def replay(path: Path) -> int:
    transcript = load_transcript(path.with_suffix(".json"))
    result = await replay_bytes(
        transcript.status,
        transcript.body,
        str(transcript.sidecar["response"].get("content_type", "")),
        streaming=bool(transcript.request.get("stream", transcript.is_stream)),
        backend=transcript.backend,
        api=transcript.api,
        request=transcript.request,
    )
    print(json_text(result))
    return EXIT_BACKEND if result["error"] else EXIT_OK
