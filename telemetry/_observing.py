"""``ObservingChatClient``: the request lifecycle both telemetry wrappers share.

It forwards the call, feeds a ``RequestRecorder``, and hands the finished ``RequestRecord`` to
``_end`` in ``finally``, whatever happened: success, a provider error, or a caller that stopped
reading the stream early (then the inner stream is closed, so the connection is released).
Updates are yielded as they arrive, unchanged and undelayed. Subclasses implement the reporting
(``_start``, ``_active``, ``_end``); an exception raised there is logged and swallowed, because
telemetry must never fail a request.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractContextManager
from typing import Any

import structlog

from providers.abstractions.chat_client import ChatClient, ChatInput
from providers.abstractions.chat_response import ChatResponse, ChatResponseUpdate
from providers.abstractions.delegating import DelegatingChatClient
from providers.abstractions.options import ChatOptions
from providers.backends import BackendProfile
from providers.transport.update_stream import StreamStage, as_update_stream
from telemetry import events
from telemetry.extractors import TimingsExtractor, extractor_for
from telemetry.recorder import RequestRecord, RequestRecorder, RequestStatus

__all__ = ["ObservingChatClient"]

_LOG = structlog.get_logger(__name__)
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
        return RequestRecorder(**self._recording(options, streamed))

    def _recording(self, options: ChatOptions | None, streamed: bool) -> dict[str, Any]:
        """A ``RequestRecorder``'s arguments for one request."""
        model = options.model_id if options is not None else None
        return {
            "backend": self.backend,
            "extractor": self.extractor,
            "clock": self._clock,
            "streamed": streamed,
            "request_model": model or _find(self.inner, "model_id"),
            "deferred": streamed,
        }

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
        stream = as_update_stream(self.inner.get_streaming_response(messages, options))
        return stream.add_stage(_ObservingStage(self, options))


class _ObservingStage(RequestRecorder, StreamStage):
    """One streamed request's record, kept as its updates pass (``providers.transport.update_stream``).

    The stage is its own recorder, and the recorder's ``observe`` is its ``on_update``: one
    object per stream, not two (every stream waiting for its server holds it), and no call level
    between the stream and the recorder.
    """

    __slots__ = ("_client", "_options", "_reported", "_state")

    on_update = RequestRecorder.observe

    def __init__(self, client: ObservingChatClient, options: ChatOptions | None) -> None:
        super().__init__(**client._recording(options, streamed=True))
        self._client = client
        self._options = options
        self._reported = False
        self._state: Any = None

    def on_start(self) -> AbstractContextManager[Any] | None:
        # The caller's first `anext`, i.e. when the request is really sent.
        self.start()
        client = self._client
        self._state = client._start(self, self._options)
        context = client._active(self._state)
        # None when there is nothing to enter: the stream then needs no coroutine around its
        # first update (`UpdateStream`), which 200 waiting streams would each hold.
        return None if context is _NO_CONTEXT else context

    def on_end(self) -> tuple[()]:
        self._report("ok", None)
        return ()

    def on_failure(self, error: BaseException) -> None:
        # GeneratorExit (the caller stopped early) and CancelledError leave "cancelled".
        if isinstance(error, Exception):
            self._report("error", error)
        else:
            self._report("cancelled", None)

    def _report(self, status: RequestStatus, error: BaseException | None) -> None:
        if not self._reported:
            self._reported = True
            self._client._finish(self._state, self, status, error, self.last)
