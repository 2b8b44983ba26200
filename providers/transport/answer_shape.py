"""What came back when events were asked for: events, one JSON document, or neither.

A streamed request can be answered with something that is not a stream. A server that ignores
``stream: true`` (or a proxy that buffers) sends one ``application/json`` document: that is the
answer, and both clients read it as one. An HTML page (a proxy's or a web server's, at the
wrong URL), a ``204``/``304`` without a body or a redirect httpx did not follow holds no answer
at all: ``InvalidResponseError`` with the status, not a stream that "ended before its end",
which would be retried as a transient cut (and the same page fetched three times).

Anything else (no ``Content-Type``, ``text/plain``) is read as events, as before: a server that
mislabels its stream still works.
"""

from __future__ import annotations

import httpx

from providers.abstractions.errors import InvalidResponseError
from providers.abstractions.limits import Limits
from providers.transport.bodies import read_prefix

__all__ = ["EVENT_STREAM", "json_instead_of_events"]

EVENT_STREAM = "text/event-stream"

_NO_BODY = frozenset({204, 205, 304})
_HTML = frozenset({"text/html", "application/xhtml+xml"})


async def json_instead_of_events(response: httpx.Response, limits: Limits, backend: str) -> bool:
    """For a successful answer that is not ``200 text/event-stream``: whether it is one JSON
    document; ``InvalidResponseError`` when it holds no answer at all."""
    status = response.status_code
    media: str = response.headers.get("content-type", "").partition(";")[0].strip().lower()
    if status in _NO_BODY or not 200 <= status < 300:
        raise InvalidResponseError(
            f"HTTP {status} where an event stream was expected: {_why(response)}",
            status=status,
            backend=backend,
        )
    if media in _HTML:
        page = await read_prefix(response, limits.max_error_body_bytes)
        raise InvalidResponseError(
            f"HTTP {status} answered with an HTML page where an event stream was expected "
            "(a proxy's or a web server's page: is the base URL the model server's API?)",
            status=status,
            backend=backend,
            body=page.decode("utf-8", "replace"),
        )
    return media == "application/json" or media.endswith("+json")


def _why(response: httpx.Response) -> str:
    status = response.status_code
    if status in _NO_BODY:
        return "an answer without a body"
    if 300 <= status < 400:
        location = response.headers.get("location")
        if location is None:
            return "a redirect without a Location"
        try:  # never credentials someone put in the URL
            location = str(httpx.URL(location).copy_with(username=None, password=None))
        except (httpx.InvalidURL, ValueError):
            location = "an invalid URL"
        return f"a redirect to {location}, not followed (set base_url to where it leads)"
    return "not an answer"
