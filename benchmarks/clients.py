"""The clients the benchmark measures: a small registry of async callables.

Each ``ClientSpec`` opens a *session* (an async context manager, entered once per process) that
yields a ``StreamFn``: ``await stream(scenario)`` requests that scenario from the loopback server,
consumes the whole stream the way a user of that client would, and returns the ``Outcome``
(text, reasoning, tool-call arguments). Only the ``StreamFn`` call is timed; connection pools and
client objects live in the session, as they do in an application.

Every session gets a connection pool of at least ``max_connections`` so that the concurrency
figure compares clients, not pool defaults.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx

from benchmarks.scenarios import GeneratedStream, Outcome, Scenario

__all__ = [
    "FULL_PIPELINE",
    "REQUEST",
    "ClientSpec",
    "SessionFactory",
    "StreamFn",
    "default_clients",
    "scenario_url",
    "silence_library_logs",
]

StreamFn = Callable[[Scenario], Awaitable[Outcome]]
SessionFactory = Callable[[str, int], AbstractAsyncContextManager[StreamFn]]
"""``session(base_url, max_connections)``: ``base_url`` is ``http://127.0.0.1:<port>``."""

REQUEST: dict[str, Any] = {
    "model": "bench",
    "messages": [{"role": "user", "content": "Weather in Paris?"}],
    "stream": True,
    "stream_options": {"include_usage": True},
}
_TIMEOUT = httpx.Timeout(connect=10.0, read=600.0, write=60.0, pool=600.0)


def scenario_url(base: str, scenario: Scenario) -> str:
    """The OpenAI-style base URL (``…/v1``) that serves ``scenario``."""
    return f"{base}/{scenario.id}/v1"


@dataclass(frozen=True, slots=True)
class ClientSpec:
    name: str
    label: str
    session: SessionFactory | None
    """``None`` when the client cannot run here; ``unavailable`` says why."""
    recovers_text_tool_calls: bool = False
    """True when the client turns a ``<tool_call>`` in the text into a tool call; it is then
    held to ``GeneratedStream.recovered`` instead of ``wire``."""
    unavailable: str | None = None

    def expected(self, stream: GeneratedStream) -> Outcome:
        return stream.recovered if self.recovers_text_tool_calls else stream.wire


# ---- the floor: the least a Python client can do ----------------------------------------------


@asynccontextmanager
async def floor_session(base: str, max_connections: int) -> AsyncIterator[StreamFn]:
    """httpx stream + ``aiter_raw`` + split on ``\\n`` + one ``json.loads`` per data line."""
    body = json.dumps(REQUEST).encode()
    headers = {"content-type": "application/json", "accept": "text/event-stream"}
    async with httpx.AsyncClient(timeout=_TIMEOUT, limits=_limits(max_connections)) as http:

        async def stream(scenario: Scenario) -> Outcome:
            url = scenario_url(base, scenario) + "/chat/completions"
            text: list[str] = []
            reasoning: list[str] = []
            arguments: dict[int, list[str]] = {}
            rest = b""
            loads = json.loads
            async with http.stream("POST", url, content=body, headers=headers) as response:
                async for raw in response.aiter_raw():
                    lines = (rest + raw).split(b"\n")
                    rest = lines.pop()
                    for line in lines:
                        if not line.startswith(b"data: ") or line == b"data: [DONE]":
                            continue
                        for choice in loads(line[6:])["choices"]:
                            delta = choice["delta"]
                            value = delta.get("content")
                            if value:
                                text.append(value)
                            value = delta.get("reasoning_content") or delta.get("reasoning")
                            if value:
                                reasoning.append(value)
                            calls = delta.get("tool_calls")
                            if calls:
                                for call in calls:
                                    fragment = (call.get("function") or {}).get("arguments")
                                    if fragment:
                                        arguments.setdefault(call["index"], []).append(fragment)
            return Outcome(
                "".join(text),
                "".join(reasoning),
                tuple("".join(arguments[i]) for i in sorted(arguments)),
            )

        yield stream


# ---- oaicompat ---------------------------------------------------------------------------------


@asynccontextmanager
async def oaicompat_session(base: str, max_connections: int) -> AsyncIterator[StreamFn]:
    """``OpenAiCompatibleChatClient.get_streaming_response``, accumulated with a
    ``ChatResponseBuilder`` as a memory-conscious caller would (the floor keeps strings only)."""
    async with _layered_session(base, max_connections, full=False) as stream:
        yield stream


@asynccontextmanager
async def full_pipeline_session(base: str, max_connections: int) -> AsyncIterator[StreamFn]:
    """Issue 9's full pipeline: telemetry -> text recovery (auto) -> client (with its
    normalisation); the targets are judged on it."""
    async with _layered_session(base, max_connections, full=True) as stream:
        yield stream


@asynccontextmanager
async def full_with_retry_session(base: str, max_connections: int) -> AsyncIterator[StreamFn]:
    """The standard stack ``ChatClientBuilder`` and the YAML configuration build: the full
    pipeline with ``RetryingChatClient`` between telemetry and text recovery. Reported beside
    it, so that what retry costs is visible on its own."""
    async with _layered_session(base, max_connections, full=True, retry=True) as stream:
        yield stream


