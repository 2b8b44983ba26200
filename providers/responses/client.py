"""``OpenAiCompatibleResponsesClient``: the ``ChatClient`` protocol over ``/v1/responses``.

An agent switches between chat completions and the Responses API by configuration: the same
``ChatMessage``s, ``ChatOptions`` and tools go in, the same ``ChatResponseUpdate``s come out,
and the same wrappers (text recovery, retry, telemetry) apply. The streamed path is the chat
client's pipe with an event normaliser at its end — httpx bytes → ``SseDecoder`` → JSON →
``ResponsesEventNormalizer`` → updates — under the same ``Watchdog`` budgets and
``TransportErrorMapping`` (``ResponsesTransport``), so failures are the same typed errors with
the partial response. This module decides what to send and where; the transport moves it.

What the servers make necessary (transcripts ``*--responses--*``): history goes as input items
(``ConversationMode``); ``store`` is sent false unless a stored response is wanted, because
vLLM's store, when on, keeps every response in memory for good; ``/tool_outputs`` is never
used (neither vLLM nor SGLang has it); stored-response operations (``retrieve``, ``cancel``,
``background``) raise the server's typed error where the store is off.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection, Mapping
from typing import TYPE_CHECKING, Any

import httpx

from providers.abstractions.chat_client import ChatInput
from providers.abstractions.chat_response import ChatResponse, ChatResponseUpdate
from providers.abstractions.errors import InvalidRequestError
from providers.abstractions.event_names import RESPONSES_STORE_UNAVAILABLE
from providers.abstractions.limits import Limits
from providers.abstractions.logs import get_logger
from providers.abstractions.messages import ChatMessage
from providers.abstractions.option_policy import OptionPolicy
from providers.abstractions.options import ChatOptions
from providers.abstractions.records import value_class
from providers.abstractions.update_runs import response_updates, singles, updates_of
from providers.backends import BackendProfile, profile_for
from providers.chat_completions.client import DEFAULT_TIMEOUT, TRANSPORT_TIMESTAMPS
from providers.chat_completions.http_client_base import HttpClientBase, RequestHeaders
from providers.chat_completions.option_enforcement import (
    enforce_response,
    enforce_runs,
    enforcement_for,
)
from providers.chat_completions.output_bound import check_response
from providers.responses.background import poll_until_done
from providers.responses.conversation import (
    ConversationChain,
    ConversationMode,
    store_refused,
)
from providers.responses.items import Item, messages_to_input
from providers.responses.normalize import ResponsesEventNormalizer
from providers.responses.output import offered_in_request
from providers.responses.quirks import responses_quirks_for
from providers.responses.request import build_responses_request
from providers.responses.stream import ResponsesStreamState
from providers.responses.transport import ResponsesTransport
from providers.transport.json_guard import MALFORMED, malformed
from providers.transport.timeouts import Timeouts

if TYPE_CHECKING:
    from providers.transport.httpx2_bridge import AsyncHttpClient

__all__ = ["STORE_UNAVAILABLE_EVENT", "OpenAiCompatibleResponsesClient"]

STORE_UNAVAILABLE_EVENT = RESPONSES_STORE_UNAVAILABLE
"""The warning logged (once per client) when ``previous_response_id`` was refused and
the client fell back to sending the whole history."""


@value_class()
class _Prepared:
    body: dict[str, Any]
    history: list[Item]  # the whole conversation as items, whatever part of it is sent
    previous_response_id: str | None
    stored: bool  # a turn the conversation chain may continue from
    headers: RequestHeaders  # ChatOptions.headers over the client's, for each exchange it makes


class OpenAiCompatibleResponsesClient(HttpClientBase):
    """A ``ChatClient`` over ``POST {base_url}/responses``.

    The constructor follows ``OpenAiCompatibleChatClient`` (``base_url``, ``model_id``,
    ``api_key`` — never in ``repr`` or logs —, ``backend``, ``http_client``, ``timeout``,
    ``timeouts``, ``headers``, ``merge_system_messages``). Responses-specific:

    * ``conversation_mode``: ``STATELESS`` (default) or ``PREVIOUS_RESPONSE_ID``; see
      ``ConversationMode``. Use the latter only where the store is on (``probe_store()``).
    * ``background``: create responses with ``background: true`` and poll them every
      ``poll_interval`` seconds until they finish (needs the store; the server's 400 otherwise).
    * ``replay_reasoning``: send earlier reasoning back as ``reasoning`` items (default: the
      backend profile's ``replay_reasoning``, off, as on the chat path).
    * ``replays_function_calls``: override the backend's row in ``RESPONSES_QUIRKS``.
    """

    def __init__(
        self,
        base_url: str,
        model_id: str | None = None,
        api_key: str | None = None,
        *,
        backend: str | BackendProfile | None = None,
        http_client: AsyncHttpClient | None = None,
        timeout: httpx.Timeout | float | None = DEFAULT_TIMEOUT,
        timeouts: Timeouts | None = None,
        headers: Mapping[str, str] | None = None,
        merge_system_messages: bool | None = None,
        conversation_mode: ConversationMode | str = ConversationMode.STATELESS,
        background: bool = False,
        poll_interval: float = 1.0,
        replay_reasoning: bool | None = None,
        replays_function_calls: bool | None = None,
        capability_overrides: Mapping[str, Any] | None = None,
        limits: Limits | None = None,
        proxy: str | None = None,
        trust_env: bool = True,
        sensitive_headers: Collection[str] | None = None,
        model_family: str | None = None,
        unsupported_options: OptionPolicy = "raise",
    ) -> None:
        super().__init__(
            base_url,
            model_id,
            api_key,
            http_client=http_client,
            timeout=timeout,
            timeouts=timeouts,
            headers=headers,
            capability_overrides=capability_overrides,
            limits=limits,
            proxy=proxy,
            trust_env=trust_env,
            sensitive_headers=sensitive_headers,
            model_family=model_family,
            unsupported_options=unsupported_options,
        )
        self.url = f"{self.endpoint.api_base}/responses"
        self.profile = profile_for(backend)
        profile = self.profile
        self.merge_system_messages = _given(merge_system_messages, profile.merge_system_messages)
        self.replay_reasoning = _given(replay_reasoning, profile.replay_reasoning)
        self.conversation_mode = ConversationMode(conversation_mode)
        self.background = background
        self.poll_interval = poll_interval
        quirks = responses_quirks_for(profile.name)
        self._chain = ConversationChain(
            replays_function_calls=_given(replays_function_calls, quirks.replays_function_calls)
        )
        self._store_usable = True
        self._transport = self._new_transport()

    def _new_transport(self) -> ResponsesTransport:
        return ResponsesTransport(
            self._current_http,
            url=self.url,
            backend=self.profile.name,
            headers=self._headers,
            timeouts=self.timeouts,
            status_error=self._status_error,
            limits=self.limits,
            secrets=self._secret_texts,
        )

    def __repr__(self) -> str:
        # Never the headers: they hold the API key.
        return (
            f"{type(self).__name__}(base_url={self.endpoint.api_base!r}, "
            f"model_id={self.model_id!r}, backend={self.profile.name!r}, "
            f"conversation_mode={self.conversation_mode.value!r})"
        )

    # --- requests ------------------------------------------------------------------------------

    def build_request_body(
        self, messages: ChatInput, options: ChatOptions | None = None, *, stream: bool
    ) -> dict[str, Any]:
        """The exact JSON body the next call would send (useful for logging and tests)."""
        return self._prepare(messages, options, stream=stream).body

    def _prepare(
        self,
        messages: ChatInput,
        options: ChatOptions | None,
        *,
        stream: bool,
        stateless: bool = False,
    ) -> _Prepared:
        instructions, history = messages_to_input(
            ChatMessage.coerce_all(messages),
            merge_system_messages=self.merge_system_messages,
            replay_reasoning=self.replay_reasoning,
        )
        extras = options.additional_properties if options is not None else {}
        background = self.background or extras.get("background") is True
        chained = (
            self.conversation_mode is ConversationMode.PREVIOUS_RESPONSE_ID
            and self._store_usable
            and not stateless
        )
        previous, items = self._chain.plan(history) if chained else (None, history)
        body = build_responses_request(
            items,
            options,
            instructions=instructions,
            model_id=self.model_id,
            stream=stream and not background,
            store=chained or background,
            background=background,
            previous_response_id=previous,
            profile=self.profile,
            family=self.request_family(options),
            policy=self.unsupported_options,
        )
        stored = body.get("store") is True and "previous_response_id" not in extras
        headers = self._request_headers(options)
        return _Prepared(body, history, previous, stored and chained, headers)

    def _to_response(
        self,
        payload: dict[str, Any],
        stamps: dict[str, float],
        offered: frozenset[str] | None = None,  # (None: a stored response, its request unknown)
    ) -> ChatResponse:
        normalizer = ResponsesEventNormalizer(
            self.profile.name, offered_tools=offered, limits=self.limits
        )
        try:
            result = ChatResponse.from_updates(normalizer.normalize_response(payload))
        except MALFORMED as exc:
            raise malformed(exc, self.profile.name) from exc
        result.raw = payload
        result.additional_properties[TRANSPORT_TIMESTAMPS] = stamps
        check_response(result, self.limits.max_output_bytes, self.profile.name)
        return result

    # --- the ChatClient protocol -----------------------------------------------------------

    async def get_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> ChatResponse:
        prepared = self._prepare(messages, options, stream=False)
        try:
            result = await self._create(prepared)
        except InvalidRequestError as exc:
            if not self._falls_back(prepared, exc):
                raise
            prepared = self._prepare(messages, options, stream=False, stateless=True)
            result = await self._create(prepared)
        self._record(prepared, result)
        plan = enforcement_for(
            options, self.profile, family=self.request_family(options), api="responses"
        )
        return result if plan is None else enforce_response(result, plan)

    async def _create(self, prepared: _Prepared) -> ChatResponse:
        payload, stamps = await self._transport.request_json(
            "POST", self.url, prepared.body, prepared.headers
        )
        if prepared.body.get("background") is True:
            payload = await poll_until_done(
                self._transport,
                self.url,
                payload,
                poll_interval=self.poll_interval,
                total=self.timeouts.total,
                backend=self.profile.name,
                headers=prepared.headers,
            )
        return self._to_response(payload, stamps, offered_in_request(prepared.body))

    def get_streaming_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        """The answer as it arrives, through what the options need enforced here
        (``option_enforcement``, as the chat client does)."""
        updates = self._server_updates(messages, options)
        plan = enforcement_for(
            options, self.profile, family=self.request_family(options), api="responses"
        )
        if plan is None:
            return updates
        return updates_of(enforce_runs(singles(updates), plan))

    async def _server_updates(
        self, messages: ChatInput, options: ChatOptions | None
    ) -> AsyncIterator[ChatResponseUpdate]:
        prepared = self._prepare(messages, options, stream=True)
        if prepared.body.get("background") is True:
            # Polled to the end, then given as the updates of the finished response.
            result = await self.get_response(messages, options)
            for update in response_updates(result):
                yield update
            return
        yielded = False
        try:
            async for update in self._stream("POST", self.url, prepared):
                yielded = True
                yield update
        except InvalidRequestError as exc:
            if yielded or not self._falls_back(prepared, exc):
                raise
            prepared = self._prepare(messages, options, stream=True, stateless=True)
            async for update in self._stream("POST", self.url, prepared):
                yield update

    async def _stream(
        self, method: str, url: str, prepared: _Prepared | None
    ) -> AsyncIterator[ChatResponseUpdate]:
        backend = self.profile.name
        body = prepared.body if prepared is not None else None
        normalizer = ResponsesEventNormalizer(
            backend, offered_tools=offered_in_request(body), limits=self.limits
        )
        state = ResponsesStreamState(normalizer, backend, max_json_depth=self.limits.max_json_depth)
        headers = prepared.headers if prepared is not None else None
        async for update in self._transport.stream(method, url, body, state, headers):
            yield update
        if prepared is not None:
            self._record(prepared, state.partial.build())

    # --- conversation state --------------------------------------------------------------------

    def _falls_back(self, prepared: _Prepared, error: InvalidRequestError) -> bool:
        """Was ``previous_response_id`` refused because the server stores no responses? Then
        later requests are stateless, and that is logged once per client."""
        if prepared.previous_response_id is None or not store_refused(error):
            return False
        self._store_usable = False
        self._chain.forget()
        get_logger(__name__).warning(
            STORE_UNAVAILABLE_EVENT,
            backend=self.profile.name,
            status=error.status,
            param=error.param,
            fallback=ConversationMode.STATELESS.value,
        )
        return True

    def _record(self, prepared: _Prepared, result: ChatResponse) -> None:
        if prepared.stored:
            self._chain.record_turn(
                prepared.history,
                result,
                merge_system_messages=self.merge_system_messages,
                replay_reasoning=self.replay_reasoning,
            )

    # --- stored responses ----------------------------------------------------------------------

    async def retrieve(self, response_id: str) -> ChatResponse:
        """``GET /responses/{id}``: a stored response, finished or not (``finish_reason`` is
        ``None`` while it is queued or in progress; ``additional_properties["status"]`` says
        which). Without a store: vLLM 404, SGLang 400, both ``InvalidRequestError``."""
        payload, stamps = await self._transport.request_json("GET", f"{self.url}/{response_id}")
        return self._to_response(payload, stamps)

    def retrieve_streaming(
        self, response_id: str, *, starting_after: int | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        """``GET /responses/{id}?stream=true``: a stored response's events again (vLLM replays
        a background response's events after ``starting_after``). A server that answers with
        the JSON object instead (SGLang ignores ``stream``) gives that object's updates; one
        that sends no event (vLLM for a finished response) raises ``StreamInterruptedError``."""
        url = f"{self.url}/{response_id}?stream=true"
        if starting_after is not None:
            url += f"&starting_after={starting_after}"
        return self._stream("GET", url, None)

    async def cancel(self, response_id: str) -> ChatResponse:
        """``POST /responses/{id}/cancel``: the response as cancelled (``finish_reason``
        ``cancelled``, output dropped). vLLM refuses a finished non-background response (400
        "Cannot cancel a synchronous response."); SGLang returns it unchanged."""
        payload, stamps = await self._transport.request_json(
            "POST", f"{self.url}/{response_id}/cancel"
        )
        return self._to_response(payload, stamps)

    async def probe_store(self) -> bool:
        """Is the server's response store on (so ``PREVIOUS_RESPONSE_ID`` can work)?
        ``providers.responses.store_probe`` says how it is asked."""
        # deferred: a one-off question, never part of a request
        from providers.responses.store_probe import probe_store

        return await probe_store(self)


def _given(value: bool | None, default: bool) -> bool:
    """A constructor argument, or the backend row's value when the caller left it ``None``."""
    return default if value is None else value
