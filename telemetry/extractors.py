"""Timings extractors: one small callable per backend turning what a server reported into
``ServerTimings``.

Servers report cost and speed in different places (docs/wire.md §2.4):

* llama.cpp sends a ``timings`` object (``cache_n``, ``prompt_n``, ``prompt_ms``,
  ``predicted_per_second``, … and ``draft_n``/``draft_n_accepted`` when speculative decoding
  ran) on the last chunk of a stream or at the top level of a non-streamed response, and recent
  builds *also* report ``usage.prompt_tokens_details.cached_tokens``;
* vLLM reports cached tokens in ``usage.prompt_tokens_details`` only with
  ``--enable-prompt-tokens-details`` and has no per-request timings (its per-request speed is
  the client's wall clock, ``ClientTimings``);
* SGLang reports cached tokens only with ``--enable-cache-report`` and reasoning tokens at the
  top level of ``usage``;
* OpenAI always reports cached tokens.

Precedence when both exist: llama.cpp's ``cache_n`` wins over ``usage…cached_tokens`` (it is the
slot's own count; in every capture they agree). Timings are read even when ``usage`` is absent
(Netclaw dropped them then), and a missing count stays ``None``, never 0. Extractors are pure:
they read values and return values; choosing one is ``extractor_for(backend)``, which reads the
backend's row in ``providers.backends`` (its ``timings`` kind).

The built-in backends differ only in two facts, so they are one class and a table:
``BackendTimingsExtractor(backend, read_timings, cache_flag)`` and ``TIMINGS_KINDS`` (kind →
those two facts). A backend that reports elsewhere needs a class of its own implementing
``TimingsExtractor`` (docs/extending.md, "A new timings extractor").
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any, Final, Protocol, runtime_checkable

from providers.abstractions.chat_response import ChatResponse
from providers.abstractions.contents import UsageDetails
from providers.abstractions.records import value_class
from providers.abstractions.usage import parse_usage
from providers.backends import Backend, BackendProfile, TimingsKind, profile_for
from telemetry.timings import ServerTimings

__all__ = [
    "BY_TIMINGS_KIND",
    "TIMINGS_KINDS",
    "BackendTimingsExtractor",
    "GenericTimingsExtractor",
    "KindConstructor",
    "LlamaCppTimingsExtractor",
    "SglangTimingsExtractor",
    "TimingsExtractor",
    "VllmTimingsExtractor",
    "extractor_for",
]

TimingsSource = Mapping[str, Any] | ChatResponse
"""A raw payload (a stream's last chunk, a non-streamed body: anything with ``usage`` and/or
``timings`` at the top level) or a ``ChatResponse`` (its ``usage`` and the raw ``timings`` the
normaliser kept in ``additional_properties``)."""


@runtime_checkable
class TimingsExtractor(Protocol):
    """Reads one backend's report; ``None`` when the source reports nothing at all."""

    def extract(self, source: TimingsSource) -> ServerTimings | None: ...


def _parts(source: TimingsSource) -> tuple[UsageDetails | None, Mapping[str, Any] | None]:
    if isinstance(source, ChatResponse):
        usage = source.usage
        timings = source.additional_properties.get("timings")
    else:
        raw_usage = source.get("usage")
        usage = parse_usage(raw_usage) if isinstance(raw_usage, Mapping) else None
        timings = source.get("timings")
    return usage, timings if isinstance(timings, Mapping) else None


def _int(timings: Mapping[str, Any], key: str) -> int | None:
    value = timings.get(key)
    return value if type(value) is int else None


def _float(timings: Mapping[str, Any], key: str) -> float | None:
    value = timings.get(key)
    if type(value) is float or type(value) is int:
        return float(value)
    return None


def _first(value: int | None, fallback: int | None) -> int | None:
    return fallback if value is None else value


