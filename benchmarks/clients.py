"""The clients the benchmark measures: a small registry of async callables.

Each ``ClientSpec`` opens a *session* (an async context manager, entered once per process) that
yields a ``StreamFn``: ``await stream(scenario)`` requests that scenario from the loopback server,
consumes the whole stream the way a user of that client would, and returns the ``Outcome``
(text, reasoning, tool-call arguments). Only the ``StreamFn`` call is timed; connection pools and
client objects live in the session, as they do in an application.

The floors get a connection pool of at least ``max_connections``, as a performance-minded user
sizes it. The library's clients borrow such a pool in the CPU phase; in the concurrency phase
(``ClientSpec.concurrency_session``) they make their own, so that the library's default pool is
what is measured. ``POOL_CHECK`` is the orjson floor on httpx's default pool (100
connections), run in the concurrency phase only: it queues half of 200 streams, which shows
that the phase's arrival measure can fail.

A ``ClientSpec`` with a ``revision`` is one of the library's clients measured from another git
revision's code (``--baseline``): same wrapper, that revision's ``providers`` and ``telemetry``,
run in a process whose ``sys.path`` starts with that revision's tree (``benchmarks.remote``).
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx

from benchmarks.scenarios import TOOL_NAME, GeneratedStream, Outcome, Scenario

__all__ = [
    "BUILDER_CHECK",
    "FLOORS",
    "OBJECTS_CHECK",
    "OUR_CLIENTS",
    "POOL_CHECK",
    "REFERENCE_FLOOR",
    "REQUEST",
    "STANDARD_BUILDER_CHECK",
    "ClientSpec",
    "Revision",
    "SessionFactory",
    "StreamFn",
    "builder_check_client",
    "default_clients",
    "objects_check_client",
    "pool_check_client",
    "reference_floor",
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

REFERENCE_FLOOR = "floor_orjson"
FLOORS = (REFERENCE_FLOOR, "floor_stdlib")
"""The floors, the reference first; the second stands in when orjson is not installed."""
OUR_CLIENTS = ("oaicompat", "full", "full_retry")
"""The library's clients: the ones ``--baseline`` measures from another revision too."""
POOL_CHECK = "floor_httpx_pool"
BUILDER_CHECK = "oaicompat_builder"
"""The bare client with its caller keeping no update: each goes into a
``ChatResponseBuilder(keep_raw=False)`` as it arrives (the response it builds keeps the text, as
the floor keeps it, and no raw chunks). Concurrency phase only: what the library itself holds,
apart from what a caller chooses to keep."""
STANDARD_BUILDER_CHECK = "full_retry_builder"
"""``BUILDER_CHECK`` for the standard pipeline (``create_chat_client``, retry included): what
its layers hold besides the wire client."""
OBJECTS_CHECK = "floor_objects"
"""The orjson floor keeping one small object per chunk (its text in a one-slot instance)
instead of the string: the least memory an API that hands its caller an object per chunk can
take when the caller keeps them (the README's collect-then-``from_updates``). Concurrency
phase only: the issue's memory bar is judged beside it."""


def scenario_url(base: str, scenario: Scenario) -> str:
    """The OpenAI-style base URL (``…/v1``) that serves ``scenario``."""
    return f"{base}/{scenario.id}/v1"


@dataclass(frozen=True, slots=True)
class Revision:
    """A git revision whose library a ``--baseline`` client runs."""

    name: str
    """As given on the command line (``e319521``, ``main~3``): the rows' ``@name``."""
    commit: str
    """The full commit id it resolved to."""
    describe: str
    """``git describe --always --tags`` of that commit."""
    tree: Path
    """Where its top-level packages (``providers``, ``telemetry``, …) were extracted."""


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
    revision: Revision | None = None
    """Set on a ``--baseline`` client: ``session`` must then run in a process that imports
    ``revision.tree``'s library (never in this one, which has imported the current tree's)."""
    concurrency_session: SessionFactory | None = None
    """What the concurrency phase opens instead of ``session``, when it differs: the library's
    clients there make their own connection pool."""

    @property
    def registry_name(self) -> str:
        """The ``default_clients()`` key this spec was made from (``name`` less ``@rev``)."""
        return self.name.partition("@")[0]

    def at(self, revision: Revision) -> ClientSpec:
        """This client, run on ``revision``'s library: named and labelled ``… @<rev>``."""
        return replace(
            self,
            name=f"{self.name}@{revision.name}",
            label=f"{self.label} @{revision.name}",
            revision=revision,
        )

    def expected(self, stream: GeneratedStream) -> Outcome:
        return stream.recovered if self.recovers_text_tool_calls else stream.wire


