"""Multi-turn prompt-cache evolution: per turn, how much of the prompt the server reused.

In a conversation each turn's prompt extends the previous one, so a working prefix cache shows
``cached`` growing turn over turn (the llama.cpp captures: 5 → 177 → 195). Netclaw's table of
the same name read llama.cpp's ``timings`` only and silently filled zeros (or dropped the rows)
on vLLM; here every cell is a ``Measurement`` with its source, a value the server did not report
is ``n/a`` (``null`` in JSON), and server-reported and client-measured times sit in separate
columns (``prompt_ms_server`` vs ``ttft_ms_client``) instead of one column meaning either.
"""

from __future__ import annotations

import json
from typing import Any

from providers.abstractions.chat_response import ChatResponse
from providers.abstractions.records import value_class
from telemetry.cache_hint import CacheReportHint
from telemetry.extractors import TimingsExtractor, extractor_for
from telemetry.measurement import Measurement
from telemetry.recorder import RequestRecord
from telemetry.timings import (
    CLIENT_MEASURED,
    SERVER_REPORTED,
    RequestTimings,
    ServerTimings,
    request_timings,
)

__all__ = ["CacheEvolution", "CacheReportHint", "CacheTurn"]

NA = "n/a"


def _server(value: float | None, unit: str) -> Measurement | None:
    return None if value is None else Measurement(value, unit, SERVER_REPORTED)


def _client(value: float | None, unit: str) -> Measurement | None:
    return None if value is None else Measurement(value, unit, CLIENT_MEASURED)


@value_class(frozen=True)
class CacheTurn:
    """One row. Token counts are the server's (``usage``/``timings``); ``uncached`` is derived
    from two server values and keeps their source."""

    turn: int
    backend: str
    input_tokens: Measurement | None = None
    cached_tokens: Measurement | None = None
    uncached_tokens: Measurement | None = None
    prompt_ms_server: Measurement | None = None
    ttft_ms_client: Measurement | None = None
    output_tokens_per_second_server: Measurement | None = None
    output_tokens_per_second_client: Measurement | None = None
    missing_cache_flag: str | None = None

    @classmethod
    def from_timings(cls, turn: int, timings: RequestTimings) -> CacheTurn:
        row = cls._server_cells(turn, timings.backend, timings.server)
        return cls(
            **row,
            ttft_ms_client=_client(timings.client.ttft_ms, "ms"),
            output_tokens_per_second_client=_client(
                timings.output_tokens_per_second_client, "token/s"
            ),
        )

    @classmethod
    def from_server(cls, turn: int, backend: str, server: ServerTimings | None) -> CacheTurn:
        return cls(**cls._server_cells(turn, backend, server))

    @staticmethod
    def _server_cells(turn: int, backend: str, server: ServerTimings | None) -> dict[str, Any]:
        if server is None:
            return {"turn": turn, "backend": backend}
        return {
            "turn": turn,
            "backend": server.backend,
            "input_tokens": _server(server.input_tokens, "token"),
            "cached_tokens": _server(server.cached_input_tokens, "token"),
            "uncached_tokens": _server(server.uncached_input_tokens, "token"),
            "prompt_ms_server": _server(server.prompt_ms, "ms"),
            "output_tokens_per_second_server": _server(server.predicted_per_second, "token/s"),
            "missing_cache_flag": server.missing_cache_flag,
        }

    def cells(self) -> dict[str, Measurement | None]:
        return {name: getattr(self, name) for name in COLUMNS}


COLUMNS: tuple[str, ...] = (
    "input_tokens",
    "cached_tokens",
    "uncached_tokens",
    "prompt_ms_server",
    "ttft_ms_client",
    "output_tokens_per_second_server",
    "output_tokens_per_second_client",
)
_HEADERS: dict[str, str] = {
    "input_tokens": "input",
    "cached_tokens": "cached",
    "uncached_tokens": "uncached",
    "prompt_ms_server": "prompt_ms_server",
    "ttft_ms_client": "ttft_ms_client",
    "output_tokens_per_second_server": "tok_s_server",
    "output_tokens_per_second_client": "tok_s_client",
}


def _format(cell: Measurement | None) -> str:
    if cell is None:
        return NA
    if cell.unit == "token":
        return str(int(cell.value))
    return f"{cell.value:.2f}"


class CacheEvolution:
    """Collects one conversation's turns and renders the table (``render_text``, ``to_json``).

    ``add`` takes a ``ChatResponse`` (its ``request_timings`` when the telemetry layer attached
    them; otherwise the server columns alone, read with ``extractor``), a ``RequestTimings``, or
    a ``RequestRecord`` (so ``evolution.add`` can be a ``TelemetryChatClient`` observer; records
    of failed or cancelled requests are not turns and are ignored).
    """

    def __init__(
        self,
        *,
        extractor: TimingsExtractor | None = None,
        cache_hint: CacheReportHint | None = None,
    ) -> None:
        self.turns: list[CacheTurn] = []
        self._extractor = extractor or extractor_for(None)
        self.cache_hint = cache_hint if cache_hint is not None else CacheReportHint()

    def add(self, source: ChatResponse | RequestTimings | RequestRecord) -> CacheTurn | None:
        if isinstance(source, RequestRecord):
            if source.status != "ok":
                return None
            source = source.timings
        turn_number = len(self.turns) + 1
        if isinstance(source, RequestTimings):
            turn = CacheTurn.from_timings(turn_number, source)
            server = source.server
        else:
            timings = request_timings(source)
            if timings is not None:
                turn = CacheTurn.from_timings(turn_number, timings)
                server = timings.server
            else:
                server = self._extractor.extract(source)
                backend = server.backend if server is not None else "generic"
                turn = CacheTurn.from_server(turn_number, backend, server)
        self.cache_hint.check(server)
        self.turns.append(turn)
        return turn

    @property
    def notes(self) -> list[str]:
        """Why cells are n/a, when the reason is known (one note per server flag)."""
        flags = dict.fromkeys(
            (t.backend, t.missing_cache_flag) for t in self.turns if t.missing_cache_flag
        )
        return [f"cached tokens n/a: start {backend} with {flag}" for backend, flag in flags]

    def to_json(self) -> dict[str, Any]:
        """``{"turns": [{"turn": 1, "cached_tokens": {"value", "unit", "source"} | null, …}],
        "notes": [...]}``."""
        return {
            "turns": [
                {
                    "turn": t.turn,
                    "backend": t.backend,
                    **{
                        name: None if cell is None else cell.to_dict()
                        for name, cell in t.cells().items()
                    },
                }
                for t in self.turns
            ],
            "notes": self.notes,
        }

    def render_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_json(), indent=indent)

    def render_text(self) -> str:
        """A fixed-width table; a legend line states each column's source."""
        header = ["turn", *(_HEADERS[name] for name in COLUMNS)]
        rows = [[str(t.turn), *(_format(cell) for cell in t.cells().values())] for t in self.turns]
        widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
        lines = [
            "  ".join(value.rjust(width) for value, width in zip(row, widths, strict=True))
            for row in [header, *rows]
        ]
        lines.append(
            "input/cached/uncached and *_server: server_reported; *_client: client_measured"
        )
        lines.extend(self.notes)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render_text()
