"""Recorded exchanges (``transcripts/<backend>/<scenario>.{sse,raw,json}``) and their replay.

A transcript is evidence: the body bytes a real (or documented) server sent, its provenance, and
the normalised result a user must get. ``summarize`` reduces a ``ChatResponse`` to the same
shape as the sidecar's ``expected``, so the regression suite, ``oaicompat demo`` and
``oaicompat replay`` compare like with like. The format is described in ``transcripts/README.md``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from providers.abstractions.chat_client import ChatClient
from providers.abstractions.chat_response import ChatResponse
from providers.abstractions.errors import ContextLengthExceededError, ProviderError
from providers.abstractions.options import ChatOptions
from providers.abstractions.records import value_class
from providers.chat_completions.client import OpenAiCompatibleChatClient
from providers.replay.server import ReceivedRequest, RecordedReply, ReplayServer
from providers.responses import OpenAiCompatibleResponsesClient

__all__ = [
    "Transcript",
    "default_root",
    "iter_transcripts",
    "recorded_offer",
    "replay_bytes",
    "summarize",
    "summarize_error",
]


def default_root() -> Path:
    """The repository's ``transcripts/`` (the package is installed editable from the checkout)."""
    return Path(__file__).resolve().parents[2] / "transcripts"


@value_class(frozen=True)
class Transcript:
    """One recorded exchange: the body bytes exactly as the server sent them and the sidecar
    (provenance, request, response head, ``expected``). Bytes, not parsed chunks, so a replay
    feeds the client what the server really wrote."""

    backend: str
    scenario: str
    body: bytes
    sidecar: dict[str, Any]

    @property
    def id(self) -> str:
        return f"{self.backend}/{self.scenario}"

    @property
    def is_stream(self) -> bool:
        content_type: str = self.sidecar["response"].get("content_type", "")
        return content_type.startswith("text/event-stream")

    @property
    def status(self) -> int:
        return int(self.sidecar["response"]["status"])

    @property
    def request(self) -> dict[str, Any]:
        """The request body when it was a JSON object (a malformed-body capture keeps a string)."""
        request = self.sidecar.get("request")
        return dict(request) if isinstance(request, dict) else {}

    @property
    def expected(self) -> dict[str, Any]:
        return dict(self.sidecar["expected"])

    @property
    def api(self) -> str:
        """``chat`` (chat completions, the default) or ``responses`` (``/v1/responses``)."""
        return str(self.sidecar.get("api", "chat"))

    @classmethod
    def load(cls, sidecar_path: Path) -> Transcript:
        sidecar = json.loads(sidecar_path.read_text(encoding="utf-8"))
        stem = sidecar_path.with_suffix("")
        body_path = next(
            (p for p in (stem.with_suffix(".sse"), stem.with_suffix(".raw")) if p.exists()), None
        )
        if body_path is None:
            raise FileNotFoundError(f"no .sse or .raw body beside {sidecar_path}")
        return cls(sidecar_path.parent.name, stem.name, body_path.read_bytes(), sidecar)


def iter_transcripts(root: Path | None = None, *, api: str | None = "chat") -> Iterator[Transcript]:
    """Every transcript of one API under ``root``, in a stable order (discovery files excluded).

    ``api`` is ``"chat"`` by default, so the chat suite, the demo and the CLI see only what the
    chat client can replay; ``"responses"`` selects the Responses-API exchanges, ``None`` all.
    """
    root = root or default_root()
    for path in sorted(root.glob("*/*.json")):
        transcript = Transcript.load(path)
        if api is None or transcript.api == api:
            yield transcript


def summarize(response: ChatResponse) -> dict[str, Any]:
    """The response in the shape of a sidecar's ``expected`` (without ``error``)."""
    usage = response.usage
    return {
        "text": response.text,
        "reasoning": response.reasoning,
        "tool_calls": [
            {
                "call_id": call.call_id,
                "name": call.name,
                "arguments": call.arguments,
                "raw_arguments": call.raw_arguments,
                "error": call.error is not None,
            }
            for call in response.tool_calls
        ],
        "finish_reason": None if response.finish_reason is None else response.finish_reason.value,
        "usage": None
        if usage is None
        else {
            "input_token_count": usage.input_token_count,
            "output_token_count": usage.output_token_count,
            "total_token_count": usage.total_token_count,
            "cached_input_token_count": usage.cached_input_token_count,
            "reasoning_token_count": usage.reasoning_token_count,
        },
        "response_id": response.response_id,
        "model_id": response.model_id,
        "stop_sequence": response.additional_properties.get("stop_sequence"),
    }


def summarize_error(error: ProviderError) -> dict[str, Any]:
    """The error in the shape of a sidecar's ``expected.error``."""
    summary: dict[str, Any] = {"class": type(error).__name__, "status": error.status}
    if isinstance(error, ContextLengthExceededError):
        summary["prompt_tokens"] = error.prompt_tokens
        summary["context_window"] = error.context_window
    return summary


def recorded_offer(request: Mapping[str, Any] | str | None) -> ChatOptions | None:
    """Options that offer what the recorded request offered (its ``tools``, as a raw key), so a
    replayed tool call is checked against the tools it was made with: a call naming a tool the
    request did not offer carries ``error`` (issue #20)."""
    if not isinstance(request, Mapping) or "tools" not in request:
        return None
    return ChatOptions(additional_properties={"tools": request["tools"]})


async def replay_bytes(
    status: int,
    body: bytes,
    content_type: str,
    *,
    streaming: bool,
    backend: str | None = None,
    api: str = "chat",
    request: Mapping[str, Any] | str | None = None,
) -> dict[str, Any]:
    """Serve recorded bytes on loopback through the core client and summarise the outcome
    (``expected`` shape, ``error`` included): what ``oaicompat replay`` and ``record`` print.

    ``api="responses"`` replays a Responses-API creation through
    ``OpenAiCompatibleResponsesClient`` instead of the chat client. ``request``: the recorded
    request body, whose tools the replay offers again (``recorded_offer``)."""
    options = recorded_offer(request)

    def answer(received: ReceivedRequest) -> RecordedReply:
        return RecordedReply(status, body, {"Content-Type": content_type})

    def core_client(base_url: str) -> ChatClient:
        if api == "responses":
            return OpenAiCompatibleResponsesClient(base_url, backend=backend)
        return OpenAiCompatibleChatClient(base_url, backend=backend)

    result: dict[str, Any]
    async with ReplayServer(answer) as server:
        client = core_client(server.base_url)
        try:
            if streaming:
                updates = [u async for u in client.get_streaming_response("replay", options)]
                result = summarize(ChatResponse.from_updates(updates))
            else:
                result = summarize(await client.get_response("replay", options))
            result["error"] = None
        except ProviderError as exc:
            partial = exc.partial_response
            # The full ``expected`` shape even without a partial response: the regression
            # replay and ``oaicompat replay`` compare and print every field.
            result = summarize(partial if partial is not None else ChatResponse())
            result["error"] = summarize_error(exc)
        finally:
            await client.aclose()
    return result