# ---- the floors: the least a Python client can do ---------------------------------------------
#
# Both read every chunk and keep only the strings. Every ratio is taken to the one a
# performance-minded user writes (``REFERENCE_FLOOR``: ``aiter_lines`` and orjson). The stdlib
# floor is the one runs before it were measured against; it stays as a row beside it.


@asynccontextmanager
async def floor_orjson_session(base: str, max_connections: int) -> AsyncIterator[StreamFn]:
    """httpx ``stream()`` + ``aiter_lines()`` + one ``orjson.loads`` per ``data:`` line."""
    async with _orjson_floor(base, _limits(max_connections)) as stream:
        yield stream


@asynccontextmanager
async def floor_httpx_pool_session(base: str, max_connections: int) -> AsyncIterator[StreamFn]:
    """The orjson floor on httpx's default pool (100 connections), whatever ``max_connections``
    asks: ``POOL_CHECK``."""
    async with _orjson_floor(base, None) as stream:
        yield stream


@asynccontextmanager
async def floor_objects_session(base: str, max_connections: int) -> AsyncIterator[StreamFn]:
    """The orjson floor keeping a ``_Token`` per chunk: ``OBJECTS_CHECK``."""
    async with _orjson_floor(base, _limits(max_connections), keep=_Token) as stream:
        yield stream


class _Token:
    """The smallest object an API could hand out per chunk: one slot, the text."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


@asynccontextmanager
async def _orjson_floor(
    base: str, limits: httpx.Limits | None, keep: Callable[[str], Any] = str
) -> AsyncIterator[StreamFn]:
    """``limits=None``: httpx's default pool (``httpx.Limits()`` would be an unlimited one).
    ``keep``: what is kept of each text until the end (``str``: the text itself)."""
    import orjson

    body = orjson.dumps(REQUEST)
    headers = {"content-type": "application/json", "accept": "text/event-stream"}
    if limits is None:
        http = httpx.AsyncClient(timeout=_TIMEOUT)
    else:
        http = httpx.AsyncClient(timeout=_TIMEOUT, limits=limits)
    async with http:

        async def stream(scenario: Scenario) -> Outcome:
            url = scenario_url(base, scenario) + "/chat/completions"
            text: list[str] = []
            reasoning: list[str] = []
            arguments: dict[int, list[str]] = {}
            loads = orjson.loads
            async with http.stream("POST", url, content=body, headers=headers) as response:
                async for line in response.aiter_lines():
                    if not line.startswith("data: ") or line == "data: [DONE]":
                        continue
                    for choice in loads(line[6:])["choices"]:
                        delta = choice["delta"]
                        value = delta.get("content")
                        if value:
                            text.append(keep(value))
                        value = delta.get("reasoning_content") or delta.get("reasoning")
                        if value:
                            reasoning.append(keep(value))
                        calls = delta.get("tool_calls")
                        if calls:
                            for call in calls:
                                fragment = (call.get("function") or {}).get("arguments")
                                if fragment:
                                    arguments.setdefault(call["index"], []).append(fragment)
            if keep is not str:
                text = [token.text for token in text]  # type: ignore[attr-defined]
                reasoning = [token.text for token in reasoning]  # type: ignore[attr-defined]
            return Outcome(
                "".join(text),
                "".join(reasoning),
                tuple("".join(arguments[i]) for i in sorted(arguments)),
            )

        yield stream


@asynccontextmanager
async def floor_stdlib_session(base: str, max_connections: int) -> AsyncIterator[StreamFn]:
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
#
# Built and consumed as the project README shows: every update of ``get_streaming_response``
# collected, then ``ChatResponse.from_updates``. Only names that ``providers`` and ``telemetry``
# have exported at every revision are used, so the same wrappers measure a ``--baseline``
# revision's library (its modules live elsewhere: ``providers.client`` before the layout change).

_Build = Callable[[str, Scenario, httpx.AsyncClient | None], Any]
"""``build(base_url, scenario, http)``: the ``ChatClient`` to measure on that scenario, on the
borrowed client ``http``, or on one of its own (its default pool) when ``http`` is ``None``."""


def _wire_client(url: str, scenario: Scenario, http: httpx.AsyncClient | None) -> Any:
    from providers import OpenAiCompatibleChatClient

    return OpenAiCompatibleChatClient(url, "bench", backend=scenario.profile, **_borrowed(http))


def _full_pipeline(url: str, scenario: Scenario, http: httpx.AsyncClient | None) -> Any:
    from providers import create_chat_client

    return create_chat_client(url, "bench", backend=scenario.profile, retry=None, **_borrowed(http))


def _full_pipeline_with_retry(url: str, scenario: Scenario, http: httpx.AsyncClient | None) -> Any:
    from providers import create_chat_client

    return create_chat_client(url, "bench", backend=scenario.profile, **_borrowed(http))


def _borrowed(http: httpx.AsyncClient | None) -> dict[str, Any]:
    """``http_client=http``, or no argument at all: the library's default, at every revision."""
    return {} if http is None else {"http_client": http}


