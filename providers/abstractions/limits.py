"""``Limits``: how much a server (or the model's output) may make the client hold.

Every buffer that grows with what the server sends has a bound here, so a broken or hostile
server costs a typed error, not the process's memory. The defaults are far above anything a
healthy server sends (the largest chunk in the captured transcripts is a few kilobytes, the
longest tool call a few tens), and each is settable per backend in YAML (``limits:``).

Exceeding one raises ``InvalidResponseError`` (``ResponseTooLargeError``) carrying the partial
response received so far, like every other mid-stream failure.
"""

from __future__ import annotations

from dataclasses import fields

from providers.abstractions.errors import ConfigurationError
from providers.abstractions.records import value_class

__all__ = ["DEFAULT_LIMITS", "Limits"]

_MiB = 1024 * 1024


@value_class(frozen=True)
class Limits:
    """Bounds on what one request may make the client hold; every field is a count > 0."""

    max_event_bytes: int = 16 * _MiB
    """One SSE line or event (``data:`` lines joined), before it is parsed. An event of several
    lines also counts what holding each line costs (48 bytes a line after the first), so a
    flood of empty ``data:`` lines is bounded in memory, not in payload alone."""

    max_body_bytes: int = 64 * _MiB
    """A whole non-streamed body (a completion, an error page, a probe's answer), after
    decompression."""

    max_stream_bytes: int = 1024 * _MiB
    """A whole streamed body after decompression: what a gzip bomb would otherwise expand into."""

    max_error_body_bytes: int = 64 * 1024
    """How much of an error body is kept on the exception (``ProviderError.body``)."""

    max_output_bytes: int = 64 * _MiB
    """The output of one response, in UTF-8 bytes: its text, reasoning and tool-call arguments
    together, streamed or not. A stream is measured only once it has carried that many bytes,
    then as more arrive (``providers.chat_completions.output_bound``), so it may pass the bound
    by up to 1/64 of it before it fails."""

    max_tool_argument_bytes: int = 8 * _MiB
    """The argument text of one tool call, assembled from its deltas."""

    max_tool_calls: int = 1024
    """Tool calls in one response."""

    max_held_text_bytes: int = 8 * _MiB
    """Text the recovery layer holds back while it waits for an unclosed block to close."""

    max_held_updates: int = 100_000
    """Updates retry and fallback hold before the first substantive one (keepalives, empty
    chunks): past it the stream fails rather than hold more."""

    max_json_depth: int = 200
    """Nesting depth of any JSON the server sends (events, arguments, error bodies); deeper is
    refused before Python's recursion limit turns it into an untyped ``RecursionError``. A tool
    call's arguments deeper than it make the call flagged (``error`` set, arguments empty, the
    text kept), as arguments that do not parse do."""

    max_connections: int = 1000
    """Connections the client's own pool opens to the server at once. A batch server answers
    hundreds of streams concurrently; httpx's default of 100 would queue the rest inside the
    client, where no server metric sees them (openai-python sets 1000 for the same reason)."""

    max_keepalive_connections: int = 100
    """Idle connections the pool keeps open for reuse."""

    def __post_init__(self) -> None:
        for spec in fields(self):
            value = getattr(self, spec.name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ConfigurationError(f"limits.{spec.name} must be an integer > 0: {value!r}")


DEFAULT_LIMITS = Limits()
