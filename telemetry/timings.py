"""What one request cost and how fast it went, with every value's provenance.

Two records, never merged: ``ServerTimings`` holds what the server *said* (llama.cpp's
``timings`` object, ``usage`` token counts) and ``ClientTimings`` what this process *measured* on
its monotonic clock. ``RequestTimings`` pairs them. Netclaw stored a client wall-clock prompt time
under the server's ``prompt_us`` key, so nothing downstream could tell which one a row held;
here the record a value lives on is its source, and every
serialised name ends in ``_server`` or ``_client`` (``prompt_ms_server``, ``ttft_ms_client``).
``Measurement`` carries the same fact for code that handles values generically (tables, logs).

Values are floats as the server sent them: no scaling to integers, no truncation.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, ClassVar, Final, Literal

from providers.abstractions.chat_response import ChatResponse, ChatResponseUpdate
from providers.abstractions.records import value_class
from providers.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from telemetry.measurement import Measurement

__all__ = [
    "CLIENT_MEASURED",
    "REQUEST_TIMINGS",
    "SERVER_REPORTED",
    "ClientTimings",
    "Measurement",
    "RequestTimings",
    "ServerTimings",
    "Source",
    "request_timings",
]

Source = Literal["server_reported", "client_measured"]
SERVER_REPORTED: Final = "server_reported"
CLIENT_MEASURED: Final = "client_measured"

REQUEST_TIMINGS: Final = "request_timings"
"""``additional_properties`` key of the ``RequestTimings`` on a ``ChatResponse`` and on the last
update of a stream. Not ``"timings"``: that key already holds llama.cpp's raw object."""


@value_class(frozen=True)
class ServerTimings:
    """Everything the server reported about one request; all values are ``server_reported``.

    ``None`` means "not reported", never zero: vLLM without ``--enable-prompt-tokens-details``
    says nothing about its prefix cache, which is not the same as a cache miss.
    ``missing_cache_flag`` names the server flag that would make it report cached tokens, set only
    when this backend needs one and this report lacked them.
    """

    source: ClassVar[Source] = SERVER_REPORTED

    backend: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_input_tokens: int | None = None
    reasoning_tokens: int | None = None
    # llama.cpp: prompt tokens evaluated, i.e. *not* served from the cache
    prompt_n: int | None = None
    prompt_ms: float | None = None
    prompt_per_token_ms: float | None = None
    prompt_per_second: float | None = None
    predicted_n: int | None = None
    predicted_ms: float | None = None
    predicted_per_token_ms: float | None = None
    predicted_per_second: float | None = None
    # speculative decoding: tokens drafted (llama.cpp, with a draft model)
    draft_n: int | None = None
    draft_n_accepted: int | None = None
    missing_cache_flag: str | None = None

    @property
    def uncached_input_tokens(self) -> int | None:
        if self.input_tokens is None or self.cached_input_tokens is None:
            return None
        return self.input_tokens - self.cached_input_tokens

    @property
    def draft_acceptance_rate(self) -> float | None:
        if not self.draft_n or self.draft_n_accepted is None:
            return None
        return self.draft_n_accepted / self.draft_n

    def measurements(self) -> dict[str, Measurement]:
        """The timing values (token counts excluded: they are the response's ``usage``)."""
        # deferred: see ``__getattr__`` below (a class the request's log event never needs)
        from telemetry.measurement import Measurement

        return {name: Measurement(v, unit, src) for name, v, unit, src in self._values()}

    def _values(self) -> Iterator[tuple[str, float, str, Source]]:
        """``(name, value, unit, source)`` of each reported timing, in ``measurements`` order."""
        for name, unit in _SERVER_FIELDS:
            value = getattr(self, name)
            if value is not None:
                yield f"{name}_server", value, unit, SERVER_REPORTED


_SERVER_FIELDS: tuple[tuple[str, str], ...] = (
    ("prompt_n", "token"),
    ("prompt_ms", "ms"),
    ("prompt_per_token_ms", "ms"),
    ("prompt_per_second", "token/s"),
    ("predicted_n", "token"),
    ("predicted_ms", "ms"),
    ("predicted_per_token_ms", "ms"),
    ("predicted_per_second", "token/s"),
    ("draft_n", "token"),
    ("draft_n_accepted", "token"),
)


def _ms(start: float | None, end: float | None) -> float | None:
    if start is None or end is None:
        return None
    return (end - start) * 1000.0


