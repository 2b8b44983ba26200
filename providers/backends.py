"""Backend quirks as data: one frozen ``BackendProfile`` row per backend.

The normaliser is tolerant by construction (it reads every known field name, accepts every
known chunk shape), so most differences need no flag at all. What remains is what the *request*
must look like, which differs in ways a server punishes. Code reads these flags and never tests
a backend's name; a new backend is a new row here plus its transcripts.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PROFILES", "BackendProfile", "profile_for"]


@dataclass(frozen=True, slots=True)
class BackendProfile:
    name: str
    """The backend this row describes; also the ``backend`` recorded on errors."""

    reasoning_fields: tuple[str, ...] = ("reasoning_content", "reasoning")
    """Delta/message keys carrying reasoning, in order of preference. vLLM ≥ Jan 2026 sends
    ``reasoning``; llama.cpp and SGLang ``reasoning_content``; vLLM Nov 2025 to Jan 2026 sent both
    with the same text, so only the first present one is read (no double count)."""

    stop_sequence_fields: tuple[str, ...] = ("stop_reason", "matched_stop")
    """Choice keys naming the stop string or token that ended generation (vLLM ``stop_reason``,
    SGLang ``matched_stop``), unified as ``additional_properties["stop_sequence"]``."""

    request_stream_usage: bool = True
    """Send ``stream_options.include_usage`` when streaming. Default on: every server here only
    reports usage in a stream when asked. It is never sent without ``stream: true`` (vLLM: 400)."""

    merge_system_messages: bool = False
    """Merge every system message into one leading message. Strict chat templates (Qwen and
    Llama under vLLM) answer 400 "System message must be at the beginning" otherwise."""

    max_tokens_field: str = "max_tokens"
    """Body key for ``ChatOptions.max_output_tokens``. All three servers accept ``max_tokens``;
    OpenAI's reasoning models require ``max_completion_tokens``."""

    replay_reasoning: bool = False
    """Send earlier assistant reasoning back as ``reasoning_content`` (DeepSeek-style APIs want
    it; most chat templates drop or mis-render it)."""


PROFILES: dict[str, BackendProfile] = {
    "generic": BackendProfile("generic"),
    "openai": BackendProfile("openai", max_tokens_field="max_completion_tokens"),
    "llamacpp": BackendProfile("llamacpp"),
    "vllm": BackendProfile("vllm", merge_system_messages=True),
    "sglang": BackendProfile("sglang"),
    "ollama": BackendProfile("ollama"),
    "lmstudio": BackendProfile("lmstudio"),
}


def profile_for(backend: str | BackendProfile | None) -> BackendProfile:
    """The row for a backend name; unknown names fall back to the tolerant generic row."""
    if isinstance(backend, BackendProfile):
        return backend
    return PROFILES.get((backend or "generic").lower(), PROFILES["generic"])
