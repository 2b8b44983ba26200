"""Deriving API URLs from a configured base URL, and keeping its credentials out of them.

Path prefixes are kept (a proxy at ``http://host/llm/v1`` or ``http://host/llm`` works), and
``/v1`` is added only when the path does not already end in a version segment (``/v1``,
``/api/coding/paas/v4``). Probes (``/props``, ``/health``) derive from the same prefix, never from
the host root: behind a path-prefixed proxy the root is someone else's.

User info in the base URL (``http://user:password@host``) is split off here, once: no URL this
module hands out carries it, so nothing that prints a URL — a repr, an error, a structlog event,
httpx's own ``HTTP Request: POST …`` log line — can print the password. Requests authenticate as
they did when httpx read the user info itself, with an ``Authorization: Basic`` header
(``Endpoint.authorized`` says which credential wins when there are several).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from dataclasses import field

import httpx

from providers.abstractions.errors import ConfigurationError
from providers.abstractions.records import value_class

__all__ = ["Endpoint", "check_header", "redact_url"]

_VERSION_SEGMENT = re.compile(r"v\d+", re.IGNORECASE)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_UNSENDABLE = re.compile(r"[^\t\x20-\x7e]")
_EDGE_SPACE = frozenset(" \t")
"""What a header value may not hold: httpx encodes values as ASCII, and a line break would end
the header (h11 refuses it, quoting the value in its error)."""


def redact_url(url: str) -> str:
    """``url`` without user info, for anything that prints it."""
    try:
        return str(httpx.URL(url).copy_with(username=None, password=None))
    except (httpx.InvalidURL, UnicodeError):
        return "(an invalid URL)"


def check_header(what: str, value: str) -> None:
    """Refuse a value httpx cannot send, naming ``what`` and never the value (a header value
    is usually a credential): a line break or other control character, a non-ASCII one, or
    whitespace at either end (h11 refuses to send that, which surfaced as "could not reach")."""
    bad = _UNSENDABLE.search(value)
    if bad is None:
        if value[:1] in _EDGE_SPACE or value[-1:] in _EDGE_SPACE:
            raise ConfigurationError(f"{what} begins or ends with whitespace and cannot be sent")
        return
    char = bad.group()
    if char in "\r\n":
        problem = "a line break (CR or LF)"
    elif char.isascii():
        problem = "a control character"
    else:
        problem = "a non-ASCII character (header values are ASCII)"
    raise ConfigurationError(f"{what} contains {problem} and cannot be sent")


@value_class(frozen=True)
class Endpoint:
    """Where one server is, read from its base URL: its roots and the user info it carried."""

    api_base: str
    """The versioned API root, e.g. ``http://host/llm/v1`` (no trailing slash, no user info)."""
    server_root: str
    """The prefix the server itself lives under, e.g. ``http://host/llm`` — where
    llama.cpp's ``/props`` and ``/health`` are."""
    username: str = field(default="", repr=False)
    """From the base URL's user info (percent-decoded); sent only as ``Authorization``."""
    password: str = field(default="", repr=False)

    @classmethod
    def from_base_url(cls, base_url: str) -> Endpoint:
        """Raises ``ConfigurationError`` (a ``ValueError``) for a URL that cannot be used; its
        message never holds the user info."""
        text = base_url.strip()
        if _CONTROL.search(text):
            raise ConfigurationError("base_url contains a line break or another control character")
        try:
            url = httpx.URL(text)
        except (httpx.InvalidURL, UnicodeError):
            # httpx's reason may quote a piece of a password that holds a '/' ("Invalid port").
            raise ConfigurationError(
                "base_url is not a valid URL (a '/', '?', '#' or '@' in a user name or password "
                "must be percent-encoded)"
            ) from None
        if url.scheme not in ("http", "https") or not url.host:
            shown = str(url.copy_with(username=None, password=None, query=None, fragment=None))
            raise ConfigurationError(f"base_url must be an http(s) URL with a host, got {shown!r}")
        path = url.path.rstrip("/")
        segments = path.split("/")
        if _VERSION_SEGMENT.fullmatch(segments[-1]):
            api_path, root_path = path, "/".join(segments[:-1])
        else:
            api_path, root_path = f"{path}/v1", path
        bare = url.copy_with(username=None, password=None, path="/", query=None, fragment=None)
        origin = str(bare).rstrip("/")
        return cls(origin + api_path, origin + root_path, url.username, url.password)

    @property
    def display(self) -> str:
        """The form to show a person or a log: the API root, without user info."""
        return self.api_base

    @property
    def chat_completions(self) -> str:
        return f"{self.api_base}/chat/completions"

    @property
    def models(self) -> str:
        return f"{self.api_base}/models"

    def server_path(self, path: str) -> str:
        """A path under the server's root prefix (``/props``, ``/health``, ``/version``)."""
        return f"{self.server_root}/{path.lstrip('/')}"

    def authorized(
        self, headers: Mapping[str, str] | None = None, api_key: str | None = None
    ) -> dict[str, str]:
        """``headers`` (checked: ``ConfigurationError`` for a value that cannot be sent) with the
        credential to send.

        One ``Authorization`` header holds one credential, so the explicit beats the implicit:
        ``api_key`` (as ``Bearer``), else an ``Authorization`` already in ``headers``, else the
        base URL's user info (as ``Basic``, what httpx sent for it). An ``api_key`` together
        with user info used to lose to it (httpx overwrote the header); now the key is sent.
        """
        out = dict(headers or {})
        for name, value in out.items():
            if not _HEADER_NAME.fullmatch(name):
                raise ConfigurationError(f"header name {ascii(name)[:60]} is not a valid token")
            check_header(f"header {name!r}", value)
        key = (api_key or "").strip()
        has_authorization = any(name.lower() == "authorization" for name in out)
        if key:
            check_header("api_key", key)
            if has_authorization:
                out = {k: v for k, v in out.items() if k.lower() != "authorization"}
            out["Authorization"] = f"Bearer {key}"
        elif (self.username or self.password) and not has_authorization:
            pair = f"{self.username}:{self.password}".encode()
            out["Authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
        return out
