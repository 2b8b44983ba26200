"""How a conversation's history reaches a Responses server: ``ConversationMode``.

``STATELESS`` (the default) sends the whole history as input items on every request. It is
correct on every server, store or not, and it is what the chat client does.

``PREVIOUS_RESPONSE_ID`` sends only what is new since the last response plus that response's
id, for servers whose response store is on (vLLM with ``VLLM_ENABLE_RESPONSES_API_STORE=1``,
SGLang with ``--enable-response-store``, OpenAI). The caller still passes the whole history, as
to any ``ChatClient``: ``ConversationChain`` recognises it. When the history sent now starts with
exactly the items of the last stored turn (its input and the output items our response gave
back), only the rest is sent; anything else (another conversation, an edited history) is sent
statelessly. So switching the mode by configuration does not change the conversation the model
sees, only how many bytes carry it, with one cosmetic exception: a replayed answer keeps the
edge whitespace the server stored (vLLM renders an earlier answer as ``"\n\nIt is…"``, the
newlines the model wrote after ``</think>``, where the history has ``"It is…"``; ``_key``).

One server quirk is data, not a branch: vLLM rebuilds the stored history from ``message`` items
only and silently drops the previous response's ``function_call`` items (its captured
``continue-previous-response-id`` prompt shows a tool result with no call before it). With
``replays_function_calls=False`` those calls are sent again, ahead of their outputs, so the
model's prompt contains them. A stored turn the history cannot reproduce (a streamed
reasoning-then-call turn stores a ``"\\n\\n"`` message item the history leaves out, which vLLM
would replay as an empty assistant turn) is not chained from: the client's ``_record`` forgets
it, and the next request goes stateless.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any

from providers.abstractions.chat_response import ChatResponse
from providers.abstractions.errors import InvalidRequestError
from providers.responses.items import Item, messages_to_input
from providers.transport.error_bodies import parse_error_body

__all__ = ["ConversationChain", "ConversationMode", "store_refused"]

_STORE_PARAMS = frozenset({"previous_response_id", "response_id"})


class ConversationMode(enum.StrEnum):
    """How a Responses-API client sends a conversation's history (``conversation_mode:``).
    Stateless is the default because not every server keeps a response store."""

    STATELESS = "stateless"
    """The whole history as input items on every request (default; correct everywhere)."""
    PREVIOUS_RESPONSE_ID = "previous_response_id"
    """Only new items plus ``previous_response_id``; needs the server's response store."""


class ConversationChain:
    """The last stored turn of one conversation: its response id and the items it covers.

    One chain per client: an agent loop is one conversation at a time. A request for a
    different conversation simply does not match and goes stateless.
    """

    __slots__ = ("_keys", "_response_id", "_trailing_calls", "replays_function_calls")

    def __init__(self, *, replays_function_calls: bool = True) -> None:
        self.replays_function_calls = replays_function_calls
        self._response_id: str | None = None
        self._keys: list[Any] = []
        self._trailing_calls: list[Item] = []

    @property
    def response_id(self) -> str | None:
        """The stored turn a matching request continues from."""
        return self._response_id

    def plan(self, items: Sequence[Item]) -> tuple[str | None, list[Item]]:
        """``(previous_response_id, items to send)`` for this request's full history."""
        covered = len(self._keys)
        if (
            self._response_id is None
            or len(items) < covered
            or [_key(item) for item in items[:covered]] != self._keys
        ):
            return None, list(items)
        new = list(items[covered:])
        if not self.replays_function_calls:
            new = self._trailing_calls + new
        return self._response_id, new

    def record(
        self, response_id: str | None, sent_history: Sequence[Item], output: Sequence[Item]
    ) -> None:
        """After a stored response: the history it covers is what was sent plus its output."""
        if response_id is None:
            self.forget()
            return
        self._response_id = response_id
        self._keys = [_key(item) for item in (*sent_history, *output)]
        self._trailing_calls = [item for item in output if item.get("type") == "function_call"]

    def record_turn(
        self,
        sent_history: Sequence[Item],
        result: ChatResponse,
        *,
        merge_system_messages: bool,
        replay_reasoning: bool,
    ) -> None:
        """After a stored turn: remember it, unless the server stored what the history cannot
        reproduce.

        A stream that ended unfinished (or without an id) leaves nothing to continue from. And
        vLLM and SGLang store, between reasoning and a call, the ``"\\n\\n"`` message item they
        stream (not when answering whole), which the history leaves out: continuing by id would
        replay it, and vLLM renders it as an empty assistant turn before the call, a prompt the
        stateless path never gives. So the next request sends the whole history (still stored)
        and the chain restarts there.
        """
        if result.finish_reason is None or result.response_id is None:
            self.forget()
            return
        _, output = messages_to_input(
            result.messages,
            merge_system_messages=merge_system_messages,
            replay_reasoning=replay_reasoning,
        )
        _, stored = messages_to_input(
            result.messages,
            merge_system_messages=merge_system_messages,
            replay_reasoning=replay_reasoning,
            keep_separators=True,
        )
        if stored != output:
            self.forget()
            return
        self.record(result.response_id, sent_history, output)

    def forget(self) -> None:
        self._response_id = None
        self._keys = []
        self._trailing_calls = []


def _key(item: Item) -> Any:
    """What must match for an item to be "the same": text up to its edge whitespace.

    The recovery layer trims the template's whitespace around blocks (``"\n\nIt is sunny"``
    comes back as ``"It is sunny"``); the server stored its own version, which is the truer one,
    so that difference must not force a stateless resend.
    """
    if item.get("type") == "message" and isinstance(item.get("content"), str):
        return ("message", item.get("role"), item["content"].strip())
    return item


def store_refused(error: InvalidRequestError) -> bool:
    """Does ``error`` say the server stores no responses (so ``previous_response_id`` cannot
    work)?

    vLLM without its store answers 404 "Response with id … not found." (param
    ``response_id``), SGLang 400 "Response store is disabled…" (param
    ``previous_response_id``); the decision reads the error's fields, and the server's
    message only when it names no parameter.
    """
    if error.status not in (400, 404):
        return False
    if error.param in _STORE_PARAMS:
        return True
    message = parse_error_body(error.body).message.lower()
    return "previous_response_id" in message or "store" in message
