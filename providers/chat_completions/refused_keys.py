"""Optional body keys a server refuses: sent once more without them, and never again.

The client adds ``stream_options: {include_usage: true}`` to every stream on its own (every
server here reports usage in a stream only when asked). Some OpenAI-compatible endpoints refuse
it: Mistral's API answers 422 ``extra_forbidden`` with ``loc: ["body", "stream_options"]``
(or ``[..., "include_usage"]``), Azure "On Your Data" 400 "Validation error at
#/stream_options" (research-33 §7). Such an answer arrives before any output, so the chat
client sends the request once more without the key (``DroppedKeys.refused``), and leaves the
key out of every later request (``build_chat_request``'s ``dropped_keys``). Only keys the
backend row lists (``BackendProfile.droppable_keys``) and that the client added itself are
dropped: a caller's own key stays the caller's, and its refusal surfaces as the typed error.
Nothing is ever resent once output has started (the refusal is a status code, before the first
byte of the answer), and a second refusal after the resend surfaces too.

A response streamed without ``stream_options`` carries no usage on most servers; it then says
so, under ``additional_properties["usage_unavailable"]`` (``USAGE_UNAVAILABLE``): why, e.g.
``"stream_options refused"``.
"""

from __future__ import annotations

from typing import Any, Final

import orjson

from providers.abstractions.chat_response import ChatResponseUpdate
from providers.abstractions.event_names import REQUEST_KEY_DROPPED
from providers.backends import BackendProfile
from providers.chat_completions.stream_state import StreamState

__all__ = ["USAGE_UNAVAILABLE", "DroppedKeys", "added_keys", "refused_key", "usage_note"]

USAGE_UNAVAILABLE: Final = "usage_unavailable"
"""``additional_properties`` key: the server reported no usage because the key that asks for
it was refused; the value says which (``"stream_options refused"``)."""

_REFUSALS: Final = (400, 422)
_ECHOES: Final = frozenset({"input", "ctx"})
"""Parts of a validation error that quote the request (pydantic's ``input``): a key named
there was sent, not refused."""


def added_keys(profile: BackendProfile, *, stream: bool) -> tuple[str, ...]:
    """The optional keys the request builder adds to a body on its own, on ``profile``."""
    if stream and profile.request_stream_usage:
        return ("stream_options",)
    return ()


def refused_key(status: int, content: bytes, candidates: tuple[str, ...]) -> str | None:
    """The first of ``candidates`` an error answer names as the reason (400 or 422 only)."""
    if status not in _REFUSALS or not candidates:
        return None
    texts = _texts(content)
    for key in candidates:
        if any(key in text for text in texts):
            return key
    return None


def _texts(content: bytes) -> list[str]:
    """The strings of an error body, the parts that quote the request left out; the whole
    text when it is not JSON."""
    try:
        document = orjson.loads(content)
    except orjson.JSONDecodeError:
        return [content.decode("utf-8", "replace")]
    found: list[str] = []
    pending: list[Any] = [document]
    while pending:
        value = pending.pop()
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, dict):
            pending.extend(item for key, item in value.items() if key not in _ECHOES)
        elif isinstance(value, list):
            pending.extend(value)
    return found


class DroppedKeys:
    """The optional keys one client no longer sends (``keys``), and the rule that adds to
    them: one per client, so a refusal is learnt once and remembered by its every request."""

    __slots__ = ("keys",)

    def __init__(self) -> None:
        self.keys: frozenset[str] = frozenset()

    def refused(
        self,
        profile: BackendProfile,
        status: int,
        content: bytes,
        *,
        stream: bool,
        sent_without: frozenset[str],
    ) -> bool:
        """Does this error answer refuse an optional key the request carried (built without
        ``sent_without``, the ``keys`` of then)? It is then dropped for good and the request
        may go once more without it; the event is logged once per key (another request may
        have dropped it meanwhile)."""
        candidates = tuple(
            key
            for key in added_keys(profile, stream=stream)
            if key in profile.droppable_keys and key not in sent_without
        )
        key = refused_key(status, content, candidates)
        if key is None:
            return False
        if key not in self.keys:
            self.keys |= {key}
            _report(key, profile.name, status)
        return True


def _report(key: str, backend: str, status: int) -> None:
    # deferred: structlog, ~25 ms of cold import, only when a server refused a key
    from providers.abstractions.logs import get_logger

    get_logger(__name__).warning(REQUEST_KEY_DROPPED, key=key, backend=backend, status=status)


def usage_note(
    updates: list[ChatResponseUpdate], state: StreamState, dropped: frozenset[str]
) -> list[ChatResponseUpdate]:
    """``updates`` (a stream's last), and an update saying usage is not available when the
    stream went without ``stream_options`` and brought none."""
    if "stream_options" not in dropped:
        return updates
    if state.partial.build().usage is not None:
        return updates
    note = ChatResponseUpdate(additional_properties={USAGE_UNAVAILABLE: "stream_options refused"})
    return [*updates, note]