@asynccontextmanager
async def _layered_session(
    base: str, max_connections: int, *, full: bool, retry: bool = False
) -> AsyncIterator[StreamFn]:
    from providers import (
        ChatClient,
        ChatMessage,
        OpenAiCompatibleChatClient,
        RetryingChatClient,
        RetryPolicy,
        TextRecoveryChatClient,
    )
    from providers.abstractions.chat_response import ChatResponseBuilder
    from providers.chat_completions.client import DEFAULT_TIMEOUT

    messages = [ChatMessage.user("Weather in Paris?")]
    clients: dict[str, ChatClient] = {}
    http = httpx.AsyncClient(timeout=DEFAULT_TIMEOUT, limits=_limits(max_connections))
    async with http:

        def build(scenario: Scenario) -> ChatClient:
            client: ChatClient = OpenAiCompatibleChatClient(
                scenario_url(base, scenario), "bench", backend=scenario.backend, http_client=http
            )
            if full:
                from telemetry import TelemetryChatClient

                client = TextRecoveryChatClient(client)
                if retry:
                    client = RetryingChatClient(client, RetryPolicy())
                client = TelemetryChatClient(client)
            return client

        async def stream(scenario: Scenario) -> Outcome:
            client = clients.get(scenario.id)
            if client is None:
                client = clients[scenario.id] = build(scenario)
            builder = ChatResponseBuilder(keep_raw=False)
            async for update in client.get_streaming_response(messages):
                builder.add(update)
            response = builder.build()
            return Outcome(
                response.text,
                response.reasoning,
                tuple(call.raw_arguments for call in response.tool_calls),
            )

        yield stream


# Issue 9's headline client, measured and held to the recovered tool call in
# text-tool-call-in-content; the targets are judged on it.
FULL_PIPELINE: SessionFactory | None = full_pipeline_session


# ---- openai-python (the optional `bench` extra) ------------------------------------------------


@asynccontextmanager
async def openai_session(base: str, max_connections: int) -> AsyncIterator[StreamFn]:
    """``AsyncOpenAI(...).chat.completions.create(stream=True)``, as its README shows.

    Its default pool (1,000 connections) already exceeds ``max_connections``.
    """
    import openai

    clients: dict[str, Any] = {}
    messages: Any = REQUEST["messages"]
    try:

        async def stream(scenario: Scenario) -> Outcome:
            client = clients.get(scenario.id)
            if client is None:
                client = clients[scenario.id] = openai.AsyncOpenAI(
                    base_url=scenario_url(base, scenario), api_key="x", max_retries=0
                )
            text: list[str] = []
            reasoning: list[str] = []
            arguments: dict[int, list[str]] = {}
            chunks = await client.chat.completions.create(
                model="bench",
                messages=messages,
                stream=True,
                stream_options={"include_usage": True},
            )
            async for chunk in chunks:
                for choice in chunk.choices:
                    delta = choice.delta
                    if delta.content:
                        text.append(delta.content)
                    extra = delta.model_extra or {}
                    value = extra.get("reasoning_content") or extra.get("reasoning")
                    if value:
                        reasoning.append(value)
                    for call in delta.tool_calls or ():
                        if call.function is not None and call.function.arguments:
                            arguments.setdefault(call.index, []).append(call.function.arguments)
            return Outcome(
                "".join(text),
                "".join(reasoning),
                tuple("".join(arguments[i]) for i in sorted(arguments)),
            )

        yield stream
    finally:
        for client in clients.values():
            await client.close()


def _limits(max_connections: int) -> httpx.Limits:
    size = max(max_connections, 100)
    return httpx.Limits(max_connections=size, max_keepalive_connections=size)


def default_clients() -> dict[str, ClientSpec]:
    """The registry, in table order. The floor is always first: ratios are taken to it."""
    specs = [
        ClientSpec("floor", "floor (httpx + json loop)", floor_session),
        ClientSpec("oaicompat", "client (recovery off)", oaicompat_session),
        ClientSpec(
            "full",
            "full pipeline",
            FULL_PIPELINE,
            recovers_text_tool_calls=True,
            unavailable=None
            if FULL_PIPELINE is not None
            else "not wired yet (text recovery and telemetry layers pending)",
        ),
        ClientSpec(
            "full_retry",
            "full pipeline + retry",
            full_with_retry_session,
            recovers_text_tool_calls=True,
        ),
    ]
    if importlib.util.find_spec("openai") is not None:
        specs.append(ClientSpec("openai", "openai-python", openai_session))
    else:
        specs.append(
            ClientSpec(
                "openai", "openai-python", None, unavailable="not installed (pip install .[bench])"
            )
        )
    return {spec.name: spec for spec in specs}


def silence_library_logs() -> None:
    """Send the library's structlog events (one ``llm.request.completed`` per request from the
    telemetry layer) to ``/dev/null`` instead of the terminal, through structlog's default
    processors: formatting them stays in the measured cost, printing a line per stream into
    the benchmark's output does not. Only for the benchmark's own processes, and only when
    nothing configured structlog already."""
    import os

    import structlog

    if not structlog.is_configured():
        sink = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - for the process's life
        structlog.configure(logger_factory=structlog.PrintLoggerFactory(sink))


def session_for(spec: ClientSpec) -> SessionFactory:
    if spec.session is None:
        raise ValueError(f"{spec.label} cannot run: {spec.unavailable}")
    return spec.session
