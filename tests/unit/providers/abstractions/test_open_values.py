"""Open string values: ``ChatRole`` and ``ChatFinishReason`` (issue 2 item 1, STYLE.md 7)."""

from __future__ import annotations

import pytest

from providers.abstractions.open_values import ChatFinishReason, ChatRole, finish_reason_of, role_of
from providers.abstractions.options import ChatToolMode


def test_case_insensitive_equality() -> None:
    assert ChatRole("User") == ChatRole.USER
    assert ChatRole("ASSISTANT") == ChatRole.ASSISTANT
    assert ChatFinishReason("Stop") == ChatFinishReason.STOP
    assert ChatFinishReason.TOOL_CALLS == "TOOL_CALLS"
    assert ChatRole.SYSTEM == "system"
    assert ChatRole.SYSTEM != "user"
    assert ChatFinishReason.STOP != ChatFinishReason.LENGTH


def test_original_spelling_kept() -> None:
    assert ChatRole("User").value == "User"
    assert str(ChatFinishReason("EOS_Token")) == "EOS_Token"
    assert repr(ChatRole("developer")) == "ChatRole('developer')"


def test_unknown_values_are_kept_not_rejected() -> None:
    abort = finish_reason_of("abort")
    assert abort.value == "abort"
    assert abort == "abort"
    assert abort not in (
        ChatFinishReason.STOP,
        ChatFinishReason.LENGTH,
        ChatFinishReason.TOOL_CALLS,
        ChatFinishReason.CONTENT_FILTER,
    )
    assert role_of("developer").value == "developer"


def test_known_values_are_the_shared_constants() -> None:
    assert finish_reason_of("stop") is ChatFinishReason.STOP
    assert role_of("assistant") is ChatRole.ASSISTANT


def test_hash_consistent_with_eq() -> None:
    assert hash(ChatRole("USER")) == hash(ChatRole.USER)
    assert hash(ChatFinishReason("Length")) == hash(ChatFinishReason.LENGTH)
    assert len({ChatRole("user"), ChatRole("User"), ChatRole("USER")}) == 1
    assert {ChatRole.USER: 1}[ChatRole("uSeR")] == 1
    # against the lower-case plain string too
    assert ChatRole.TOOL == "tool"
    assert hash(ChatRole.TOOL) == hash("tool")


def test_different_kinds_are_not_equal() -> None:
    assert ChatRole("stop") != ChatFinishReason("stop")
    assert ChatFinishReason.STOP != 1
    assert ChatRole.USER != None  # noqa: E711


@pytest.mark.parametrize("bad", ["", None, 3])
def test_empty_or_non_string_is_rejected(bad: object) -> None:
    with pytest.raises(ValueError, match="non-empty string"):
        ChatRole(bad)  # type: ignore[arg-type]


def test_tool_mode_is_an_open_value_too() -> None:
    assert ChatToolMode("AUTO") == ChatToolMode.AUTO
    assert ChatToolMode.REQUIRED.to_openai() == "required"
