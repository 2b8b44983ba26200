"""What every wire client (chat completions, Responses) has in common besides its endpoint.

Both own or borrow one ``httpx.AsyncClient``, send the same headers with the API key kept out of
reprs, enforce the same ``Timeouts``, probe capabilities the same way and fetch a non-streamed
answer the same way. Written once here, so a fix to credentials, budgets or probing reaches both
clients; each subclass adds only its endpoint's request and response shapes.

Credentials never reach text: the base URL's user info is split off by ``Endpoint`` (so no URL
carries it), a key or header value that cannot be sent is refused at construction without being
quoted, and a server that echoes a credential back in an error body ("Incorrect API key
provided: sk-…") has it masked before the body becomes an error (``masks_secrets``): the
client's credential headers (``providers.transport.credentials``, cookies and the names
``sensitive_headers`` adds included), the URL's and the proxy's passwords, and every value of a
request's own ``ChatOptions.headers``.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable, Collection, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

import httpx

from providers.abstractions.chat_client import ChatClient
from providers.abstractions.errors import ConfigurationError, EventLoopError, ProviderError
from providers.abstractions.limits import DEFAULT_LIMITS, Limits
from providers.abstractions.option_policy import OptionPolicy, checked_policy
from providers.backends import BackendProfile
from providers.chat_completions.request_headers import merge_request_headers
from providers.transport.bodies import ACCEPT_ENCODING, read_whole
from providers.transport.credentials import secret_forms, sensitive_header_names
from providers.transport.endpoint import Endpoint, redact_url
from providers.transport.httpx2_bridge import is_httpx2_client, through_httpx2
from providers.transport.loop_pools import LoopPools
from providers.transport.stale_connections import new_http_client
from providers.transport.timeouts import Timeouts, budget_error

if TYPE_CHECKING:
    from capabilities import ModelCapabilities, OpenAiCompatibleCapabilityResolver
    from providers.abstractions.chat_client import ChatClient, ChatInput
    from providers.abstractions.options import ChatOptions
    from providers.abstractions.structured_output import StructuredResponse
    from providers.abstractions.sync_client import SyncChatClient
    from providers.transport.error_mapping import TransportErrorMapping
    from providers.transport.httpx2_bridge import AsyncHttpClient

__all__ = [
    "DEFAULT_TIMEOUT",
    "HttpClientBase",
    "RequestHeaders",
    "fetch_whole",
    "mask_secrets",
    "masks_secrets",
    "url_for_errors",
]

DEFAULT_TIMEOUT = httpx.Timeout(connect=10.0, read=600.0, write=60.0, pool=30.0)
"""The owned ``httpx.AsyncClient``'s defaults. Requests override them with their ``Timeouts``;
passing ``timeout=`` without ``timeouts=`` is read as ``Timeouts.from_httpx(timeout)``."""


_MASK = b"<redacted>"


def url_for_errors(url: str) -> str:
    """Error messages name the URL; never with credentials someone put in it."""
    return redact_url(url)


def mask_secrets(body: bytes, secrets: tuple[bytes, ...]) -> bytes:
    """``body`` with each of ``secrets`` replaced by ``<redacted>`` (the mask the error parser
    uses for echoed request text)."""
    for secret in secrets:
        if secret in body:
            body = body.replace(secret, _MASK)
    return body


RequestHeaders = tuple[dict[str, str], tuple[bytes, ...]]
"""One request's headers, and the values of its per-request ones (``mask_secrets`` forms) that
its errors must mask besides the client's own credentials."""

_Client = TypeVar("_Client", bound="HttpClientBase")
_Service = TypeVar("_Service")
_Value = TypeVar("_Value")
StatusErrorMethod = Callable[[_Client, int, bytes, httpx.Headers], ProviderError]


def masks_secrets(status_error: StatusErrorMethod[_Client]) -> StatusErrorMethod[_Client]:
    """For a client's ``_status_error``: the error body with the client's own credentials
    masked before it is parsed, so the error's message, ``body`` and every error built from
    them (an unknown model's explanation included) hold the mask instead."""

    @functools.wraps(status_error)
    def masked(self: _Client, status: int, body: bytes, headers: httpx.Headers) -> ProviderError:
        return status_error(self, status, mask_secrets(body, self._secrets), headers)

    return masked


