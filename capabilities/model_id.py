"""Model ids: matching the configured id to served ids, and explaining a mismatch.

A wrong model id is the most common set-up mistake with self-hosted servers: vLLM's
``--served-model-name`` is ``Qwen/Qwen3-8B`` while the configuration says ``qwen3-8b``. vLLM
answers 404 on every request, SGLang reads ``qwen3:8b`` as a LoRA adapter, Ollama tries to load
a model that is not there. The error must say what *is* served and what was probably meant, so
it names the configured id, the served ids and the closest match.

Pure: no I/O. The resolver supplies the served ids; the client supplies a failed request's status
and body to ``model_not_found_error``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from providers.abstractions.errors import ModelNotFoundError
from providers.transport.error_bodies import parse_error_body

__all__ = [
    "closest_model_id",
    "match_model_id",
    "model_not_found_error",
    "validate_model_id",
]

_SHOWN = 10
"""At most this many served ids are listed in a message (an LM Studio or Ollama box may list
hundreds of downloaded models)."""


def _basename(model_id: str) -> str:
    """``Qwen/Qwen3-8B`` → ``qwen3-8b``; ``qwen3:latest`` → ``qwen3``."""
    name = model_id.rsplit("/", 1)[-1].lower()
    return name.removesuffix(":latest")


def match_model_id(configured: str | None, served_ids: Sequence[str]) -> str | None:
    """The served id ``configured`` refers to for *reading capabilities*, or ``None``.

    Exact first, then case-insensitive (when unambiguous), then Ollama's implicit ``:latest``.
    With no configured id, or no match, a server that serves exactly one model is taken to mean
    that model: llama.cpp answers with it whatever is asked, and for the others its data is still
    the best description of what will answer. This is deliberately looser than
    ``validate_model_id``, which decides whether requests will work.
    """
    if configured is not None:
        if configured in served_ids:
            return configured
        folded = [s for s in served_ids if s.lower() == configured.lower()]
        if len(folded) == 1:
            return folded[0]
        latest = [s for s in served_ids if s.removesuffix(":latest") == configured]
        if len(latest) == 1:
            return latest[0]
    return served_ids[0] if len(served_ids) == 1 else None


def closest_model_id(configured: str, served_ids: Sequence[str]) -> str | None:
    """The served id the user most likely meant, or ``None``.

    In order: a case-insensitive match (``qwen3-8b`` → ``Qwen3-8B``); a match ignoring the
    organisation prefix and ``:latest`` (``qwen3-8b`` → ``Qwen/Qwen3-8B``); the closest by
    ``difflib`` on lower-cased ids, then on basenames; finally the only served id, if there is one.
    """
    if not served_ids:
        return None
    lowered = configured.lower()
    for candidate in served_ids:
        if candidate.lower() == lowered:
            return candidate
    base = _basename(configured)
    for candidate in served_ids:
        if _basename(candidate) == base:
            return candidate
    by_lower = {s.lower(): s for s in served_ids}
    close = difflib.get_close_matches(lowered, list(by_lower), n=1, cutoff=0.6)
    if close:
        return by_lower[close[0]]
    by_base = {_basename(s): s for s in served_ids}
    close = difflib.get_close_matches(base, list(by_base), n=1, cutoff=0.6)
    if close:
        return by_base[close[0]]
    return served_ids[0] if len(served_ids) == 1 else None


def _listing(served_ids: Sequence[str]) -> str:
    shown = ", ".join(f"`{s}`" for s in served_ids[:_SHOWN])
    more = len(served_ids) - _SHOWN
    return shown + (f" and {more} more" if more > 0 else "")


def _message(
    configured: str | None, served_ids: Sequence[str], backend: str | None, where: str | None
) -> str:
    server = backend or "the backend"
    if where:
        server += f" at {where}"
    if not served_ids:
        configured_text = f"; configured `{configured}`" if configured is not None else ""
        return f"{server} lists no models{configured_text}"
    serves = f"{server} serves {_listing(served_ids)}"
    if configured is None:
        return f"no model configured and {serves}; choose one"
    text = f"{serves}; configured `{configured}`"
    suggestion = closest_model_id(configured, served_ids)
    if suggestion is not None:
        text += f" — did you mean `{suggestion}`?"
    return text


def validate_model_id(
    configured: str | None,
    served_ids: Sequence[str],
    *,
    backend: str | None = None,
    base_url: str | None = None,
) -> str:
    """The id to send: ``configured`` when the server serves exactly that id.

    With no configured id and exactly one served model, that model. Anything else raises
    ``ModelNotFoundError`` naming the configured id, the served ids and the closest match. The
    comparison is exact, case included, because vLLM's is (a case-only difference is a 404 there).
    Callers skip this for servers that ignore the field (``ModelCapabilities.model_field_ignored``).
    """
    if configured is not None and configured in served_ids:
        return configured
    if configured is None and len(served_ids) == 1:
        return served_ids[0]
    raise ModelNotFoundError(
        _message(configured, served_ids, backend, base_url),
        backend=backend,
        code="model_not_found",
        param="model",
        user_message=f"The model server does not serve the configured model `{configured}`.",
    )


# "The model `X` does not exist." (vLLM 404), "The model 'x' does not exist" (SGLang
# /v1/models/{id}, Responses), "model 'x' not found" (llama.cpp router 400), 'model "x" not
# found, try pulling it first' (Ollama 404) — docs/wire.md §4.3.
_NOT_FOUND = re.compile(
    r"\bmodel\b[^.]{0,200}?(?:does not exist|not found|is not (?:served|available|loaded))",
    re.IGNORECASE,
)
# SGLang reads `base:adapter` as a LoRA request: an unknown `qwen3:8b` gives this 400.
_LORA_NOT_ENABLED = re.compile(r"LoRA adapter .* was requested, but LoRA is not enabled", re.I)
# vLLM ≥ 0.10: "... does not exist. Valid aliases: a, b."
_VALID_ALIASES = re.compile(r"Valid aliases:\s*(.+?)\.?\s*$", re.IGNORECASE | re.DOTALL)


def model_not_found_error(
    status: int,
    body: bytes | str | None,
    *,
    configured: str | None,
    served_ids: Sequence[str] | None = None,
    backend: str | None = None,
    base_url: str | None = None,
) -> ModelNotFoundError | None:
    """The same explained error as ``validate_model_id`` for a request the server refused
    because of its ``model`` field (vLLM 404, SGLang 400/404, llama.cpp router 400, Ollama 404),
    or ``None`` when the answer is about something else.

    ``served_ids`` comes from the resolver's cache; without it, vLLM's "Valid aliases" list is
    used when the message has one.
    """
    if status not in (400, 404):
        return None
    parsed = parse_error_body(body)
    message = parsed.message
    about_model = (
        parsed.code == "model_not_found"
        or (status == 404 and parsed.param == "model")
        or _NOT_FOUND.search(message) is not None
        or _LORA_NOT_ENABLED.search(message) is not None
    )
    if not about_model:
        return None
    served = list(served_ids or ())
    if not served and (aliases := _VALID_ALIASES.search(message)):
        served = [a.strip().strip("`'\"") for a in aliases.group(1).split(",") if a.strip()]
    text = _message(configured, served, backend, base_url)
    return ModelNotFoundError(
        f"HTTP {status}: {text} (server said: {message})" if message else f"HTTP {status}: {text}",
        status=status,
        backend=backend,
        error_type=parsed.error_type,
        code=parsed.code if parsed.code is not None else "model_not_found",
        param="model",
        body=body.decode("utf-8", "replace") if isinstance(body, bytes) else body,
        user_message=f"The model server does not serve the configured model `{configured}`.",
    )
