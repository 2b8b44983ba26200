"""Every chat transcript's ``expected`` is the reference reading of its body.

``transcripts/README.md`` derives ``expected`` by reading the body with documented rules
(``tools/import_transcripts.py``'s reader, which uses nothing of the client); the recorder
refuses to write the client's own reading into ``transcripts/``. This holds each sidecar to
that: one hand-edited, or written from what the client returned, fails here unless the reader
reads the body the same way.
"""

from __future__ import annotations

import pytest

from providers.replay.transcripts import Transcript, iter_transcripts
from tools.import_transcripts import expected_for

TRANSCRIPTS = list(iter_transcripts())


def test_the_reading_covers_every_backend_folder() -> None:
    backends = {t.backend for t in TRANSCRIPTS}

    assert {"llamacpp", "vllm", "sglang", "llama-cpp-python"} <= backends


@pytest.mark.parametrize("transcript", TRANSCRIPTS, ids=lambda t: t.id)
def test_expected_is_the_reference_reading_of_the_body(transcript: Transcript) -> None:
    reading = expected_for(transcript.body, transcript.status, transcript.is_stream)

    assert transcript.expected == reading