class HttpClientBase:
    """Connection, credentials, time budgets, error answers and capability probing of one
    backend: what both wire clients share."""

    profile: BackendProfile
    """The backend's row (``providers.backends``); each wire client sets it."""

    def __init__(
        self,
        base_url: str,
        model_id: str | None,
        api_key: str | None,
        *,
        http_client: AsyncHttpClient | None,
        timeout: httpx.Timeout | float | None,
        timeouts: Timeouts | None,
        headers: Mapping[str, str] | None,
        capability_overrides: Mapping[str, Any] | None,
        limits: Limits | None = None,
        proxy: str | None = None,
        trust_env: bool = True,
        sensitive_headers: Collection[str] | None = None,
        model_family: str | None = None,
        unsupported_options: OptionPolicy = "raise",
    ) -> None:
        self.endpoint = Endpoint.from_base_url(base_url)
        self.unsupported_options = checked_policy(unsupported_options)
        """What to do with an option the backend cannot honour (``OptionPolicy``)."""
        self.model_family = model_family
        """The model family (``qwen3``, ``gpt-oss``); else read from the id (``request_family``)."""
        self.sensitive_headers = sensitive_header_names(sensitive_headers)
        """Header names (lower case) the configuration marks as credentials, besides those
        ``providers.transport.credentials`` knows: masked in errors, kept from other origins."""
        self.model_id = model_id
        self.limits = limits or DEFAULT_LIMITS
        """What one request may make the client hold (``Limits``)."""
        self._headers = self.endpoint.authorized(
            {
                "Accept": "application/json, text/event-stream",
                "Accept-Encoding": ACCEPT_ENCODING,
                **(headers or {}),
            },
            api_key,
        )
        self._secrets = secret_forms(
            self._headers,
            (self.endpoint.password, _proxy_password(proxy)),
            sensitive=self.sensitive_headers,
        )
        self._secret_texts = tuple(secret.decode() for secret in self._secrets)
        self._api_key = api_key
        self._borrowed = borrowed = _borrowed(http_client, proxy)
        make_pool = functools.partial(
            new_http_client, timeout, self.limits, proxy=proxy, trust_env=trust_env
        )
        self._pools = LoopPools(make_pool) if borrowed is None else None
        self._borrowed_loop: asyncio.AbstractEventLoop | None = None
        if timeouts is None:
            timeouts = Timeouts() if timeout is DEFAULT_TIMEOUT else Timeouts.from_httpx(timeout)
        self.timeouts = timeouts
        self._request_extensions = timeouts.request_extensions()
        self._capability_overrides = capability_overrides
        self._resolver: OpenAiCompatibleCapabilityResolver | None = None

    _family_of: tuple[str | None, str | None] = (None, None)  # (the last id, its family)

    def request_family(self, options: ChatOptions | None) -> str | None:
        """The model family of one request: ``model_family`` when given, else the one
        ``capabilities.reasoning_families`` reads from the model id (the options', else the
        client's), else ``None``. Runs per request: the last id's answer is kept."""
        if self.model_family is not None:
            return self.model_family
        model = (options.model_id if options is not None else None) or self.model_id
        if model == self._family_of[0]:
            return self._family_of[1]
        # deferred: the family table (~0.6 ms of cold import), read once per model id
        from capabilities.reasoning_families import reasoning_family_for

        row = reasoning_family_for(model)
        family = row.family if row is not None else None
        self._family_of = (model, family)
        return family

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def as_sync(self) -> SyncChatClient:
        """This client behind a blocking API (``SyncChatClient``), on a private loop thread."""
        # deferred: the blocking API's loop thread is not part of an async client's cold start
        from providers.abstractions.sync_client import SyncChatClient

        return SyncChatClient(cast("ChatClient", self))  # (each wire client is a ChatClient)

    async def aclose(self) -> None:
        """Closes the calling loop's connection pool and what can be closed of the other
        loops' (``LoopPools``); a borrowed ``http_client`` is the caller's to close."""
        if self._pools is not None:
            await self._pools.aclose()

    @property
    def _http(self) -> httpx.AsyncClient:
        """The running event loop's connection pool (``providers.transport.loop_pools``).

        Hot path: read once per request, one dict lookup. A borrowed ``http_client`` serves
        the loop that first used it through this client: its connections belong to that loop,
        so another loop gets ``EventLoopError`` instead of asyncio's bare ``RuntimeError``.
        """
        if self._pools is not None:
            return self._pools.current()
        loop = asyncio.get_running_loop()
        if self._borrowed_loop is not loop:
            if self._borrowed_loop is not None:
                raise EventLoopError(
                    "the http_client passed to this client serves the event loop that first "
                    "used it, and another loop called (asyncio.run a second time, a "
                    "SyncChatClient?): leave http_client out so that the client keeps a pool "
                    "per loop, or make one client per loop",
                    backend=self.profile.name,
                )
            self._borrowed_loop = loop
        assert self._borrowed is not None
        return self._borrowed

    def _current_http(self) -> httpx.AsyncClient:
        return self._http

    @masks_secrets
    def _status_error(self, status: int, body: bytes, headers: httpx.Headers) -> ProviderError:
        """The typed error for an HTTP error answer; an unknown model gets the served ids and
        the closest match in its message (vLLM answers 404, SGLang 400)."""
        # The error-answer path (its patterns, difflib for the closest model id) costs about
        # 4 ms of a first request's cold start (-X importtime); a request that succeeds never
        # uses it.
        # deferred: error answers only (cold start, above)
        from capabilities.model_id import model_not_found_error

        # deferred: error answers only (cold start, above)
        from providers.transport.error_classification import error_from_response

        # deferred: error answers only (cold start, above)
        from providers.transport.retry_after import retry_after_from_headers

        backend = self.profile.name
        if status in (400, 404) and self.model_id:
            cached = self._resolver.cached(self.model_id) if self._resolver else None
            error = model_not_found_error(
                status,
                body.decode("utf-8", "replace"),
                configured=self.model_id,
                served_ids=cached.served_model_ids.value if cached is not None else None,
                backend=backend,
                base_url=self.endpoint.api_base,
            )
            if error is not None:
                return error
        return error_from_response(
            status, body, backend=backend, retry_after=retry_after_from_headers(headers)
        )

    def _request_headers(self, options: ChatOptions | None) -> RequestHeaders:
        """The client's headers, or ``ChatOptions.headers`` over them (checked:
        ``merge_request_headers``) with the values of those, to mask in errors as the client's
        own credentials are: every one, not only those whose name says credential (a cookie,
        a tenant id, a signed URL parameter moved to a header), since only the caller knows
        what each means. Without per-request headers, the client's dict itself: no copy."""
        extra = options.headers if options is not None else None
        if not extra:
            return self._headers, ()
        return merge_request_headers(self._headers, extra), secret_forms(extra, every_value=True)

    async def get_response_as(
        self, output_type: type[_Value], messages: ChatInput, options: ChatOptions | None = None
    ) -> StructuredResponse[_Value]:
        """``get_response`` asked for JSON of ``output_type``, read back as a validated value
        (``providers.abstractions.structured_output``); a subclass supplies ``get_response``."""
        # deferred: pydantic's cold import (~65 ms), paid only by structured output
        from providers.abstractions.structured_output import get_response_as

        return await get_response_as(cast("ChatClient", self), output_type, messages, options)

    def get_service(self, service_type: type[_Service]) -> _Service | None:
        """This client if it is a ``service_type``; its ``ChatClientMetadata`` (backend, API
        root, model id) when that is asked for; else ``None``."""
        if isinstance(self, service_type):
            return self
        # deferred: a dataclass (~1 ms of cold start) that only a framework asking for it needs
        from providers.abstractions.services import ChatClientMetadata

        if service_type is ChatClientMetadata:
            metadata = ChatClientMetadata(self.profile.name, self.endpoint.api_base, self.model_id)
            return metadata if isinstance(metadata, service_type) else None
        return None

    async def get_capabilities(self, *, refresh: bool = False) -> ModelCapabilities:
        """What the server says about the model (context window, modalities, backend, served
        ids), each value with its source; probed once per client and cached."""
        if self._resolver is None:
            # deferred: -X importtime: pydantic and the parsers, +120 ms on the client's ~130 ms
            from capabilities.resolver import OpenAiCompatibleCapabilityResolver

            self._resolver = OpenAiCompatibleCapabilityResolver(
                self.endpoint,
                http_client=self._current_http,
                api_key=self._api_key,
                overrides=self._capability_overrides,
                headers={k: v for k, v in self._headers.items() if k != "Authorization"},
            )
        if refresh:
            self._resolver.invalidate()
        return await self._resolver.resolve(self.model_id)


