"""``oaicompat demo``: the same model text from llama.cpp, vLLM and SGLang, side by side.

With no backend configured it needs nothing but the installed package: it starts a loopback
server that replays bundled transcripts (real traffic captured from each server, forced to the
same model text; package data found with ``importlib.resources``, ``demo_root``, so an installed
wheel has them too), sends each through one ``OpenAiCompatibleChatClient``, and prints what
differed on the wire next to what the caller got.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from importlib.resources import files
from pathlib import Path
from typing import Any, TextIO

from providers.abstractions.chat_response import ChatResponse
from providers.abstractions.errors import ConfigurationError, ProviderError
from providers.abstractions.options import ChatOptions
from providers.abstractions.records import value_class
from providers.chat_completions.client import OpenAiCompatibleChatClient
from providers.cli.output import terminal_safe
from providers.cli.replay import load_transcript
from providers.layers.text_recovery import TextRecoveryChatClient
from providers.replay.server import ReceivedRequest, RecordedReply, ReplayServer
from providers.replay.transcripts import Transcript, recorded_offer

__all__ = ["DEMO_SCENARIOS", "demo_root", "run_demo"]

DEMO_SCENARIOS: dict[str, dict[str, str]] = {
    "reasoning  (<think>The user asks…</think> It is sunny in Paris.)": {
        "llamacpp": "captured--qwen3-reasoning-deepseek--stream-reasoning",
        "vllm": "captured--qwen3-hermes--stream-reasoning",
        "sglang": "captured--qwen3-qwen25--stream-reasoning",
    },
    "parallel tool calls  (get_weather + get_time)": {
        "llamacpp": "captured--qwen25-plain--stream-text-parallel-tool-calls-in-content",
        "vllm": "captured--qwen3-hermes--stream-parallel-tool-calls",
        "sglang": "captured--qwen3-qwen25--stream-parallel-tool-calls",
    },
}


@value_class()
class DemoRow:
    backend: str
    wire: dict[str, str]
    result: ChatResponse | None
    error: str | None


async def _replay(transcript: Transcript) -> DemoRow:
    headers = {"Content-Type": transcript.sidecar["response"].get("content_type", "")}

    def answer(request: ReceivedRequest) -> RecordedReply:
        return RecordedReply(transcript.status, transcript.body, headers)

    async with (
        ReplayServer(answer) as server,
        TextRecoveryChatClient(
            OpenAiCompatibleChatClient(server.base_url, backend=transcript.backend)
        ) as client,
    ):
        try:
            options = offered_for(transcript)
            updates = [u async for u in client.get_streaming_response("demo", options)]
        except ProviderError as exc:
            return DemoRow(transcript.backend, {}, exc.partial_response, repr(exc))
    response = ChatResponse.from_updates(updates)
    return DemoRow(transcript.backend, describe_wire(response.raw), response, None)


def offered_for(transcript: Transcript) -> ChatOptions | None:
    """The tools the captured turn was made with, offered again: a call is executable only if
    it names an offered tool. llama.cpp's in-content captures were taken without tools in the
    request (so its parser stayed off); their sidecar's ``recovery.tools`` names what the model
    was told about in its prompt."""
    tools = (transcript.sidecar.get("recovery") or {}).get("tools")
    if tools:
        return ChatOptions(tools=tools)
    return recorded_offer(transcript.sidecar.get("request"))


def describe_wire(chunks: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """What a naive client would have had to know about this server's chunks."""
    reasoning_keys: set[str] = set()
    finish = "-"
    usage_extras: set[str] = set()
    first_id = ""
    for chunk in chunks:
        first_id = first_id or str(chunk.get("id") or "")
        for choice in chunk.get("choices") or ():
            delta = choice.get("delta") or {}
            reasoning_keys.update(k for k in ("reasoning_content", "reasoning") if delta.get(k))
            if choice.get("finish_reason"):
                carried = any(delta.get(k) for k in ("content", "reasoning", "reasoning_content"))
                finish = "merged with last token" if carried else f"separate, delta {delta}"
                for key in ("stop_reason", "matched_stop"):
                    if key in choice:
                        finish += f", {key}={choice[key]!r}"
        usage = chunk.get("usage")
        if isinstance(usage, Mapping):
            standard = {"prompt_tokens", "completion_tokens", "total_tokens"}
            usage_extras.update(k for k in usage if k not in standard)
    return {
        "reasoning field": ", ".join(sorted(reasoning_keys)) or "-",
        "finish chunk": finish,
        "id": first_id[:24] + ("…" if len(first_id) > 24 else ""),
        "usage extras": ", ".join(sorted(usage_extras)) or "-",
    }


