"""``SessionAffinityChatClient``: one stable routing key per conversation, for cache-aware routers.

A server reuses its prefix (KV) cache only on the replica that computed it, so a router in front
of several replicas should send every turn of one conversation to the same one. Routers do that
by a key the client sends; this layer sends it, per ``SessionAffinity.mode``:

    vllm-router   ``X-Session-ID`` (vllm-router's ``consistent_hash`` policy reads it first)
    smg           ``X-SMG-Routing-Key`` (SGLang's model gateway, ``consistent_hashing``)
    header        a header named in the configuration (vLLM production-stack's router
                  ``--routing-logic session --session-key <name>``)
    echo          nothing until the router issues a token in a response header (llm-d's
                  ``x-session-token``), then that token on the conversation's next requests

The key. ``ChatOptions.conversation_id`` when the caller sets one (as given when it is a
sendable header value of at most 256 characters, else its hash). Otherwise it is derived from the
conversation's opening: a hash of the messages up to and including the first user message
(the system or developer prompt and the first question). A conversation grows at its end, so
its opening, and its key, stays the same turn after turn, while conversations that open
differently get different keys. Two conversations that open identically share a key, and that
is what a prefix cache wants (their prefix is the same); a caller who must keep them apart, or
who rewrites the opening (a sliding window that drops the first turns, a system prompt holding
the time), sets ``conversation_id``.

The same key on retries and failover: the key is put into the request's
``ChatOptions.headers`` once per call, and retry and fallback resend the options they were
given. A caller's own header of the same name wins. An echoed token is stored per conversation
key only, so it never reaches another conversation, in a map bounded by
``max_conversations`` (least recently used first out); a token longer than
``max_token_chars`` or not sendable as a header value is ignored, not stored. Tokens are read
from answers below 400 only: an error from a failing replica must not pin a conversation to it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from typing import Final

from providers.abstractions.chat_client import ChatClient, ChatInput
from providers.abstractions.chat_response import ChatResponse, ChatResponseUpdate
from providers.abstractions.delegating import DelegatingChatClient
from providers.abstractions.errors import ConfigurationError
from providers.abstractions.messages import ChatMessage
from providers.abstractions.open_values import ChatRole
from providers.abstractions.options import ChatOptions
from providers.abstractions.records import value_class
from providers.abstractions.update_runs import UpdateRuns, close_stream, runs_of, updates_of
from providers.transport.response_headers import ResponseHeadersWatch

__all__ = [
    "ECHO_HEADER",
    "SESSION_AFFINITY_MODES",
    "SMG_HEADER",
    "VLLM_ROUTER_HEADER",
    "SessionAffinity",
    "SessionAffinityChatClient",
    "conversation_key",
]

VLLM_ROUTER_HEADER: Final = "X-Session-ID"
SMG_HEADER: Final = "X-SMG-Routing-Key"
ECHO_HEADER: Final = "x-session-token"
"""llm-d's session token: issued in a response header, echoed in the request header."""
SESSION_AFFINITY_MODES: Final = ("vllm-router", "smg", "header", "echo")

_FIXED_HEADERS = {"vllm-router": VLLM_ROUTER_HEADER, "smg": SMG_HEADER}
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_SENDABLE = re.compile(r"[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?")
"""A header value that needs no change to be sent: printable ASCII, no edge whitespace."""
_MAX_GIVEN_ID = 256


@value_class(frozen=True)
class SessionAffinity:
    """How a backend's router is told which conversation a request belongs to (the module
    docstring has the modes and the key). ``header`` is required by ``header`` mode, optional
    for ``echo`` (default ``x-session-token``), and refused by the other two, whose header is
    the router's. ``max_conversations`` bounds the echo tokens kept; ``max_token_chars`` the
    length of one."""

    mode: str = "vllm-router"
    header: str | None = None
    max_conversations: int = 4096
    max_token_chars: int = 1024

    def __post_init__(self) -> None:
        if self.mode not in SESSION_AFFINITY_MODES:
            known = ", ".join(SESSION_AFFINITY_MODES)
            raise ConfigurationError(f"session affinity mode must be one of {known}")
        if self.mode in _FIXED_HEADERS and self.header is not None:
            raise ConfigurationError(
                f"session affinity mode {self.mode!r} sends {_FIXED_HEADERS[self.mode]}; "
                "'header' applies to the header and echo modes"
            )
        if self.mode == "header" and not self.header:
            raise ConfigurationError("session affinity mode 'header' needs a header name")
        if self.header is not None and not _TOKEN.fullmatch(self.header):
            raise ConfigurationError(
                f"session affinity header {ascii(self.header)[:60]} is not a valid header name"
            )
        if self.max_conversations < 1 or self.max_token_chars < 1:
            raise ConfigurationError("max_conversations and max_token_chars must be >= 1")

    @property
    def header_name(self) -> str:
        """The header the key (or the echoed token) travels in."""
        fixed = _FIXED_HEADERS.get(self.mode)
        return fixed or self.header or ECHO_HEADER


