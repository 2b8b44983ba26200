"""One transcript body replayed cut into pieces in many ways: the result must not change.

The chat suite (``test_replay.py``) and the Responses suite (``test_responses_replay.py``) make
the same two promises about a streamed body, each through its own client: the result does not
depend on where the bytes are cut, nor on which SSE line ending the server used. The cut sets
and the loop live here once; a suite passes a :class:`Replayer` for its client.
"""

from __future__ import annotations

import random
from typing import Any, Protocol

import pytest

from tests.transcripts.replaying import awkward_cuts, comparable, cut_at, random_cuts

__all__ = [
    "LINE_ENDINGS",
    "SHORT",
    "Replayer",
    "assert_same_wherever_cut",
    "assert_same_with_line_ending",
    "cut_sets",
]

SHORT = 2048
"""Bodies up to this size are cut at every single offset."""

LINE_ENDINGS = pytest.mark.parametrize("line_end", [b"\r\n", b"\r"], ids=["crlf", "cr"])
"""The SSE line endings other than LF, for :func:`assert_same_with_line_ending`."""


class Replayer(Protocol):
    """Replays one transcript with its body delivered in ``pieces``; returns the outcome."""

    async def replay(self, pieces: list[bytes]) -> dict[str, Any]: ...


def cut_sets(body: bytes, rng: random.Random, samples: int) -> list[list[int]]:
    """Where to cut ``body``: every single offset of a short body, else ``samples`` random
    single cuts and ``samples`` random sets of 2 to 39 cuts; then one byte at a time, and
    inside every multi-byte character and CRLF."""
    if len(body) <= SHORT:
        cuts = [[offset] for offset in range(1, len(body))]
    else:
        cuts = [random_cuts(body, rng, 1) for _ in range(samples)]
        cuts += [random_cuts(body, rng, rng.randrange(2, 40)) for _ in range(samples)]
    cuts.append(list(range(1, len(body))))  # one byte at a time
    cuts.append(awkward_cuts(body))
    return cuts


async def assert_same_wherever_cut(
    replayer: Replayer, body: bytes, expected: dict[str, Any], seed: str, samples: int
) -> None:
    """Replay ``body`` cut at every set of :func:`cut_sets`; each result is ``expected``."""
    for cuts in cut_sets(body, random.Random(seed), samples):
        result = await replayer.replay(cut_at(body, cuts))
        assert comparable(result, expected) == expected, f"differs when cut at {cuts[:10]}"


async def assert_same_with_line_ending(
    replayer: Replayer, body: bytes, expected: dict[str, Any], seed: str, line_end: bytes
) -> None:
    """Replay ``body`` with every LF turned into ``line_end``: whole, at the awkward cuts, and
    at 25 random ones. JSON escapes control characters, so a raw LF in an SSE body is always a
    line end."""
    body = body.replace(b"\n", line_end)
    rng = random.Random(seed)
    for cuts in ([], awkward_cuts(body), random_cuts(body, rng, 25)):
        result = await replayer.replay(cut_at(body, cuts))
        assert comparable(result, expected) == expected
