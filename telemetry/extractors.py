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
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final, Protocol, runtime_checkable

from providers.abstractions.chat_response import ChatResponse
from providers.abstractions.contents import UsageDetails
from providers.abstractions.usage import parse_usage
from providers.backends import Backend, BackendProfile, profile_for
from telemetry.timings import ServerTimings

if TYPE_CHECKING:
    from telemetry._generic_extractor import GenericTimingsExtractor
    from telemetry._llamacpp_extractor import LlamaCppTimingsExtractor
    from telemetry._sglang_extractor import SglangTimingsExtractor
    from telemetry._vllm_extractor import VllmTimingsExtractor

__all__ = [
    "BY_TIMINGS_KIND",
    "GenericTimingsExtractor",
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


def _first(*values: int | None) -> int | None:
    return next((v for v in values if v is not None), None)


def read_report(
    source: TimingsSource, backend: str, read_timings: bool, cache_flag: str | None
) -> ServerTimings | None:
    usage, timings = _parts(source)
    if not read_timings:
        timings = None
    if usage is None and timings is None:
        return None
    u = usage or UsageDetails()
    t: Mapping[str, Any] = timings or {}
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


class _ByKind(Mapping[str, Callable[[str], TimingsExtractor]]):
    """The extractor classes by kind, each module imported when its kind is first asked for."""

    def __getitem__(self, kind: str) -> Callable[[str], TimingsExtractor]:
        name = _KIND_CLASS[kind]  # (KeyError for an unknown kind, as a dict would raise)
        return getattr(sys.modules[__name__], name)  # type: ignore[no-any-return]

    def __iter__(self) -> Iterator[str]:
        return iter(_KIND_CLASS)

    def __len__(self) -> int:
        return len(_KIND_CLASS)

    def __repr__(self) -> str:
        return repr(dict(self))


_KIND_CLASS: Final = {
    "llamacpp": "LlamaCppTimingsExtractor",
    "vllm": "VllmTimingsExtractor",
    "sglang": "SglangTimingsExtractor",
    "generic": "GenericTimingsExtractor",
}
_CLASS_MODULE: Final = {
    "LlamaCppTimingsExtractor": "telemetry._llamacpp_extractor",
    "VllmTimingsExtractor": "telemetry._vllm_extractor",
    "SglangTimingsExtractor": "telemetry._sglang_extractor",
    "GenericTimingsExtractor": "telemetry._generic_extractor",
}

BY_TIMINGS_KIND: Final[Mapping[str, Callable[[str], TimingsExtractor]]] = _ByKind()
"""``BackendProfile.timings`` → the extractor kind, built with the backend's name as its label.
Every ``TimingsKind`` has an entry (``tests/unit/test_backends_table.py``)."""


def __getattr__(name: str) -> Any:
    # The extractor classes live one per module (a client needs only its backend's, and each
    # module costs its load); they are resolved here on first use, as ``providers.lazy_exports``
    # resolves a package root's names.
    module = _CLASS_MODULE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def extractor_for(
    backend: str | BackendProfile | None,
    overrides: Mapping[str, TimingsExtractor] | None = None,
) -> TimingsExtractor:
    """The extractor for a backend name (or profile); ``overrides`` wins over the built-ins.

    The kind is the row's ``timings`` (``providers.backends``); unknown backends get
    ``GenericTimingsExtractor`` labelled with their own name.
    """
    if isinstance(backend, BackendProfile):
        row, key = backend, backend.name.lower()
    else:
        key = (backend or Backend.GENERIC).lower()
        row = profile_for(key)
    if overrides and key in overrides:
        return overrides[key]
    return BY_TIMINGS_KIND[row.timings](key)
