"""Responses-API quirks as data: one row per backend, read by the client, never a name test.

Only what the request side must do differently lives here; the event normaliser accepts every
server's events whatever the row says.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RESPONSES_QUIRKS", "ResponsesQuirks", "responses_quirks_for"]


@dataclass(frozen=True, slots=True)
class ResponsesQuirks:
    name: str

    replays_function_calls: bool = True
    """Does ``previous_response_id`` bring back the previous response's ``function_call``
    items? Default true (OpenAI; SGLang's captured ``continue-previous-response-id`` prompt
    replays the whole assistant turn). vLLM 0.33 rebuilds the stored history from ``message``
    items only, so the model sees a tool result with no call before it
    (``transcripts/vllm/captured--qwen3-hermes-store--responses--continue-previous-response-id``,
    ``engine_prompt``); with false, the client sends those calls again itself."""


RESPONSES_QUIRKS: dict[str, ResponsesQuirks] = {
    "generic": ResponsesQuirks("generic"),
    "openai": ResponsesQuirks("openai"),
    "llamacpp": ResponsesQuirks("llamacpp"),
    "vllm": ResponsesQuirks("vllm", replays_function_calls=False),
    "sglang": ResponsesQuirks("sglang"),
}


def responses_quirks_for(backend: str) -> ResponsesQuirks:
    """The row for a backend name; unknown names get the generic (OpenAI-like) row."""
    return RESPONSES_QUIRKS.get(backend.lower(), RESPONSES_QUIRKS["generic"])
