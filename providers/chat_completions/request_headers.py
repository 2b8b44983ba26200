"""Per-request HTTP headers (``ChatOptions.headers``) over a wire client's own.

A caller, or a layer such as session affinity, adds headers to one request: a routing key, a
tenant, a trace id, an end user's token for a gateway. They are checked as the client's own are
(``providers.transport.endpoint.check_header``: a value httpx cannot send is refused without
being quoted, since header values are often credentials), but the mistake is the request's, so
it is an ``InvalidRequestError`` raised before anything is sent, not a ``ConfigurationError``.

Which wins: the per-request header, case-insensitively, so the server never sees two of one
name. That includes ``Authorization`` (and ``Proxy-Authorization``): a per-request credential
is an explicit choice, the one way a multi-tenant gateway gets each end user's token through
one client. Every per-request value is masked where an error quotes the server (not only
credentials: only the caller knows what a header means), and the credentials among them never
go to another origin (``FallbackChatClient``; the wire clients follow no redirect).

Headers that describe the body or the connection (``Content-Length``, ``Transfer-Encoding``,
``Connection``, ``Host`` and the other hop-by-hop ones) are refused: httpx computes them, and a
wrong one corrupts the exchange or the pooled connection for the requests after it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from providers.abstractions.errors import ConfigurationError, InvalidRequestError
from providers.transport.endpoint import check_header

__all__ = ["REFUSED_REQUEST_HEADERS", "merge_request_headers"]

REFUSED_REQUEST_HEADERS = frozenset(
    {
        "connection",
        "content-length",
        "host",
        "keep-alive",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)
"""Per-request header names refused: the transport owns the body's framing and the connection."""

_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_USER_MESSAGE = "The request could not be sent: one of its headers cannot be sent."


def merge_request_headers(
    client_headers: Mapping[str, str], extra: Mapping[str, str]
) -> dict[str, str]:
    """``client_headers`` with ``extra`` over them (case-insensitively), each of ``extra``
    checked; ``InvalidRequestError`` (``param="headers"``) naming the header, never its value."""
    checked: dict[str, str] = {}
    for name, value in extra.items():
        if not isinstance(name, str) or not _TOKEN.fullmatch(name):
            shown = ascii(name)[:60]
            raise _refused(f"the header name {shown} is not a valid token")
        if name.lower() in REFUSED_REQUEST_HEADERS:
            raise _refused(f"the header {name!r} is set by the transport, not per request")
        if not isinstance(value, str):
            raise _refused(f"the header {name!r} has a {type(value).__name__} value, not a str")
        try:
            check_header(f"the header {name!r}", value)
        except ConfigurationError as exc:
            raise _refused(str(exc)) from None
        checked[name] = value
    replaced = {name.lower() for name in checked}
    merged = {k: v for k, v in client_headers.items() if k.lower() not in replaced}
    merged.update(checked)
    return merged


def _refused(message: str) -> InvalidRequestError:
    return InvalidRequestError(message, param="headers", user_message=_USER_MESSAGE)
