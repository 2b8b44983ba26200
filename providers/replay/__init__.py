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
    from providers.replay.recording import record_exchange as record_exchange
    from providers.replay.recording import write_transcript as write_transcript
    from providers.replay.server import RecordedReply as RecordedReply
    from providers.replay.server import ReplayServer as ReplayServer
    from providers.replay.transcripts import Transcript as Transcript
    from providers.replay.transcripts import iter_transcripts as iter_transcripts

_lazy_exports(
    __name__,
    {
        ".recording": ("record_exchange", "write_transcript"),
        ".server": ("RecordedReply", "ReplayServer"),
        ".transcripts": ("Transcript", "iter_transcripts"),
    },
)
