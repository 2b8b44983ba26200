"""``ObservingChatClient``: the request lifecycle both telemetry wrappers share.

It forwards the call, feeds a ``RequestRecorder``, and hands the finished ``RequestRecord`` to
``_end`` in ``finally``, whatever happened: success, a provider error, or a caller that stopped
reading the stream early (then the inner stream is closed, so the connection is released).
Updates are handed on as they arrive, unchanged and undelayed, a run at a time
(``providers.abstractions.update_runs``). Subclasses implement the reporting
(``_start``, ``_active``, ``_end``); an exception raised there is logged and swallowed, because
telemetry must never fail a request.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractContextManager
from typing import Any

from providers.abstractions.chat_client import ChatClient, ChatInput
from providers.abstractions.chat_response import ChatResponse, ChatResponseUpdate
from providers.abstractions.delegating import DelegatingChatClient
from providers.abstractions.logs import get_logger
from providers.abstractions.options import ChatOptions
from providers.abstractions.update_runs import UpdateRuns, close_stream, runs_of, updates_of
from providers.backends import BackendProfile
from telemetry import events
from telemetry.extractors import TimingsExtractor, extractor_for
from telemetry.recorder import RequestRecord, RequestRecorder, RequestStatus

__all__ = ["ObservingChatClient"]

_LOG = get_logger(__name__)
_NO_CONTEXT = contextlib.nullcontext()  # stateless, so one serves every request


def _find(client: object, name: str) -> Any:
    """``name`` on the client or the first layer below it that has it (``inner`` chain)."""
    seen = 0
    while client is not None and seen < 32:
        value = getattr(client, name, None)
        if value is not None:
            return value
        client = getattr(client, "inner", None)
        seen += 1
    return None


class ObservingChatClient(DelegatingChatClient):
    """Base of the telemetry wrappers; see the module docstring.

    ``backend`` defaults to the profile of the ``OpenAiCompatibleChatClient`` found down the
    ``inner`` chain (else ``"generic"``); ``extractor`` defaults to ``extractor_for(backend)``.
    ``clock`` must be the transport's clock (``time.monotonic``); tests pass a fake one.
    """

    def __init__(
        self,
        inner: ChatClient,
        *,
        backend: str | BackendProfile | None = None,
        extractor: TimingsExtractor | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(inner)
        if backend is None:
            profile = _find(inner, "profile")
            backend = profile if isinstance(profile, BackendProfile) else None
        name = backend.name if isinstance(backend, BackendProfile) else backend
        self.backend: str = (name or "generic").lower()
        self.extractor = extractor if extractor is not None else extractor_for(self.backend)
        self._clock = clock

    # Reporting hooks ------------------------------------------------------------------------

    def _start(self, recorder: RequestRecorder, options: ChatOptions | None) -> Any:
        """Called as the request starts; returns per-request state for the other hooks."""
        return None

    def _active(self, state: Any) -> AbstractContextManager[Any]:
        """Context entered around the call that sends the request (an OTel span goes current)."""
        return _NO_CONTEXT

    def _end(
        self, state: Any, record: RequestRecord, target: ChatResponse | ChatResponseUpdate | None
    ) -> None:
        """Called once per request. ``target`` is the response, or the stream's last update."""

    # Lifecycle ------------------------------------------------------------------------------

    def _recorder(self, options: ChatOptions | None, streamed: bool) -> RequestRecorder:
        """A ``RequestRecorder`` for one request, counting from now."""
        model = options.model_id if options is not None else None
        return RequestRecorder(
            backend=self.backend,
            extractor=self.extractor,
            clock=self._clock,
            streamed=streamed,
            request_model=model or _find(self.inner, "model_id"),
        )

    def _finish(
        self,
        state: Any,
        recorder: RequestRecorder,
        status: RequestStatus,
        error: BaseException | None,
        target: ChatResponse | ChatResponseUpdate | None,
    ) -> None:
        try:
            self._end(state, recorder.finish(status, error), target)
        except Exception as exc:  # telemetry must not fail the request
            _LOG.warning(
                events.TELEMETRY_FAILED,
                **{events.ERROR_TYPE: type(exc).__name__, events.BACKEND: self.backend},
            )

    async def get_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> ChatResponse:
        recorder = self._recorder(options, streamed=False)
        state = self._start(recorder, options)
        status: RequestStatus = "cancelled"
        error: BaseException | None = None
        response: ChatResponse | None = None
        try:
            with self._active(state):
                response = await self.inner.get_response(messages, options)
            recorder.observe_response(response)
            status = "ok"
            return response
        except Exception as exc:
            status, error = "error", exc
            raise
        finally:
            self._finish(state, recorder, status, error, response)

    def get_streaming_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        return updates_of(self._streaming_runs(messages, options))

    async def _streaming_runs(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> UpdateRuns:
        # The body runs on the caller's first `anext`, i.e. when the request is really sent.
        recorder = self._recorder(options, streamed=True)
        state = self._start(recorder, options)
        status: RequestStatus = "cancelled"  # GeneratorExit (the caller stopped early) and
        error: BaseException | None = None  # CancelledError leave it so
        runs: UpdateRuns | None = None
        try:
            runs = runs_of(self.inner, messages, options)
            observe = recorder.observe_run
            context = self._active(state)
            if context is not _NO_CONTEXT:
                # Current while the request is sent and its first run awaited (an httpx
                # span nests under it), never across a yield into the caller's code.
                with context:
                    first = await anext(runs, None)
                if first is not None:
                    observe(first)
                    yield first
            async for run in runs:
                observe(run)
                yield run
            status = "ok"
        except Exception as exc:
            status, error = "error", exc
            raise
        finally:
            try:
                await close_stream(runs)
            finally:
                self._finish(state, recorder, status, error, recorder.last)
