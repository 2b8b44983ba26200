"""Which of the headers an OpenAI SDK sends to the transport go on to the backend.

The SDK's request ends at the transport; the backend gets a new request from the pipeline, with
the pipeline's body, connection, retries and credentials. The headers that describe the
caller's request (its own ``X-Session-ID``, a tenant, ``traceparent``, ``extra_headers`` and
``default_headers``, ``User-Agent``, which the stock class would have sent to the server) go on
as ``ChatOptions.headers``. Those that describe the SDK's exchange with the transport stay:

* the connection and the body's framing (``Host``, ``Content-Length``, ``Connection`` and the
  other hop-by-hop headers): httpx writes the pipeline's own, and a copied one corrupts it;
* content negotiation (``Accept``, ``Accept-Encoding``, ``Content-Type``): the transport
  answered them itself, and the pipeline's wire client asks for what it reads (events for a
  stream, which the SDK's ``Accept: application/json`` would contradict);
* the SDK's credentials (``Authorization``, ``OpenAI-Organization``, ``OpenAI-Project``, which
  the SDK fills from ``OPENAI_*`` variables of the environment): the configured backend decides
  credentials, and an OpenAI key must not reach a local server;
* ``X-Stainless-*``: the SDK's description of its own attempt (``retry-count``,
  ``read-timeout``, runtime). On the pipeline's request they would be wrong (a third attempt of
  the pipeline's retry would say ``retry-count: 0``, and the timeout is not the pipeline's),
  and only OpenAI's servers read them.
"""

from __future__ import annotations

from collections.abc import Iterable

from providers.chat_completions.request_headers import REFUSED_REQUEST_HEADERS

__all__ = ["STAYS_WITH_THE_SDK", "forwarded_headers"]

STAYS_WITH_THE_SDK = REFUSED_REQUEST_HEADERS | frozenset(
    {
        "accept",
        "accept-encoding",
        "content-type",
        "authorization",
        "openai-organization",
        "openai-project",
    }
)
"""Lower-case names never forwarded (besides ``Proxy-*`` and ``X-Stainless-*``)."""


def forwarded_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str] | None:
    """The headers of the SDK's request that go on to the backend (``None``: none); a name
    sent twice is one header of the values joined by commas, as HTTP reads it. Values lose the
    whitespace around them, which HTTP says is not part of a value (and h11 will not send)."""
    kept: dict[str, str] = {}
    names: dict[str, str] = {}
    for name, raw in headers:
        lower, value = name.lower(), raw.strip(" \t")
        if lower in STAYS_WITH_THE_SDK or lower.startswith(("proxy-", "x-stainless-")):
            continue
        if lower in names:
            kept[names[lower]] += f", {value}"
        else:
            names[lower] = name
            kept[name] = value
    return kept or None