def _on_own_pool(build: _Build, *, keep_updates: bool = True) -> SessionFactory:
    """The concurrency phase's session of a library client: no borrowed ``http_client``, so the
    pool measured is the one the library makes by default (1,000 connections since issue 21).
    ``keep_updates=False``: ``BUILDER_CHECK``'s way of consuming the stream."""

    def session(base: str, max_connections: int) -> AbstractAsyncContextManager[StreamFn]:
        return _library_session(
            base, max_connections, build, own_pool=True, keep_updates=keep_updates
        )

    return session


@asynccontextmanager
async def oaicompat_session(base: str, max_connections: int) -> AsyncIterator[StreamFn]:
    """``OpenAiCompatibleChatClient`` alone: the wire client with its normalisation."""
    async with _library_session(base, max_connections, _wire_client) as stream:
        yield stream


@asynccontextmanager
async def full_pipeline_session(base: str, max_connections: int) -> AsyncIterator[StreamFn]:
    """Issue 9's full pipeline, ``create_chat_client(..., retry=None)``: telemetry -> text
    recovery (auto) -> client (with its normalisation); the targets are judged on it."""
    async with _library_session(base, max_connections, _full_pipeline) as stream:
        yield stream


@asynccontextmanager
async def full_with_retry_session(base: str, max_connections: int) -> AsyncIterator[StreamFn]:
    """The standard stack, ``create_chat_client(...)`` as the README calls it (and the YAML
    configuration builds): the full pipeline with ``RetryingChatClient`` between telemetry and
    text recovery. Reported beside it, so that what retry costs is visible on its own."""
    async with _library_session(base, max_connections, _full_pipeline_with_retry) as stream:
        yield stream


@asynccontextmanager
async def _library_session(
    base: str,
    max_connections: int,
    build: _Build,
    *,
    own_pool: bool = False,
    keep_updates: bool = True,
) -> AsyncIterator[StreamFn]:
    from providers import DEFAULT_TIMEOUT, ChatMessage, ChatOptions, ChatResponse
    from providers.abstractions.chat_response import ChatResponseBuilder

    messages = [ChatMessage.user("Weather in Paris?")]
    # The tool the streams call is offered, as an agent offers it: a call recovered from text
    # is made executable only then (issue #20).
    options = ChatOptions(tools=[{"type": "function", "function": {"name": TOOL_NAME}}])
    clients: dict[str, Any] = {}
    async with AsyncExitStack() as stack:
        http: httpx.AsyncClient | None = None
        if not own_pool:
            limits = _limits(max_connections)
            http = httpx.AsyncClient(timeout=DEFAULT_TIMEOUT, limits=limits)
            await stack.enter_async_context(http)

        async def stream(scenario: Scenario) -> Outcome:
            client = clients.get(scenario.id)
            if client is None:
                url = scenario_url(base, scenario)
                client = clients[scenario.id] = build(url, scenario, http)
            if keep_updates:
                updates = []
                async for update in client.get_streaming_response(messages, options):
                    updates.append(update)
                response = ChatResponse.from_updates(updates)
            else:
                builder = ChatResponseBuilder(keep_raw=False)  # (no update kept for raw)
                async for update in client.get_streaming_response(messages, options):
                    builder.add(update)
                response = builder.build()
            return Outcome(
                response.text,
                response.reasoning,
                tuple(call.raw_arguments for call in response.tool_calls),
            )

        try:
            yield stream
        finally:
            for client in clients.values():
                await client.aclose()


