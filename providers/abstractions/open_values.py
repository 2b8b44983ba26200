"""Open string values: a name with well-known constants that never rejects an unknown value.

Servers invent finish reasons (`abort`, `error`, `eos_token`) and roles (`developer`) faster than
a closed ``Enum`` can follow; raising on them would turn a harmless novelty into a failed request.
Like MEAI's ``ChatRole`` and ``ChatFinishReason`` structs, equality is case-insensitive and also
holds against plain strings, so ``reason == "stop"`` reads naturally.
"""

from __future__ import annotations

from typing import ClassVar

__all__ = ["ChatFinishReason", "ChatRole", "OpenValue"]


class OpenValue:
    """Base of the open values; subclasses only declare their constants."""

    __slots__ = ("_key", "value")

    def __init__(self, value: str) -> None:
        if not isinstance(value, str) or not value:
            raise ValueError(f"{type(self).__name__} needs a non-empty string, got {value!r}")
        self.value = value
        self._key = value.lower()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, OpenValue):
            return type(other) is type(self) and other._key == self._key
        if isinstance(other, str):
            return other.lower() == self._key
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._key)

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.value!r})"


class ChatRole(OpenValue):
    """Who authored a message: `system`, `user`, `assistant`, `tool`, or any other server value."""

    __slots__ = ()

    SYSTEM: ClassVar[ChatRole]
    USER: ClassVar[ChatRole]
    ASSISTANT: ClassVar[ChatRole]
    TOOL: ClassVar[ChatRole]


ChatRole.SYSTEM = ChatRole("system")
ChatRole.USER = ChatRole("user")
ChatRole.ASSISTANT = ChatRole("assistant")
ChatRole.TOOL = ChatRole("tool")


class ChatFinishReason(OpenValue):
    """Why generation stopped. Unknown server values (SGLang's `abort`) are kept as they are."""

    __slots__ = ()

    STOP: ClassVar[ChatFinishReason]
    LENGTH: ClassVar[ChatFinishReason]
    TOOL_CALLS: ClassVar[ChatFinishReason]
    CONTENT_FILTER: ClassVar[ChatFinishReason]


ChatFinishReason.STOP = ChatFinishReason("stop")
ChatFinishReason.LENGTH = ChatFinishReason("length")
ChatFinishReason.TOOL_CALLS = ChatFinishReason("tool_calls")
ChatFinishReason.CONTENT_FILTER = ChatFinishReason("content_filter")

_ROLES = {r.value: r for r in (ChatRole.SYSTEM, ChatRole.USER, ChatRole.ASSISTANT, ChatRole.TOOL)}
_REASONS = {
    r.value: r
    for r in (
        ChatFinishReason.STOP,
        ChatFinishReason.LENGTH,
        ChatFinishReason.TOOL_CALLS,
        ChatFinishReason.CONTENT_FILTER,
    )
}


def role_of(value: str) -> ChatRole:
    """The shared constant for a known role, a new value otherwise (no allocation per chunk)."""
    return _ROLES.get(value) or ChatRole(value)


def finish_reason_of(value: str) -> ChatFinishReason:
    """The shared constant for a known finish reason, a new value otherwise."""
    return _REASONS.get(value) or ChatFinishReason(value)
