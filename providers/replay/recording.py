"""Record one live exchange as a transcript (the ``transcripts/README.md`` layout).

A transcript is evidence, so its body must be what the wire carried: the request asks for
``Accept-Encoding: identity`` and the body is read with ``aiter_raw`` (httpx's ``.content``
would undo a compression, and a decoded body is no longer what the server sent). Beside it goes
the sidecar: provenance (which server, its version as ``/props`` or ``/version`` states it, the
flags when the caller knows them, when), the request as sent, the answer's status, content type
and identifying headers, and ``expected`` — what the core client makes of the body, replayed on
loopback by ``providers.replay.transcripts.replay_bytes``. That reading is the client's own: in a
user's folder its worth is that a later change in the client, or in the server, shows up as a
diff. It can only catch change, never error, so the repository's committed ``transcripts/`` take
no such reading: recording into them needs a ``reader`` that derives ``expected`` from the body
without the client (``tools/import_transcripts.py``'s ``expected_for``), and is refused without.

``oaicompat record`` and the integration suite's ``--rerecord-transcripts`` both record through
``record_exchange``, so the two cannot drift apart in layout.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import httpx

from capabilities.detect import detect_backend
from providers.abstractions.errors import InvalidResponseError, ProviderConnectionError
from providers.abstractions.records import value_class
from providers.replay.transcripts import default_root, replay_bytes
from providers.transport.endpoint import Endpoint
from providers.transport.stale_connections import new_http_client

__all__ = [
    "CLIENT_READING",
    "KEPT_HEADERS",
    "Exchange",
    "ExpectedReader",
    "Recording",
    "ServerIdentity",
    "expected_result",
    "identify_server",
    "post_exchange",
    "provenance",
    "reader_note",
    "record_exchange",
    "write_transcript",
]

KEPT_HEADERS = ("server", "content-type")
"""Response headers copied into the sidecar (lower-case names; the server's spelling is kept).
Only what identifies the server and the body: dates, lengths and cookies are noise or private."""

CLIENT_READING = "`expected` is the core client's reading of the body: review it before committing."

RECORD_TIMEOUT = httpx.Timeout(600.0, connect=10.0)
"""A recording waits for the whole answer, however slow the model: the exchange is the point."""


class ExpectedReader(Protocol):
    """Derives a transcript's ``expected`` from the body alone (``transcripts/README.md``)."""

    def __call__(self, body: bytes, status: int, is_sse: bool) -> dict[str, Any]: ...


@value_class(frozen=True)
class Exchange:
    """One request and the answer to it, the body exactly as received."""

    request: dict[str, Any] | str
    """The body as sent: a JSON object, or a string sent verbatim (a malformed-body capture)."""
    status: int
    content_type: str
    headers: dict[str, str]
    """The ``KEPT_HEADERS`` the server sent, spelled as it spelled them."""
    body: bytes

    @property
    def is_event_stream(self) -> bool:
        return self.content_type.split(";")[0].strip().lower() == "text/event-stream"

    @property
    def streaming_request(self) -> bool:
        """Whether the caller asked for a stream (a stream request may get a JSON error)."""
        if isinstance(self.request, dict):
            return bool(self.request.get("stream"))
        return self.is_event_stream


@value_class(frozen=True)
class ServerIdentity:
    backend: str
    """A ``capabilities.Backend`` name (``generic`` when nothing identified it)."""
    version: str | None
    evidence: str
    """Which answer identified the server, for the provenance notes; URLs shortened to their
    path (``GET /v1/models``), so no host or port is recorded."""

    @property
    def label(self) -> str:
        """``"llamacpp b6490-2b0c"``: the sidecar's ``server`` field."""
        return f"{self.backend} {self.version or ''}".strip()


@value_class(frozen=True)
class Recording:
    exchange: Exchange
    identity: ServerIdentity
    sidecar: dict[str, Any]
    body_path: Path
    sidecar_path: Path


def _safe_url(url: str) -> str:
    """The URL without credentials someone may have put in it (errors and notes quote it)."""
    return str(httpx.URL(url).copy_with(username=None, password=None))


async def post_exchange(
    http: httpx.AsyncClient,
    url: str,
    request: Mapping[str, Any] | str,
    *,
    headers: Mapping[str, str] | None = None,
) -> Exchange:
    """POST ``request`` and keep the answer's body byte for byte.

    Raises ``ProviderConnectionError`` when no answer arrives, and ``InvalidResponseError`` when
    the server compressed the body although ``identity`` was asked (the bytes would not be the
    wire's). An HTTP error status is an answer like any other: it is recorded, not raised.
    """
    if isinstance(request, str):
        content = request.encode("utf-8")
        sent: dict[str, Any] | str = request
    else:
        sent = dict(request)
        content = json.dumps(sent, ensure_ascii=False).encode("utf-8")
    send_headers = {
        "Content-Type": "application/json",
        "Accept-Encoding": "identity",
        **(headers or {}),
    }
    try:
        async with http.stream("POST", url, content=content, headers=send_headers) as response:
            body = b"".join([chunk async for chunk in response.aiter_raw()])
    except httpx.HTTPError as exc:
        raise ProviderConnectionError(
            f"record: no answer from {_safe_url(url)}: {type(exc).__name__}"
        ) from exc
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ("", "identity"):
        raise InvalidResponseError(
            f"record: {_safe_url(url)} compressed the body ({encoding}) although identity was "
            "asked; the recorded bytes would not be the wire's",
            status=response.status_code,
        )
    kept = {
        name.decode("latin-1"): value.decode("latin-1")
        for name, value in response.headers.raw
        if name.decode("latin-1").lower() in KEPT_HEADERS
    }
    content_type = response.headers.get("content-type", "")
    return Exchange(sent, response.status_code, content_type, kept, body)


async def identify_server(
    http: httpx.AsyncClient, endpoint: Endpoint, *, headers: Mapping[str, str] | None = None
) -> ServerIdentity:
    """Backend and version by the capability detector's probes (``/v1/models``, ``/props``,
    ``/version``…); never raises: an odd server is ``generic`` with the reason as evidence."""
    detected = await detect_backend(http, endpoint, headers=headers)
    evidence = detected.evidence.replace(endpoint.server_root, "")
    return ServerIdentity(detected.backend, detected.version, evidence)


def provenance(
    identity: ServerIdentity,
    *,
    source: str,
    flags: Sequence[str] | None,
    notes: str,
    recorded_at: datetime,
    expected_by: str = CLIENT_READING,
) -> dict[str, Any]:
    """The sidecar's ``provenance``: ``kind``, ``source``, ``server``, ``flags`` and ``notes`` as
    in ``transcripts/README.md``, plus ``version`` and ``recorded_at`` (UTC, ISO 8601).
    ``expected_by`` says where ``expected`` came from.

    The server's URL is left out: it may name a private host, and a port that changes with
    every run would make each re-recording differ from the last for nothing."""
    said = [
        f"Recorded through providers.replay.recording; backend detected by {identity.evidence}.",
        "Server flags unknown." if flags is None else "",
        expected_by,
        notes,
    ]
    return {
        "kind": "captured",
        "source": source,
        "server": identity.label,
        "version": identity.version,
        "flags": list(flags or ()),
        "recorded_at": recorded_at.astimezone(UTC).isoformat(timespec="seconds"),
        "notes": "\n".join(part for part in said if part),
    }


async def expected_result(
    exchange: Exchange, *, backend: str | None, api: str = "chat"
) -> dict[str, Any]:
    """What the core client (text recovery off) returns or raises for these bytes, in the full
    ``expected`` shape (an error without a partial response still has every field)."""
    return await replay_bytes(
        exchange.status,
        exchange.body,
        exchange.content_type,
        streaming=exchange.streaming_request,
        backend=backend,
        api=api,
        request=exchange.request,
    )


def write_transcript(
    folder: Path, scenario: str, exchange: Exchange, sidecar: Mapping[str, Any]
) -> tuple[Path, Path]:
    """Write ``<scenario>.sse`` (an event stream) or ``.raw`` (anything else) and the
    ``<scenario>.json`` sidecar. A body of the other kind left by an earlier recording of the
    same scenario is removed: the loader would otherwise pick the stale one."""
    folder.mkdir(parents=True, exist_ok=True)
    suffix, other = (".sse", ".raw") if exchange.is_event_stream else (".raw", ".sse")
    body_path = folder / f"{scenario}{suffix}"
    sidecar_path = folder / f"{scenario}.json"
    body_path.write_bytes(exchange.body)
    (folder / f"{scenario}{other}").unlink(missing_ok=True)
    text = json.dumps(sidecar, indent=2, ensure_ascii=False) + "\n"
    sidecar_path.write_bytes(text.encode("utf-8"))
    return body_path, sidecar_path


@asynccontextmanager
async def _http(client: httpx.AsyncClient | None) -> AsyncIterator[httpx.AsyncClient]:
    if client is not None:
        yield client
        return
    async with new_http_client(RECORD_TIMEOUT) as owned:
        yield owned


async def record_exchange(
    base_url: str,
    request: Mapping[str, Any] | str,
    *,
    root: Path,
    scenario: str,
    api_key: str | None = None,
    backend: str | None = None,
    flags: Sequence[str] | None = None,
    source: str = "providers.replay.recording",
    notes: str = "",
    extra: Mapping[str, Any] | None = None,
    http_client: httpx.AsyncClient | None = None,
    recorded_at: datetime | None = None,
    api: str = "chat",
    overwrite: bool = True,
    reader: ExpectedReader | None = None,
) -> Recording:
    """Identify the server, send ``request`` to its chat completions URL (``api="responses"``:
    its ``/v1/responses``), and write the transcript ``root/<backend>/<scenario>.{sse,raw,json}``.

    ``backend`` names the folder and replay profile (default: detected). ``flags``: the server's
    flags when known (``None``: the notes say unknown). ``extra``: sidecar keys after
    ``expected``. The API key goes in the ``Authorization`` header only. ``overwrite=False``
    raises ``FileExistsError`` before anything is sent when the transcript exists: replacing
    evidence must be asked for. ``reader`` derives ``expected`` from the body instead of the
    client; the committed transcripts need one (``ValueError`` before anything is sent)."""
    _refuse_the_clients_reading(root, reader)
    endpoint = Endpoint.from_base_url(base_url)
    headers = endpoint.authorized(None, api_key)
    async with _http(http_client) as http:
        identity = await identify_server(http, endpoint, headers=headers)
        existing = root / (backend or identity.backend) / f"{scenario}.json"
        if not overwrite and existing.exists():
            raise FileExistsError(existing)
        url = endpoint.chat_completions if api == "chat" else f"{endpoint.api_base}/responses"
        exchange = await post_exchange(http, url, request, headers=headers)
    folder_backend = backend or identity.backend
    sidecar: dict[str, Any] = {
        "provenance": provenance(
            identity,
            source=source,
            flags=flags,
            notes=notes,
            recorded_at=recorded_at or datetime.now(UTC),
            expected_by=CLIENT_READING if reader is None else reader_note(reader),
        ),
        "request": exchange.request,
        "response": {
            "status": exchange.status,
            "content_type": exchange.content_type,
            "headers": exchange.headers,
        },
        "expected": await _expected(exchange, reader, backend=folder_backend, api=api),
    }
    if api != "chat":
        sidecar["api"] = api
    sidecar.update(extra or {})
    body_path, sidecar_path = write_transcript(root / folder_backend, scenario, exchange, sidecar)
    return Recording(exchange, identity, sidecar, body_path, sidecar_path)


async def _expected(
    exchange: Exchange, reader: ExpectedReader | None, *, backend: str, api: str
) -> dict[str, Any]:
    if reader is None:
        return await expected_result(exchange, backend=backend, api=api)
    return reader(exchange.body, exchange.status, exchange.is_event_stream)


def _refuse_the_clients_reading(root: Path, reader: ExpectedReader | None) -> None:
    """The committed transcripts take no ``expected`` from the client (see the module's doc)."""
    committed = default_root().resolve()
    where = root.resolve()
    if reader is None and (where == committed or committed in where.parents):
        raise ValueError(
            f"{root} holds the committed transcripts: their `expected` must be read from the "
            "body independently of the client (pass reader=, e.g. tools/import_transcripts.py's "
            "expected_for), or record into another folder"
        )


def reader_note(reader: ExpectedReader) -> str:
    """The provenance note naming the reader that wrote `expected`."""
    name = f"{getattr(reader, '__module__', '?')}.{getattr(reader, '__qualname__', reader)}"
    return (
        f"`expected` read from the body by {name} (the rules of transcripts/README.md), not by "
        "the client: review it against the body before committing."
    )
