"""Fake servers for the capability tests, built from the discovery files in ``transcripts/``.

``mount(router, root, backend, setup)`` answers every recorded ``<setup>--<method>-<path>``
exchange at ``root + path`` with the recorded status, headers and body bytes, and everything else
the way that backend answers an unknown path. The bodies are read from the files, never copied
into tests.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx
import respx

TRANSCRIPTS = Path(__file__).resolve().parents[3] / "transcripts"


@dataclass(frozen=True)
class Exchange:
    name: str
    method: str
    path: str
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    def with_json(self, payload: Any) -> Exchange:
        return replace(self, body=json.dumps(payload).encode())


def discovery(backend: str, setup: str) -> dict[str, Exchange]:
    """Every ``<setup>--*`` exchange of ``transcripts/<backend>/discovery``, keyed by path."""
    folder = TRANSCRIPTS / backend / "discovery"
    found: dict[str, Exchange] = {}
    for meta_path in sorted(folder.glob(f"{setup}--*.meta.json")):
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        stem = meta_path.name.removesuffix(".meta.json")
        found[meta["path"]] = Exchange(
            name=stem,
            method=meta["method"],
            path=meta["path"],
            status=meta["status"],
            headers=dict(meta.get("headers") or {}),
            body=(folder / f"{stem}.raw").read_bytes(),
        )
    if not found:
        raise FileNotFoundError(f"no {setup}--* discovery files in {folder}")
    return found


# How each backend answers a path it does not have (docs/wire.md §1.4, §4).
def _llamacpp_404(request: httpx.Request) -> httpx.Response:
    return httpx.Response(
        404,
        json={"error": {"code": 404, "message": "File Not Found", "type": "not_found_error"}},
        headers={"Server": "llama.cpp"},
    )


def _fastapi_404(request: httpx.Request) -> httpx.Response:
    return httpx.Response(404, json={"detail": "Not Found"}, headers={"server": "uvicorn"})


def _go_404(request: httpx.Request) -> httpx.Response:
    return httpx.Response(404, text="404 page not found")


def _lmstudio_unknown(request: httpx.Request) -> httpx.Response:
    # LM Studio answers unknown endpoints with 200 and an error body.
    path = request.url.path
    return httpx.Response(
        200, json={"error": f"Unexpected endpoint or method. ({request.method} {path})"}
    )


FALLBACKS: dict[str, Callable[[httpx.Request], httpx.Response]] = {
    "llamacpp": _llamacpp_404,
    "llama-cpp-python": _fastapi_404,
    "vllm": _fastapi_404,
    "sglang": _fastapi_404,
    "ollama": _go_404,
    "lmstudio": _lmstudio_unknown,
}

SETUPS = {
    "llamacpp": "qwen25-plain",
    "llama-cpp-python": "gguf-template",
    "vllm": "plain",
    "sglang": "plain",
    "ollama": "reconstructed",
    "lmstudio": "reconstructed",
}
"""The discovery set used for each backend."""


def mount(
    router: respx.MockRouter,
    root: str,
    backend: str,
    exchanges: Iterable[Exchange] | None = None,
    *,
    fallback: Callable[[httpx.Request], httpx.Response] | None = None,
) -> dict[str, respx.Route]:
    """Answer ``exchanges`` (default: the backend's recorded set) under ``root`` (a server root
    such as ``http://host/llm``), and everything else under ``root`` with the backend's
    unknown-path answer. Returns the routes by path."""
    chosen = (
        list(exchanges) if exchanges is not None else discovery(backend, SETUPS[backend]).values()
    )
    routes: dict[str, respx.Route] = {}
    for exchange in chosen:
        routes[exchange.path] = router.route(
            method=exchange.method, url=root.rstrip("/") + exchange.path
        ).respond(exchange.status, content=exchange.body, headers=exchange.headers)
    router.route(url__startswith=root.rstrip("/") + "/").mock(
        side_effect=fallback or FALLBACKS[backend]
    )
    return routes
