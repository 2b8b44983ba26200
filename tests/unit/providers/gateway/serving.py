"""A gateway on loopback for tests: the real app under the real server, in this process.

In-process, so it dies with the test runner whatever happens; on a port the kernel picks, so
tests never collide. ``backend_chunks`` writes what a chat-completions backend streams.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator, Mapping
from typing import Any

import uvicorn

from providers.config.schema import OaicompatConfig
from providers.gateway.app import GatewayApp
from providers.gateway.server import uvicorn_config

__all__ = ["backend_chunks", "config_for", "running_gateway"]


def config_for(
    backends: Mapping[str, str], roles: Mapping[str, Any] | None = None, **serve: Any
) -> OaicompatConfig:
    """A configuration of ``name -> base_url`` backends (model ``m-<name>``, vLLM profile, one
    attempt so a failure shows at once), with ``roles`` and ``serve`` settings."""
    return OaicompatConfig.model_validate(
        {
            "backends": {
                name: {
                    "base_url": url,
                    "model_id": f"m-{name}",
                    "backend": "vllm",
                    "retry": {"max_attempts": 1},
                }
                for name, url in backends.items()
            },
            "roles": dict(roles or {}),
            "serve": serve,
        }
    )


@contextlib.asynccontextmanager
async def running_gateway(
    config: OaicompatConfig, *, env: Mapping[str, str] | None = None, **app_kwargs: Any
) -> AsyncIterator[str]:
    """Serves ``config`` until the block ends; yields the base URL (``http://127.0.0.1:P/v1``)."""
    app = GatewayApp(config, env=env or {}, **app_kwargs)
    listener = socket.create_server(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn_config(app, config))
    task = asyncio.create_task(server.serve(sockets=[listener]))
    try:
        for _ in range(500):
            if server.started:
                break
            await asyncio.sleep(0.01)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 10)
        listener.close()


def backend_chunks(*deltas: Mapping[str, Any], finish: str = "stop") -> bytes:
    """An SSE body of one chunk per delta, a finish chunk, a usage chunk and ``[DONE]``."""
    events = [
        {
            "id": "c1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [{"index": 0, "delta": dict(delta), "finish_reason": None}],
        }
        for delta in deltas
    ]
    events.append(
        {
            "id": "c1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [{"index": 0, "delta": {}, "finish_reason": finish}],
        }
    )
    events.append(
        {
            "id": "c1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [],
            "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
        }
    )
    body = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)
    return body + b"data: [DONE]\n\n"