def _borrowed(http_client: AsyncHttpClient | None, proxy: str | None) -> httpx.AsyncClient | None:
    """The caller's http client as an ``httpx.AsyncClient`` (an httpx2 one bridged); a
    ``proxy`` beside it is a mistake, since the caller's client has its own."""
    if http_client is not None and proxy is not None:
        raise ConfigurationError(
            "proxy applies to the client's own connection pool: configure it on the "
            "http_client passed in instead"
        )
    if http_client is not None and is_httpx2_client(http_client):
        return through_httpx2(http_client)  # openai-python 3's library
    return cast("httpx.AsyncClient | None", http_client)


def _proxy_password(proxy: str | None) -> str:
    """The password in a proxy URL, to mask wherever an error might quote it."""
    if proxy is None:
        return ""
    try:
        return httpx.URL(proxy.strip()).password or ""
    except (httpx.InvalidURL, UnicodeError):
        return ""  # (refused with the URL unquoted when the pool is made)


async def fetch_whole(
    http: httpx.AsyncClient,
    method: str,
    url: str,
    *,
    body: Any,
    headers: Mapping[str, str],
    extensions: dict[str, Any],
    total: float | None,
    backend: str,
    mapping: TransportErrorMapping,
    limits: Limits = DEFAULT_LIMITS,
) -> tuple[httpx.Response, bytes, dict[str, float]]:
    """One non-streamed exchange: the response, its body (``read_whole``: bounded by
    ``limits``) and the transport timestamps.

    Only the ``connect`` and ``total`` budgets apply: no byte flows until the answer is
    complete, so there is no first token or gap to time.
    """
    stamps = {"request_sent": time.monotonic()}
    with mapping:
        try:
            async with (
                asyncio.timeout(total),
                http.stream(
                    method,
                    url,
                    json=body,
                    headers=headers,
                    extensions=extensions,
                    follow_redirects=False,  # (off the origin it would carry the headers)
                ) as reply,
            ):
                stamps["response_headers"] = time.monotonic()
                content = await read_whole(reply, limits, backend=backend, stamps=stamps)
                stamps["response_end"] = time.monotonic()
        except TimeoutError as exc:
            if isinstance(exc, ProviderError):
                raise
            raise budget_error("total", total, backend) from None
    return reply, content, stamps