def conversation_key(messages: Sequence[ChatMessage], options: ChatOptions | None) -> str:
    """The conversation's routing key: its ``conversation_id`` (hashed when it could not be
    sent as it is), else a hash of its opening up to the first user message (module
    docstring)."""
    given = options.conversation_id if options is not None else None
    if given is not None:
        if len(given) <= _MAX_GIVEN_ID and _SENDABLE.fullmatch(given):
            return given
        return "conv-" + _digest(given.encode("utf-8", "surrogatepass"))
    opening: list[dict[str, object]] = []
    for message in messages:
        opening.extend(message.to_openai_messages())
        if message.role == ChatRole.USER:
            break
    text = json.dumps(opening, sort_keys=True, ensure_ascii=False, default=repr)
    return "conv-" + _digest(text.encode("utf-8", "surrogatepass"))


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:32]


class SessionAffinityChatClient(DelegatingChatClient):
    """Sends the conversation's routing key (``SessionAffinity``) with each request, in
    ``ChatOptions.headers``; in ``echo`` mode, the token the router issued to it."""

    def __init__(self, inner: ChatClient, affinity: SessionAffinity | None = None) -> None:
        super().__init__(inner)
        self.affinity = affinity or SessionAffinity()
        self._header = self.affinity.header_name
        self._echo = self.affinity.mode == "echo"
        self._tokens: OrderedDict[str, str] = OrderedDict()
        """Echo mode: conversation key → the token last issued to it (least recent first)."""

    def _keyed(self, key: str, options: ChatOptions | None) -> ChatOptions | None:
        """``options`` with the header set, copied (a caller's options may be shared); left as
        they are when the caller set the header, or in echo mode before a token was issued."""
        value = self._token_for(key) if self._echo else key
        if value is None:
            return options
        given = options.headers if options is not None else None
        if given and any(name.lower() == self._header.lower() for name in given):
            return options
        headers = {self._header: value, **(given or {})}
        if options is None:
            return ChatOptions(headers=headers)
        return replace(options, headers=headers)

    def _token_for(self, key: str) -> str | None:
        token = self._tokens.get(key)
        if token is not None:
            self._tokens.move_to_end(key)
        return token

    def _remember(self, key: str, watch: ResponseHeadersWatch) -> None:
        """Keep the token the last answer issued, if any and usable, for this conversation."""
        if watch.headers is None or watch.status is None or watch.status >= 400:
            return
        token = watch.headers.get(self._header)
        if (
            token is None
            or len(token) > self.affinity.max_token_chars
            or not _SENDABLE.fullmatch(token)
        ):
            return
        self._tokens[key] = token
        self._tokens.move_to_end(key)
        while len(self._tokens) > self.affinity.max_conversations:
            self._tokens.popitem(last=False)

    async def get_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> ChatResponse:
        listed = ChatMessage.coerce_all(messages)
        key = conversation_key(listed, options)
        keyed = self._keyed(key, options)
        if not self._echo:
            return await self.inner.get_response(listed, keyed)
        with ResponseHeadersWatch() as watch:
            response = await self.inner.get_response(listed, keyed)
        self._remember(key, watch)
        return response

    def get_streaming_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        return updates_of(self._streaming_runs(messages, options))

    def _streaming_runs(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> UpdateRuns:
        listed = ChatMessage.coerce_all(messages)
        key = conversation_key(listed, options)
        runs = runs_of(self.inner, listed, self._keyed(key, options))
        return self._echoing(key, runs) if self._echo else runs

    async def _echoing(self, key: str, runs: UpdateRuns) -> UpdateRuns:
        """The inner runs; the answer's head is watched while the first run is awaited
        (the watch is never set across a ``yield``)."""
        try:
            with ResponseHeadersWatch() as watch:
                first = await anext(runs, None)
            self._remember(key, watch)
            if first is None:
                return
            yield first
            async for run in runs:
                yield run
        finally:
            await close_stream(runs)
