"""Every log event name the library emits, in one scheme: ``oaicompat.<area>.<event>``.

``<area>`` is the part of the library that logs (``request``, ``cache``, ``telemetry``,
``function_invocation``, ``capabilities``, ``responses``, ``http``), ``<event>`` what happened,
in snake case. One prefix means one filter catches all of them (``event.startswith
("oaicompat.")``), and the ``oaicompat`` stdlib logger tree they go to when structlog is not
configured (``providers.abstractions.logs``) has the same name.

Names are stable API: dashboards and tests match on these strings, so they change only with a
deprecation. Every emitter logs one of these constants, never a literal
(``tests/unit/architecture/test_event_names.py``). Each name's docstring gives its level and
keys; the request events' keys are in ``telemetry.events``. No event carries message text,
options, headers, exception messages or a URL's user info.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "CACHE_REPORT_UNAVAILABLE",
    "CAPABILITIES_BACKEND_DETECTED",
    "CAPABILITIES_BACKEND_NOT_READY",
    "CAPABILITIES_BACKEND_READY",
    "CAPABILITIES_MODEL_CHECK_SKIPPED",
    "CAPABILITIES_OVERRIDE_EXCEEDS_SERVER",
    "CAPABILITIES_PROBE_ANSWERED",
    "CAPABILITIES_PROBE_FAILED",
    "CAPABILITIES_RESOLVED",
    "EMBEDDINGS_COMPLETED",
    "EMBEDDINGS_ENCODING_REFUSED",
    "EMBEDDINGS_FAILED",
    "FUNCTION_CALL_FAILED",
    "FUNCTION_LOOP_STOPPED",
    "FUNCTION_RESULT_UNWRITABLE",
    "GATEWAY_ANSWER_FAILED",
    "GATEWAY_REQUEST",
    "HTTP_STALE_CONNECTION_RESENT",
    "REQUEST_CANCELLED",
    "REQUEST_COMPLETED",
    "REQUEST_CREDENTIALS_DROPPED",
    "REQUEST_EXTRA_KEY_IGNORED",
    "REQUEST_FAILED",
    "REQUEST_FALLBACK",
    "REQUEST_KEY_DROPPED",
    "REQUEST_OPTION_ENFORCED",
    "REQUEST_OPTION_REFUSED",
    "REQUEST_RETRY",
    "RESPONSES_STORE_UNAVAILABLE",
    "TELEMETRY_FAILED",
]

# --- one request (telemetry, retry, fallback, the request builder) ----------------------------

REQUEST_COMPLETED: Final = "oaicompat.request.completed"
"""info — one per request, by ``TelemetryChatClient``; keys in ``telemetry.events``."""

REQUEST_FAILED: Final = "oaicompat.request.failed"
"""warning — as ``REQUEST_COMPLETED``, plus the error's class and status."""

REQUEST_CANCELLED: Final = "oaicompat.request.cancelled"
"""info — the caller stopped reading the stream early, or the task was cancelled: not a
failure."""

REQUEST_RETRY: Final = "oaicompat.request.retry"
"""warning — before each retry: ``attempt``, ``wait``, ``reason``."""

REQUEST_FALLBACK: Final = "oaicompat.request.fallback"
"""warning — the fallback backend takes over: ``main``, ``fallback``, ``error``, ``status``,
``backend``."""

REQUEST_CREDENTIALS_DROPPED: Final = "oaicompat.request.credentials_dropped"
"""warning — per-request credentials were kept from a fallback at another origin: ``headers``
(names only, never values), ``fallback``."""

REQUEST_EXTRA_KEY_IGNORED: Final = "oaicompat.request.extra_key_ignored"
"""warning — an extra body key the client sets itself, or ``stream_options`` on a request that
does not stream: ``key``, ``reason``."""

REQUEST_OPTION_REFUSED: Final = "oaicompat.request.option_refused"
"""warning — an option the backend cannot honour was left out under the client's
``unsupported_options="warn"``: ``option``, ``backend``, ``family``, ``reason``."""

REQUEST_OPTION_ENFORCED: Final = "oaicompat.request.option_enforced"
"""warning — the server did not honour an option and the client applied it to the answer
(extra tool calls dropped under ``allow_multiple_tool_calls=False``, a stop sequence cut
here): ``option``, ``backend``, and what was done (``dropped``, ``stop_sequence``)."""

REQUEST_KEY_DROPPED: Final = "oaicompat.request.key_dropped"
"""warning, once per client and key — the server refused an optional body key (a 400/422
naming ``stream_options``) and the request was sent again without it, as every later request
of this client will be: ``key``, ``backend``, ``status``."""

# --- embeddings ------------------------------------------------------------------------------

EMBEDDINGS_COMPLETED: Final = "oaicompat.embeddings.completed"
"""info — one per ``generate`` call, by ``TelemetryEmbeddingGenerator``: ``backend``, ``model``,
``inputs``, ``dimensions``, ``input_tokens``, ``duration_ms``, ``retry_attempts``,
``cache_hits``. Never the texts."""

