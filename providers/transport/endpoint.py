"""Deriving API URLs from a configured base URL.

Path prefixes are kept (a proxy at ``http://host/llm/v1`` or ``http://host/llm`` works), and
``/v1`` is added only when the path does not already end in a version segment (``/v1``,
``/api/coding/paas/v4``). Probes (``/props``, ``/health``) derive from the same prefix, never from
the host root: behind a path-prefixed proxy the root is someone else's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import httpx

__all__ = ["Endpoint"]

_VERSION_SEGMENT = re.compile(r"v\d+", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Endpoint:
    api_base: str
    """The versioned API root, e.g. ``http://host/llm/v1`` (no trailing slash)."""
    server_root: str
    """The prefix the server itself lives under, e.g. ``http://host/llm`` — where
    llama.cpp's ``/props`` and ``/health`` are."""

    @classmethod
    def from_base_url(cls, base_url: str) -> Endpoint:
        url = httpx.URL(base_url.strip())
        if url.scheme not in ("http", "https") or not url.host:
            raise ValueError(f"base_url must be an http(s) URL with a host, got {base_url!r}")
        path = url.path.rstrip("/")
        segments = path.split("/")
        if _VERSION_SEGMENT.fullmatch(segments[-1]):
            api_path, root_path = path, "/".join(segments[:-1])
        else:
            api_path, root_path = f"{path}/v1", path
        origin = str(url.copy_with(path="/", query=None, fragment=None)).rstrip("/")
        return cls(origin + api_path, origin + root_path)

    @property
    def chat_completions(self) -> str:
        return f"{self.api_base}/chat/completions"

    @property
    def models(self) -> str:
        return f"{self.api_base}/models"

    def server_path(self, path: str) -> str:
        """A path under the server's root prefix (``/props``, ``/health``, ``/version``)."""
        return f"{self.server_root}/{path.lstrip('/')}"
