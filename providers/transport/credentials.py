"""Which request headers are credentials, and which origin a URL belongs to.

Two questions every path that sends a caller's headers must answer the same way: may this
header leave for that URL (fallback to another backend, a redirect, a probe), and must its value
be masked where an error quotes a server's text.

A header is a credential when its name is ``Authorization``, ``Proxy-Authorization``,
``Cookie`` or ``Set-Cookie``, when it holds one of the words of ``CREDENTIAL_WORDS``
(``X-Api-Key``, ``X-Auth-Token``, ``X-Session-Cookie``), or when the configuration names it
(``sensitive_headers:``, for a gateway whose credential is called ``X-Tenant``). Credentials given
for one backend go only to that backend's origin.

An origin is what browsers and httpx mean by it: scheme, host and port, the port filled in from
the scheme when the URL leaves it out (``http://h`` and ``http://h:80`` are one origin;
``http://h`` and ``https://h`` are two, and a downgrade or upgrade of scheme moves a credential
onto a different connection, so it counts as leaving).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping

import httpx

from providers.abstractions.errors import ConfigurationError

__all__ = [
    "CREDENTIAL_HEADERS",
    "CREDENTIAL_WORDS",
    "Origin",
    "credential_names",
    "is_credential",
    "origin_of",
    "secret_forms",
    "sensitive_header_names",
]

CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie"})
"""Header names (lower case) that always carry a credential."""

CREDENTIAL_WORDS = ("key", "token", "secret", "password", "auth", "cookie")
"""A header whose name holds one of these (``X-Api-Key``) carries a credential."""

Origin = tuple[str, str, int]
"""``(scheme, host, port)``, lower case, the port filled in from the scheme."""

_DEFAULT_PORTS = {"http": 80, "https": 443}
_MIN_SECRET = 4
"""Shorter values are not masked: replacing every "abc" in a message would garble it and
protect nothing."""
_TOKEN = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyz")


def sensitive_header_names(names: Collection[str] | None) -> frozenset[str]:
    """``names`` (the configuration's ``sensitive_headers``) as lower-case header names;
    ``ConfigurationError`` for one that is not a header name (a name is not a secret, so the
    error may quote it, shortened and escaped)."""
    if names is None:
        return frozenset()
    if isinstance(names, str):
        raise ConfigurationError("sensitive_headers is a list of header names, not one string")
    checked = set()
    for name in names:
        lowered = name.lower() if isinstance(name, str) else ""
        if not lowered or not set(lowered) <= _TOKEN:
            raise ConfigurationError(f"sensitive_headers: {ascii(name)[:60]} is not a header name")
        checked.add(lowered)
    return frozenset(checked)


def is_credential(name: str, sensitive: Collection[str] = ()) -> bool:
    """Whether the header ``name`` carries a credential (``sensitive``: lower-case names the
    configuration adds)."""
    lowered = name.lower()
    return (
        lowered in CREDENTIAL_HEADERS
        or lowered in sensitive
        or any(word in lowered for word in CREDENTIAL_WORDS)
    )


def credential_names(headers: Mapping[str, str], sensitive: Collection[str] = ()) -> list[str]:
    """The names among ``headers`` that carry credentials, as given."""
    return [name for name in headers if is_credential(name, sensitive)]


def origin_of(url: str | httpx.URL) -> Origin | None:
    """The origin of ``url``; ``None`` when it has none (not an absolute http(s) URL), which
    callers treat as a different origin from every other."""
    try:
        parsed = url if isinstance(url, httpx.URL) else httpx.URL(url)
    except (httpx.InvalidURL, UnicodeError, TypeError):
        return None
    scheme = parsed.scheme.lower()
    port = parsed.port or _DEFAULT_PORTS.get(scheme)
    if scheme not in _DEFAULT_PORTS or not parsed.host or port is None:
        return None
    return scheme, parsed.host.lower(), port


def secret_forms(
    headers: Mapping[str, str],
    extra: tuple[str, ...] = (),
    *,
    sensitive: Collection[str] = (),
    every_value: bool = False,
) -> tuple[bytes, ...]:
    """What a server might echo that must not reach an error, as bytes to mask: the values of
    credential headers (``every_value``: of all ``headers``, as for a request's own, whose
    meaning only its caller knows), an ``Authorization`` credential also without its scheme,
    each cookie's value on its own (a server quotes the session id, not the header), and
    ``extra`` (the URL's and the proxy's passwords); each as sent and as JSON writes it,
    longest first so that no part of a longer one is left behind."""
    found = list(extra)
    for name, value in headers.items():
        lowered = name.lower()
        if lowered in ("authorization", "proxy-authorization"):
            found += [value, value.partition(" ")[2]]
        elif every_value or is_credential(lowered, sensitive):
            found.append(value)
        if "cookie" in lowered:
            found += [pair.partition("=")[2].strip() for pair in value.split(";")]
    forms = set()
    for secret in found:
        if len(secret) >= _MIN_SECRET:
            forms.add(secret.encode())
            forms.add(json.dumps(secret)[1:-1].encode())
            forms.add(json.dumps(secret, ensure_ascii=False)[1:-1].encode())
    return tuple(sorted(forms, key=len, reverse=True))