def _normalised(response: ChatResponse | None) -> dict[str, str]:
    if response is None:
        return {}
    usage = response.usage
    return {
        "reasoning": repr(response.reasoning) if response.reasoning else "-",
        "text": repr(_short(response.text)) if response.text else "-",
        "tool calls": "; ".join(
            f"{c.name}({c.arguments})" + (" [not executable]" if c.error else "")
            for c in response.tool_calls
        )
        or "-",
        "finish": str(response.finish_reason),
        "usage in/out/cached": "-"
        if usage is None
        else f"{usage.input_token_count}/{usage.output_token_count}/"
        f"{usage.cached_input_token_count}",
    }


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _print_block(title: str, rows: list[DemoRow], out: TextIO) -> None:
    out.write(f"\n== {title}\n")
    sections = (("what the server sent", lambda r: r.wire), ("what the caller gets", _norm_of))
    for heading, pick in sections:
        out.write(f"  -- {heading}\n")
        fields: list[str] = []
        for row in rows:
            fields.extend(k for k in pick(row) if k not in fields)
        for name in fields:
            out.write(f"    {terminal_safe(name)}\n")
            for row in rows:
                value = terminal_safe(pick(row).get(name, "-"))
                out.write(f"      {row.backend:<9} {value}\n")
    for row in rows:
        if row.error:
            out.write(f"    {row.backend}: error {terminal_safe(row.error)}\n")


def _norm_of(row: DemoRow) -> dict[str, str]:
    return _normalised(row.result)


def demo_root() -> Path:
    """The demo's captures as shipped in the package (in a checkout, links into
    ``transcripts/``); a wheel is unpacked on disk, so the resource is a real folder."""
    return Path(str(files("providers.replay").joinpath("demo_transcripts")))


def _load(root: Path, backend: str, name: str) -> Transcript:
    try:
        return load_transcript(root / backend / f"{name}.json")
    except ConfigurationError as exc:
        raise ConfigurationError(
            f"{exc}; --transcripts DIR must hold all six demo captures "
            "(<backend>/<scenario>.json and its body), or leave it out for the bundled ones"
        ) from None


async def run_demo(root: Path | None = None, out: TextIO = sys.stdout) -> int:
    """Replay the demo scenarios; 0 when every backend answered, 1 otherwise."""
    root = root or demo_root()
    transcripts = {  # all loaded first: a missing one is a usage error before any output
        (title, backend): _load(root, backend, name)
        for title, scenario in DEMO_SCENARIOS.items()
        for backend, name in scenario.items()
    }
    out.write(
        "oaicompat demo: real llama.cpp, vLLM 0.33 and SGLang 0.5.23 traffic (bundled "
        "transcripts)\nreplayed by a loopback server through one OpenAiCompatibleChatClient.\n"
    )
    status = 0
    for title, scenario in DEMO_SCENARIOS.items():
        rows = []
        for backend in scenario:
            row = await _replay(transcripts[title, backend])
            status |= row.error is not None
            rows.append(row)
        _print_block(title, rows, out)
    out.write(
        "\nllama.cpp's calls above arrived as plain text in delta.content (its tool parser was "
        "not engaged);\nthe text-recovery layer made them the same structured calls.\n"
    )
    return status