# ---- openai-python (the optional `bench` extra) ------------------------------------------------


@asynccontextmanager
async def openai_session(base: str, max_connections: int) -> AsyncIterator[StreamFn]:
    """``AsyncOpenAI(...).chat.completions.create(stream=True)``, as its README shows.

    Its default pool (1,000 connections) already exceeds ``max_connections``.
    """
    import openai  # type: ignore[import-not-found, unused-ignore]

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
    """The registry, in table order: the floors first (``REFERENCE_FLOOR`` when it can run),
    then the library's clients (``OUR_CLIENTS``), then openai-python."""
    specs = [
        _optional(
            "orjson", ClientSpec("floor_orjson", "floor (httpx+orjson)", floor_orjson_session)
        ),
        ClientSpec("floor_stdlib", "floor (stdlib json)", floor_stdlib_session),
        ClientSpec(
            "oaicompat",
            "client (recovery off)",
            oaicompat_session,
            concurrency_session=_on_own_pool(_wire_client),
        ),
        ClientSpec(
            "full",
            "full pipeline",
            full_pipeline_session,
            recovers_text_tool_calls=True,
            concurrency_session=_on_own_pool(_full_pipeline),
        ),
        ClientSpec(
            "full_retry",
            "full pipeline + retry",
            full_with_retry_session,
            recovers_text_tool_calls=True,
            concurrency_session=_on_own_pool(_full_pipeline_with_retry),
        ),
        _optional("openai", ClientSpec("openai", "openai-python", openai_session)),
    ]
    return {spec.name: spec for spec in specs}


def builder_check_client(*, standard: bool = False) -> ClientSpec:
    """``BUILDER_CHECK`` (``STANDARD_BUILDER_CHECK`` with ``standard``): concurrency phase only,
    like ``POOL_CHECK``."""
    if standard:
        name, label, build = (
            STANDARD_BUILDER_CHECK,
            "standard, no update kept",
            _full_pipeline_with_retry,
        )
    else:
        name, label, build = BUILDER_CHECK, "client, no update kept", _wire_client
    session = _on_own_pool(build, keep_updates=False)
    return ClientSpec(name, label, session, concurrency_session=session)


def objects_check_client() -> ClientSpec:
    """``OBJECTS_CHECK``: concurrency phase only, like ``POOL_CHECK``."""
    spec = ClientSpec(OBJECTS_CHECK, "floor keeping an object per chunk", floor_objects_session)
    return _optional("orjson", spec)


def pool_check_client() -> ClientSpec:
    """``POOL_CHECK``: not in ``default_clients()``, since its CPU per chunk is the floor's."""
    spec = ClientSpec(POOL_CHECK, "floor on httpx's default pool", floor_httpx_pool_session)
    return _optional("orjson", spec)


def _optional(module: str, spec: ClientSpec) -> ClientSpec:
    """``spec``, or ``spec`` marked unavailable when ``module`` (a ``bench`` extra) is absent."""
    if importlib.util.find_spec(module) is not None:
        return spec
    unavailable = f"{module} not installed (pip install .[bench])"
    return replace(spec, session=None, concurrency_session=None, unavailable=unavailable)


def reference_floor(specs: Iterable[ClientSpec]) -> ClientSpec:
    """The floor every ratio is taken to: ``REFERENCE_FLOOR``, or the stdlib floor where orjson
    is not installed (the report says so)."""
    floors = {spec.name: spec for spec in specs if spec.name in FLOORS}
    for name in FLOORS:
        spec = floors.get(name)
        if spec is not None and spec.session is not None:
            return spec
    raise ValueError("no floor can run")


def silence_library_logs() -> None:
    """Send the library's structlog events (one ``oaicompat.request.completed`` per request from the
    telemetry layer) to ``/dev/null`` instead of the terminal, through structlog's default
    processors: formatting them stays in the measured cost, printing a line per stream into
    the benchmark's output does not. Only for the benchmark's own processes, and only when
    nothing configured structlog already."""
    import os

    import structlog

    if not structlog.is_configured():
        sink = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - for the process's life
        structlog.configure(logger_factory=structlog.PrintLoggerFactory(sink))
