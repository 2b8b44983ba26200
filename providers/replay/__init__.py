"""Transcript tooling: recorded server traffic, replayed on loopback.

``transcripts`` loads the bundled transcripts (raw bytes plus the expected normalised result),
``server`` serves recorded replies on a loopback port (optionally cut into arbitrary pieces),
and ``recording`` captures a live exchange into a new transcript. The demo, the CLI's
``record``/``replay`` and the regression suite are built on these; the library proper never
imports them.
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from providers.lazy_exports import lazy_exports as _lazy_exports

if _TYPE_CHECKING:
    from providers.replay.recording import record_exchange, write_transcript
    from providers.replay.server import RecordedReply, ReplayServer
    from providers.replay.transcripts import Transcript, iter_transcripts

__all__ = [
    "RecordedReply",
    "ReplayServer",
    "Transcript",
    "iter_transcripts",
    "record_exchange",
    "write_transcript",
]

__getattr__, __dir__ = _lazy_exports(
    __name__,
    {
        "record_exchange": ".recording",
        "write_transcript": ".recording",
        "RecordedReply": ".server",
        "ReplayServer": ".server",
        "Transcript": ".transcripts",
        "iter_transcripts": ".transcripts",
    },
)