@value_class(frozen=True)
class ClientTimings:
    """Instants on the client's monotonic clock (``time.monotonic()`` seconds); all derived
    values are ``client_measured``.

    ``request_sent``, ``response_headers`` and ``first_byte`` come from the transport when it
    reports them (``OpenAiCompatibleChatClient`` does), otherwise ``request_sent`` is when the
    telemetry layer was entered and the other two are ``None``. ``first_token`` and
    ``last_token`` are the first and last *substantive* updates (text, reasoning or a tool call):
    the role-only first chunk and keepalives are not tokens. They are ``None`` for a
    non-streamed call, whose tokens all arrive at once.
    """

    source: ClassVar[Source] = CLIENT_MEASURED

    started: float
    request_sent: float
    end: float
    response_headers: float | None = None
    first_byte: float | None = None
    first_token: float | None = None
    last_token: float | None = None
    substantive_updates: int = 0

    @property
    def time_to_headers_ms(self) -> float | None:
        return _ms(self.request_sent, self.response_headers)

    @property
    def time_to_first_byte_ms(self) -> float | None:
        return _ms(self.request_sent, self.first_byte)

    @property
    def ttft_ms(self) -> float | None:
        """Request sent → first substantive update. Includes network and queueing, so on
        llama.cpp it is larger than the server's ``prompt_ms``; that gap is the point of keeping
        both."""
        return _ms(self.request_sent, self.first_token)

    @property
    def e2e_ms(self) -> float:
        return (self.end - self.request_sent) * 1000.0

    @property
    def generation_ms(self) -> float | None:
        """First substantive update → last one."""
        return _ms(self.first_token, self.last_token)

    @property
    def mean_inter_token_gap_ms(self) -> float | None:
        """Mean gap between substantive updates. Every server here streams one token per chunk
        (unless told to batch, e.g. vLLM ``--stream-interval``), so this is the inter-token gap
        the caller experiences."""
        generation = self.generation_ms
        if generation is None or self.substantive_updates < 2:
            return None
        return generation / (self.substantive_updates - 1)


@value_class(frozen=True)
class RequestTimings:
    """Client wall clock and server report for one request, kept apart."""

    backend: str
    streamed: bool
    client: ClientTimings
    server: ServerTimings | None = None

    @property
    def output_tokens_per_second_client(self) -> float | None:
        """Decode rate as seen by the client: ``(output_tokens - 1) / generation time``.

        The token count is the server's ``usage`` (the client cannot count tokens); the time is
        the client's, from the first substantive update to the last, so the first token (which
        the prompt pass produces) is excluded as llama.cpp's ``predicted_per_second`` excludes
        prompt time. ``None`` without usage, for a non-streamed call, or with < 2 tokens.
        """
        tokens = None if self.server is None else self.server.output_tokens
        generation = self.client.generation_ms
        if tokens is None or tokens < 2 or not generation:
            return None
        return (tokens - 1) / (generation / 1000.0)

    def measurements(self) -> dict[str, Measurement]:
        """Every known timing value by its source-suffixed name."""
        # deferred: see ``__getattr__`` below (a class the request's log event never needs)
        from telemetry.measurement import Measurement

        return {name: Measurement(v, unit, src) for name, v, unit, src in self._values()}

    def _values(self) -> Iterator[tuple[str, float, str, Source]]:
        """``(name, value, unit, source)`` of each known timing, in ``measurements`` order."""
        client = self.client
        for name, value, unit in (
            ("time_to_headers_ms_client", client.time_to_headers_ms, "ms"),
            ("time_to_first_byte_ms_client", client.time_to_first_byte_ms, "ms"),
            ("ttft_ms_client", client.ttft_ms, "ms"),
            ("e2e_ms_client", client.e2e_ms, "ms"),
            ("mean_inter_token_gap_ms_client", client.mean_inter_token_gap_ms, "ms"),
            ("output_tokens_per_second_client", self.output_tokens_per_second_client, "token/s"),
        ):
            if value is not None:
                yield name, value, unit, CLIENT_MEASURED
        if self.server is not None:
            yield from self.server._values()

    def to_dict(self) -> dict[str, float]:
        """``{name: value}`` for logs and span attributes; the name suffix is the source."""
        return {name: value for name, value, _, _ in self._values()}


def request_timings(response: ChatResponse | ChatResponseUpdate) -> RequestTimings | None:
    """The ``RequestTimings`` the telemetry layer attached, if it did."""
    props = response.additional_properties
    value = props.get(REQUEST_TIMINGS) if props else None
    return value if isinstance(value, RequestTimings) else None


# ``Measurement`` lives in ``telemetry.measurement``: a frozen value class that a request's
# timings and log event never make. Still importable here, on first use.
lazy_exports(__name__, {"telemetry.measurement": ("Measurement",)})
