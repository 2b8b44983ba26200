"""``OpenAiCompatibleChatClient``: one async client for llama.cpp, vLLM, SGLang and OpenAI-style
servers.

The streamed path is a straight pipe — httpx bytes → ``SseDecoder`` → JSON → ``ChunkNormalizer``
→ updates — in one async generator, which the layers above iterate as they would any other.
Whatever goes wrong, the caller gets a typed ``ProviderError`` whose ``partial_response`` holds
everything received before it; httpx exceptions become ``ProviderError``s in one place
(``providers.transport.error_mapping``); the time budgets are ``providers.transport.timeouts``;
what a stream has received so far is ``providers.chat_completions.stream_state``.

Answers of the wrong shape (one JSON completion for a stream, an HTML page, a redirect) are
``providers.transport.answer_shape``'s; what a server can make the client hold, ``Limits``'.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Collection, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import httpx

from providers.abstractions.chat_client import ChatInput
from providers.abstractions.chat_response import ChatResponse, ChatResponseUpdate
from providers.abstractions.limits import Limits
from providers.abstractions.messages import ChatMessage
from providers.abstractions.option_policy import OptionPolicy
from providers.abstractions.options import ChatOptions
from providers.abstractions.properties import TRANSPORT_TIMESTAMPS
from providers.abstractions.token_counter import TokenCounter
from providers.abstractions.update_runs import UpdateRuns, updates_of
from providers.backends import BackendProfile, profile_for
from providers.chat_completions.http_client_base import (
    DEFAULT_TIMEOUT,
    HttpClientBase,
    fetch_whole,
    mask_secrets,
    url_for_errors,
)
from providers.chat_completions.normalize import ChunkNormalizer
from providers.chat_completions.output_bound import check_response
from providers.chat_completions.preparation import RequestPreparation
from providers.chat_completions.refused_keys import DroppedKeys, usage_note
from providers.chat_completions.request import asks_for_enforcement, build_chat_request
from providers.chat_completions.stream_state import StreamState, drain, whole_answer
from providers.text_tool_calls import offered_tool_names
from providers.transport.answer_shape import EVENT_STREAM, json_instead_of_events
from providers.transport.bodies import body_chunks, no_chunks, read_prefix, too_large
from providers.transport.endpoint import Endpoint
from providers.transport.json_guard import MALFORMED, load_object, malformed
from providers.transport.output_watch import report_output_progress
from providers.transport.response_headers import report_response_headers
from providers.transport.sse import SseDecoder
from providers.transport.timeouts import Timeouts, Watchdog

if TYPE_CHECKING:
    from providers.abstractions.token_count import TokenCount
    from providers.transport.error_mapping import TransportErrorMapping
    from providers.transport.httpx2_bridge import AsyncHttpClient

__all__ = ["DEFAULT_TIMEOUT", "TRANSPORT_TIMESTAMPS", "OpenAiCompatibleChatClient", "Timeouts"]


class OpenAiCompatibleChatClient(HttpClientBase, TokenCounter):
    """A ``ChatClient`` over ``POST {base_url}/chat/completions``.

    ``backend`` selects the ``BackendProfile`` (request-side quirks); parsing accepts every
    server's shapes whatever it is set to. One ``httpx.AsyncClient`` is shared by all requests;
    pass ``http_client`` to bring your own (it is then not closed by ``aclose``). ``timeouts``
    sets the per-request budgets (``Timeouts``); they override the http client's own timeouts.
    ``limits`` bounds what one answer may make the client hold (``Limits``); ``proxy``,
    ``trust_env`` and ``sensitive_headers`` are ``HttpClientBase``'s. ``count_tokens`` asks the
    server's tokenizer; ``preflight_context_check=True`` refuses a request that cannot fit with
    ``ContextLengthExceededError`` before sending it (both: ``token_count``).
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
        redact_fingerprint: bool = False,
        validate_model: bool = False,
        clamp_max_tokens: bool = False,
        preflight_context_check: bool = False,
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
        profile = profile_for(backend)
        if merge_system_messages is not None:
            profile = replace(profile, merge_system_messages=merge_system_messages)
        self.profile = profile
        self._redact_fingerprint = redact_fingerprint
        self._preparation = RequestPreparation.if_asked(
            validate_model, clamp_max_tokens, preflight_context_check
        )
        self._dropped = DroppedKeys()  # optional keys the server refused (``refused_keys``)

    def __repr__(self) -> str:
        # Never the headers: they hold the API key.
        return (
            f"{type(self).__name__}(base_url={self.endpoint.api_base!r}, "
            f"model_id={self.model_id!r}, backend={self.profile.name!r})"
        )

    _chat_url_of: tuple[Endpoint | None, str] = (None, "")
    """The endpoint ``_chat_url`` was last built for, and the URL."""

    def _chat_url(self) -> str:
        """``endpoint.chat_completions``, built once per endpoint, not once per request."""
        endpoint = self.endpoint
        if self._chat_url_of[0] is not endpoint:
            self._chat_url_of = (endpoint, endpoint.chat_completions)
        return self._chat_url_of[1]

    def _error_mapping(
        self, state: StreamState | None, watch: Watchdog | None, secrets: tuple[bytes, ...] = ()
    ) -> TransportErrorMapping:
        """``secrets``: a request's own credentials (``ChatOptions.headers``), besides the
        client's."""
        texts = self._secret_texts
        if secrets:
            texts += tuple(secret.decode() for secret in secrets)
        # deferred: the mapping is made only when a request fails (or for a whole answer)
        from providers.transport.error_mapping import TransportErrorMapping

        return TransportErrorMapping(
            backend=self.profile.name,
            url=url_for_errors(self.endpoint.chat_completions),
            connect_budget=self.timeouts.connect,
            state=state,
            watch=watch,
            secrets=texts,
        )

    def build_request_body(
        self, messages: ChatInput, options: ChatOptions | None = None, *, stream: bool
    ) -> dict[str, Any]:
        """The exact JSON body a call would send (useful for logging and tests)."""
        return build_chat_request(
            ChatMessage.coerce_all(messages),
            options,
            model_id=self.model_id,
            stream=stream,
            profile=self.profile,
            family=self.request_family(options),
            policy=self.unsupported_options,
            dropped_keys=self._dropped.keys,
        )

    async def get_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> ChatResponse:
        if self._preparation is not None:
            options = await self._preparation.prepare(self, messages, options)
        body = self.build_request_body(messages, options, stream=False)
        headers, secrets = self._request_headers(options)
        backend = self.profile.name
        response, content, stamps = await fetch_whole(
            self._http,
            "POST",
            self.endpoint.chat_completions,
            body=body,
            headers=headers,
            extensions=self._request_extensions,
            total=self.timeouts.total,
            backend=backend,
            mapping=self._error_mapping(None, None, secrets),
            limits=self.limits,
        )
        report_response_headers(response.status_code, response.headers)
        if response.status_code >= 400:
            content = mask_secrets(content, secrets)
            raise self._status_error(response.status_code, content, response.headers)
        normalizer = ChunkNormalizer(
            self.profile,
            redact_fingerprint=self._redact_fingerprint,
            offered_tools=offered_tool_names(options),
            limits=self.limits,
        )
        payload = load_object(
            content, self.limits.max_json_depth, backend, status=response.status_code
        )
        try:
            result = ChatResponse.from_updates(normalizer.normalize_completion(payload))
        except MALFORMED as exc:
            raise malformed(exc, backend) from exc
        result.raw = payload
        result.additional_properties[TRANSPORT_TIMESTAMPS] = stamps
        check_response(result, self.limits.max_output_bytes, backend)
        if not asks_for_enforcement(options):
            return result
        # deferred: the enforcement planner and its stages, for requests that ask for them
        from providers.chat_completions.option_enforcement import enforce_response, enforcement_for

        plan = enforcement_for(options, self.profile, family=self.request_family(options))
        return result if plan is None else enforce_response(result, plan)

    async def count_tokens(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> TokenCount:
        """The request's prompt size by the server's own tokenizer, else an estimate, marked."""
        # deferred: token counting is an opt-in, never on a chat's cold start
        from providers.chat_completions.token_count import count_tokens

        return await count_tokens(self, messages, options)

    def get_streaming_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        """The answer as it arrives, update by update (``_streaming_runs``, unrolled)."""
        return updates_of(self._streaming_runs(messages, options))

    def _streaming_runs(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> UpdateRuns:
        """The server's runs (``_wire_runs``), through what the options need enforced here
        (``option_enforcement``); the runs themselves when they need nothing."""
        runs = self._wire_runs(messages, options)
        if not asks_for_enforcement(options):
            return runs
        # deferred: the enforcement planner and its stages, for requests that ask for them
        from providers.chat_completions.option_enforcement import enforce_runs, enforcement_for

        plan = enforcement_for(options, self.profile, family=self.request_family(options))
        return runs if plan is None else enforce_runs(runs, plan)

    async def _wire_runs(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> UpdateRuns:
        """The answer as it arrives, each network read's updates as one run
        (``providers.abstractions.update_runs``), which the layers above iterate.

        Hot path: every read of every stream runs the loop below, so it stays one function,
        with the per-read steps inline and no per-update work that only some callers need.
        Closing the generator (a caller's ``break`` reaching it through the layers'
        ``finally``) closes the HTTP response at once.
        """
        watch: Watchdog | None = None
        try:
            if self._preparation is not None:
                options = await self._preparation.prepare(self, messages, options)
            # `httpx.AsyncClient.stream()`, unrolled, and the request dict only an argument, so
            # that it is dropped once encoded: many streams may wait for their server at once,
            # each holding only what it must. For the same reason the parsing state is made
            # only once the server has answered, and the frame keeps few variables.
            headers, secrets = self._request_headers(options)
            sent_without = self._dropped.keys
            request = self._http.build_request(
                "POST",
                self._chat_url(),
                json=self.build_request_body(messages, options, stream=True),
                headers=headers,
                extensions=self._request_extensions,
            )
            del headers  # (encoded into the request: not held while the stream waits)
            state = StreamState(self.profile.name, self.limits.max_json_depth)
            report_output_progress(state)  # (to a retry or failover reading the head, if any)
            sent = time.monotonic()
            watch = Watchdog(self.timeouts, state, state.backend, sent)
            try:  # (the error mapping is made only if something fails: nothing per waiting stream)
                # (never a redirect: it would carry the headers off the origin; see README)
                response = await self._http.send(request, stream=True, follow_redirects=False)
                report_response_headers(response.status_code, response.headers)
                try:
                    stamps = state.stamps = {
                        "request_sent": sent,
                        "response_headers": time.monotonic(),
                    }
                    limits = self.limits
                    if response.status_code >= 400:
                        content = mask_secrets(
                            await read_prefix(response, limits.max_error_body_bytes), secrets
                        )
                        if self._dropped.refused(
                            self.profile,
                            response.status_code,
                            content,
                            stream=True,
                            sent_without=sent_without,
                        ):
                            await response.aclose()  # before any output: once, without the key
                            watch.close()  # (the resent request has its own budgets)
                            async for run in self._wire_runs(messages, options):
                                yield run
                            return
                        raise self._status_error(response.status_code, content, response.headers)
                    state.normalizer = ChunkNormalizer(
                        self.profile,
                        redact_fingerprint=self._redact_fingerprint,
                        offered_tools=offered_tool_names(options),
                        limits=limits,
                    )
                    chunks: AsyncIterator[bytes]
                    if (
                        response.status_code != 200
                        or not response.headers.get("content-type", "").startswith(EVENT_STREAM)
                    ) and await json_instead_of_events(response, limits, state.backend):
                        # One completion where events were asked for: that is the answer.
                        yield await whole_answer(response, state, self.limits)
                        chunks = no_chunks()
                    elif response.is_stream_consumed or "content-encoding" in response.headers:
                        # (A body already read, as a mock transport hands it, is only in bytes;
                        # a compressed one is inflated in bounded pieces.)
                        chunks = body_chunks(response)
                    else:
                        # Without a content encoding (the rule for event streams) the raw body:
                        # a decoding layer would change nothing and cost a generator per stream.
                        chunks = response.aiter_raw()
                    decoder = SseDecoder(limits.max_event_bytes)
                    feed = decoder.feed_bytes
                    take = state.take
                    clock = time.monotonic
                    stream_bytes = limits.max_stream_bytes  # what may still arrive
                    # (when the output may pass its bound: ``output_bound``)
                    output_due = stream_bytes - limits.max_output_bytes
                    async for chunk in chunks:
                        watch.since = None  # data arrived: the caller may hold the task now
                        if "first_byte" not in stamps:
                            stamps["first_byte"] = clock()
                        stream_bytes -= len(chunk)
                        if stream_bytes < 0:
                            raise too_large(
                                "max_stream_bytes", limits.max_stream_bytes, "the stream", None
                            )
                        events = feed(chunk)
                        if events:
                            # The read's updates first, then the error that stopped it, if any:
                            # what came before an error event reaches the caller (and the
                            # partial response) whatever the chunking.
                            updates, error = take(events)
                            if stream_bytes <= output_due:
                                output_due = state.check_output(
                                    stream_bytes, limits.max_output_bytes
                                )
                            if updates:
                                yield updates
                            if error is not None:
                                raise error
                            if state.done:
                                break
                        now = clock()
                        if now >= watch.due:
                            watch.overdue(now)
                        watch.since = now  # waiting on the network again
                    watch.since = None
                    if state.done:
                        await drain(chunks)
                    else:
                        updates, error = take(decoder.finish_bytes())
                        if updates:
                            yield updates
                        if error is not None:
                            raise error
                finally:
                    await response.aclose()
                updates = state.end()
                if sent_without:
                    updates = usage_note(updates, state, sent_without)
                if updates:
                    yield updates
            except BaseException as exc:
                error = self._error_mapping(state, watch, secrets).mapped(exc)
                if error is None or error is exc:
                    raise
                raise error from exc
        finally:
            if watch is not None:
                watch.close()