def read_report(
    source: TimingsSource, backend: str, read_timings: bool, cache_flag: str | None
) -> ServerTimings | None:
    usage, timings = _parts(source)
    if not read_timings:
        timings = None
    if usage is None and timings is None:
        return None
    u = usage or UsageDetails()
    if timings is None:  # usage only (vLLM, SGLang): no timing key to look up
        cached = u.cached_input_token_count
        return ServerTimings(
            backend=backend,
            input_tokens=u.input_token_count,
            output_tokens=u.output_token_count,
            cached_input_tokens=cached,
            reasoning_tokens=u.reasoning_token_count,
            missing_cache_flag=cache_flag if cached is None else None,
        )
    t: Mapping[str, Any] = timings
    cache_n, prompt_n, predicted_n = _int(t, "cache_n"), _int(t, "prompt_n"), _int(t, "predicted_n")
    cached = _first(cache_n, u.cached_input_token_count)
    from_timings = None if cache_n is None or prompt_n is None else cache_n + prompt_n
    return ServerTimings(
        backend=backend,
        input_tokens=_first(u.input_token_count, from_timings),
        output_tokens=_first(u.output_token_count, predicted_n),
        cached_input_tokens=cached,
        reasoning_tokens=u.reasoning_token_count,
        prompt_n=prompt_n,
        prompt_ms=_float(t, "prompt_ms"),
        prompt_per_token_ms=_float(t, "prompt_per_token_ms"),
        prompt_per_second=_float(t, "prompt_per_second"),
        predicted_n=predicted_n,
        predicted_ms=_float(t, "predicted_ms"),
        predicted_per_token_ms=_float(t, "predicted_per_token_ms"),
        predicted_per_second=_float(t, "predicted_per_second"),
        draft_n=_int(t, "draft_n"),
        draft_n_accepted=_int(t, "draft_n_accepted"),
        missing_cache_flag=cache_flag if cached is None else None,
    )


@value_class(frozen=True)
class BackendTimingsExtractor:
    """Reads ``usage`` and, with ``read_timings``, a llama.cpp-style ``timings`` object (the
    object first, ``usage`` for what it lacks); ``cache_flag`` is the server flag to name when no
    cached-token count came. ``backend`` labels the result."""

    backend: str
    read_timings: bool = True
    cache_flag: str | None = None

    @classmethod
    def for_kind(cls, kind: TimingsKind, backend: str | None = None) -> BackendTimingsExtractor:
        """The extractor of a ``TIMINGS_KINDS`` row, labelled ``backend`` (default: the kind)."""
        read_timings, cache_flag = TIMINGS_KINDS[kind]
        return cls(backend or kind, read_timings, cache_flag)

    def extract(self, source: TimingsSource) -> ServerTimings | None:
        return read_report(source, self.backend, self.read_timings, self.cache_flag)


TIMINGS_KINDS: Final[Mapping[TimingsKind, tuple[bool, str | None]]] = {
    # llama.cpp: the ``timings`` object first, ``usage`` for what it lacks
    "llamacpp": (True, None),
    # vLLM: ``usage.prompt_tokens_details.cached_tokens`` (with the flag) and
    # ``completion_tokens_details.reasoning_tokens``; its speed is the client's (``ClientTimings``)
    "vllm": (False, "--enable-prompt-tokens-details"),
    # SGLang: cached tokens (with the flag) and the top-level ``usage.reasoning_tokens``
    "sglang": (False, "--enable-cache-report"),
    # OpenAI and unknown servers: standard ``usage``, plus a llama.cpp-style ``timings`` object if
    # one is there (an undetected llama.cpp, or a server derived from it); its keys are checked by
    # name and type, so an unrelated ``timings`` field yields nothing rather than nonsense
    "generic": (True, None),
}
"""``BackendProfile.timings`` → ``(read_timings, cache_flag)``. Every ``TimingsKind`` has a row
(``tests/unit/providers/test_backends_table.py``)."""


class KindConstructor(Protocol):
    """One kind's extractor, labelled ``backend`` (default: the kind's name)."""

    def __call__(self, backend: str | None = None) -> BackendTimingsExtractor: ...


BY_TIMINGS_KIND: Final[Mapping[TimingsKind, KindConstructor]] = {
    kind: partial(BackendTimingsExtractor.for_kind, kind) for kind in TIMINGS_KINDS
}
"""Each kind's constructor: ``TIMINGS_KINDS`` with the backend's label still to give."""

# The names each kind had when it was a class of its own (public since the first release).
LlamaCppTimingsExtractor: Final = BY_TIMINGS_KIND["llamacpp"]
VllmTimingsExtractor: Final = BY_TIMINGS_KIND["vllm"]
SglangTimingsExtractor: Final = BY_TIMINGS_KIND["sglang"]
GenericTimingsExtractor: Final = BY_TIMINGS_KIND["generic"]


def extractor_for(
    backend: str | BackendProfile | None,
    overrides: Mapping[str, TimingsExtractor] | None = None,
) -> TimingsExtractor:
    """The extractor for a backend name (or profile); ``overrides`` wins over the built-ins.

    The kind is the row's ``timings`` (``providers.backends``); unknown backends get the
    ``generic`` kind labelled with their own name.
    """
    if isinstance(backend, BackendProfile):
        row, key = backend, backend.name.lower()
    else:
        key = (backend or Backend.GENERIC).lower()
        row = profile_for(key)
    if overrides and key in overrides:
        return overrides[key]
    return BackendTimingsExtractor.for_kind(row.timings, key)
