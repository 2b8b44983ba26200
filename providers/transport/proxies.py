"""Which proxy a request of the library's own HTTP client goes through.

httpx reads ``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY`` and ``NO_PROXY`` only for a client it
builds its own transport for; the library's client brings one (``deferred_tls``,
``stale_connections``), so without this module a user behind a corporate proxy would be routed
around it, silently, where openai-python and a bare ``httpx.AsyncClient()`` go through it.

The rules are httpx's: a backend's own ``proxy`` (YAML ``proxy:``, ``proxy=``) carries every
request and the environment is not read; otherwise, unless ``trust_env`` is off, the
environment is read as ``urllib.request.getproxies`` reads it (lower case before upper case; the
system settings on macOS and Windows), a proxy without a scheme is ``http://``, and ``NO_PROXY``
exempts hosts as curl does (``*``: every host; ``.example.com``: its subdomains;
``example.com``: it and its subdomains; an IP address or ``localhost``: that host). The result is
a table of httpx mount patterns, so httpx matches URLs exactly as it would for its own client.

A proxy URL may carry a password (``http://user:pass@proxy:3128``): httpx sends it as
``Proxy-Authorization`` and keeps it out of the proxy's URL; nothing here quotes a proxy URL,
and one that cannot be used is refused without being quoted. The wire clients mask the password
in errors like their own key (``HttpClientBase``).
"""

from __future__ import annotations

import importlib.util
import ipaddress
from urllib.request import getproxies

import httpx

from providers.abstractions.errors import ConfigurationError

__all__ = ["check_proxy_url", "environment_proxies", "proxy_routes"]

_SCHEMES = ("http", "https", "socks5", "socks5h")


def check_proxy_url(url: str, what: str = "proxy") -> str:
    """``url`` if httpx can send through it; ``ConfigurationError`` naming ``what`` and never
    the URL (it may hold a password) otherwise."""
    try:
        parsed = httpx.URL(url.strip())
    except (httpx.InvalidURL, UnicodeError, TypeError, AttributeError):
        raise ConfigurationError(f"{what} is not a URL") from None
    if parsed.scheme not in _SCHEMES or not parsed.host:
        raise ConfigurationError(
            f"{what} must be an http://, https://, socks5:// or socks5h:// URL with a host"
        )
    if parsed.scheme.startswith("socks") and importlib.util.find_spec("socksio") is None:
        raise ConfigurationError(
            f"{what} is a SOCKS proxy, which needs the socksio package (pip install httpx[socks])"
        )
    return url.strip()


def proxy_routes(proxy: str | None, trust_env: bool) -> dict[str, str | None]:
    """httpx mount pattern → proxy URL (``None``: no proxy) for the library's client.

    ``proxy``: the backend's own, for every request. Else, with ``trust_env``, the
    environment's (``NO_PROXY`` entries map to ``None``); else none.
    """
    if proxy is not None:
        return {"all://": check_proxy_url(proxy)}
    if not trust_env:
        return {}
    return environment_proxies()


def environment_proxies() -> dict[str, str | None]:
    """The environment's proxies as httpx reads them (``httpx._utils.get_environment_proxies``,
    which is private, so its rules are restated here); a proxy httpx could not use is refused
    at once, naming the variable's scheme, rather than at the first request."""
    found = getproxies()
    routes: dict[str, str | None] = {}
    for scheme in ("http", "https", "all"):
        value = found.get(scheme)
        if value:
            url = value if "://" in value else f"http://{value}"
            routes[f"{scheme}://"] = check_proxy_url(url, f"the {scheme}_proxy variable")
    for entry in found.get("no", "").split(","):
        host = entry.strip()
        if host == "*":
            return {}
        if not host:
            continue
        if "://" in host:
            routes[host] = None
        elif _is_ip(host) or host.lower() == "localhost":
            routes[f"all://[{host}]" if ":" in host else f"all://{host}"] = None
        else:
            routes[f"all://*{host}"] = None
    return routes


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.partition("/")[0])  # (httpx reads a CIDR as its address)
    except ValueError:
        return False
    return True
