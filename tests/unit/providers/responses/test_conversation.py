"""``ConversationChain``: which part of a full history a stored response already covers."""

from __future__ import annotations

from typing import Any

from providers.responses import ConversationChain

USER = {"type": "message", "role": "user", "content": "Weather in Paris?"}
CALL = {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": "{}"}
OUTPUT = {"type": "function_call_output", "call_id": "c1", "output": "sunny"}
ANSWER = {"type": "message", "role": "assistant", "content": "\n\nIt is sunny."}


def chain_after_first_turn(**kwargs: Any) -> ConversationChain:
    chain = ConversationChain(**kwargs)
    chain.record("resp_1", [USER], [CALL])
    return chain


def test_nothing_recorded_sends_everything() -> None:
    assert ConversationChain().plan([USER]) == (None, [USER])


def test_continuation_sends_only_new_items() -> None:
    chain = chain_after_first_turn()
    assert chain.plan([USER, CALL, OUTPUT]) == ("resp_1", [OUTPUT])
    assert chain.response_id == "resp_1"


def test_lossy_server_gets_the_previous_calls_again() -> None:
    # vLLM drops the stored response's function_call items when it rebuilds the history.
    chain = chain_after_first_turn(replays_function_calls=False)
    assert chain.plan([USER, CALL, OUTPUT]) == ("resp_1", [CALL, OUTPUT])


def test_another_conversation_or_an_edited_history_goes_stateless() -> None:
    chain = chain_after_first_turn()
    other = {**USER, "content": "Weather in Rome?"}
    assert chain.plan([other, CALL, OUTPUT]) == (None, [other, CALL, OUTPUT])
    assert chain.plan([USER]) == (None, [USER])  # shorter than what was stored


def test_edge_whitespace_of_text_does_not_break_the_match() -> None:
    # The recovery layer hands the caller "It is sunny." where the server stored "\n\nIt is…".
    chain = ConversationChain()
    chain.record("resp_2", [USER], [ANSWER])
    trimmed = {**ANSWER, "content": "It is sunny."}
    follow_up = {"type": "message", "role": "user", "content": "And tomorrow?"}
    assert chain.plan([USER, trimmed, follow_up]) == ("resp_2", [follow_up])


def test_forget_and_record_without_id() -> None:
    chain = chain_after_first_turn()
    chain.record(None, [USER], [CALL])
    assert chain.plan([USER, CALL, OUTPUT]) == (None, [USER, CALL, OUTPUT])
    chain = chain_after_first_turn()
    chain.forget()
    assert chain.response_id is None