EMBEDDINGS_FAILED: Final = "oaicompat.embeddings.failed"
"""warning — as ``EMBEDDINGS_COMPLETED``, with ``error_type`` and ``status`` instead of the
answer's counts."""

EMBEDDINGS_ENCODING_REFUSED: Final = "oaicompat.embeddings.encoding_refused"
"""warning, once per client — the server refused ``encoding_format: base64`` (a 400/422 naming
it: old vLLM); the request was sent again asking for floats, as every later one will be:
``backend``, ``status``."""

# --- telemetry -------------------------------------------------------------------------------

CACHE_REPORT_UNAVAILABLE: Final = "oaicompat.cache.report_unavailable"
"""warning, once — the backend reports no cached tokens until started with ``server_flag``:
``backend``, ``server_flag``, ``hint``."""

TELEMETRY_FAILED: Final = "oaicompat.telemetry.failed"
"""warning — telemetry itself (or an observer) raised; the request was not affected:
``error_type``, ``backend``."""

# --- the tool loop ---------------------------------------------------------------------------

FUNCTION_CALL_FAILED: Final = "oaicompat.function_invocation.call_failed"
"""warning — a function the model called raised; the model is told it failed: ``function``,
``error_type``."""

FUNCTION_RESULT_UNWRITABLE: Final = "oaicompat.function_invocation.unwritable_result"
"""warning — a function's result cannot be written as text; the model is told so: ``function``,
``result_type``, ``error_type``."""

FUNCTION_LOOP_STOPPED: Final = "oaicompat.function_invocation.stopped"
"""warning — the loop stopped before the model finished: ``reason``, ``count``."""

# --- capabilities ----------------------------------------------------------------------------

CAPABILITIES_BACKEND_DETECTED: Final = "oaicompat.capabilities.backend_detected"
"""info — ``backend``, ``version``, ``evidence``, ``base_url``."""

CAPABILITIES_PROBE_ANSWERED: Final = "oaicompat.capabilities.probe_answered"
"""debug — ``url``, ``status``."""

CAPABILITIES_PROBE_FAILED: Final = "oaicompat.capabilities.probe_failed"
"""debug — ``url``, ``error`` (exception class name; ``CrossOriginRedirect`` for a redirect off
the configured origin, which is not followed), ``unreachable`` when the host could not be
reached at all."""

CAPABILITIES_RESOLVED: Final = "oaicompat.capabilities.resolved"
"""info — ``base_url``, ``model_id``, ``backend``, ``context_window``, ``provenance``."""

CAPABILITIES_OVERRIDE_EXCEEDS_SERVER: Final = "oaicompat.capabilities.override_exceeds_server"
"""warning — ``field``, ``override``, ``server`` (the probed value), ``server_source``. The
override is still used: the operator may know better (a server restarted with a larger ``-c``),
but requests that rely on it may fail."""

CAPABILITIES_MODEL_CHECK_SKIPPED: Final = "oaicompat.capabilities.model_check_skipped"
"""info — ``model_id``, ``backend``, ``reason`` (the server ignores the field, or did not list
its models)."""

CAPABILITIES_BACKEND_NOT_READY: Final = "oaicompat.capabilities.backend_not_ready"
"""info — ``url``, ``status`` (``None`` when nothing answered), ``waited_seconds``. Logged when
waiting starts, not on every poll."""

CAPABILITIES_BACKEND_READY: Final = "oaicompat.capabilities.backend_ready"
"""info — ``url``, ``status``, ``waited_seconds``, ``attempts``."""

# --- the Responses API and the connection pool -----------------------------------------------

RESPONSES_STORE_UNAVAILABLE: Final = "oaicompat.responses.store_unavailable"
"""warning, once per client — ``previous_response_id`` was refused and the client fell back to
sending the whole history."""

HTTP_STALE_CONNECTION_RESENT: Final = "oaicompat.http.stale_connection_resent"
"""debug — a pooled connection the server had closed was replaced and the request resent:
``url`` (without user info or query), ``error``, ``resend``."""

# --- oaicompat serve -------------------------------------------------------------------------

GATEWAY_REQUEST: Final = "oaicompat.gateway.request"
"""info, only when the access log is on — one per answered request: ``method``, ``path``,
``status``, ``model`` (the configured name it resolved to, else none), ``streamed``,
``duration_ms``, ``client`` (the peer address). Never a header, a key or a body."""

GATEWAY_ANSWER_FAILED: Final = "oaicompat.gateway.answer_failed"
"""warning — answering a request raised something that is not a typed error (a bug): the
client got a 500 in OpenAI's shape, or its stream was ended. ``error_type``, ``path``,
``started`` (whether the answer's status was already sent)."""
