"""The ``oaicompat`` command. Thin: every subcommand calls the library.

Exit codes: 0 success, 1 a backend or replay failed, 2 usage or configuration error.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="oaicompat",
        description="One client for OpenAI-compatible servers (llama.cpp, vLLM, SGLang).",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser(
        "demo", help="replay bundled llama.cpp, vLLM and SGLang traffic side by side"
    )
    demo.add_argument("--transcripts", type=Path, default=None, help="transcripts directory")
    replay = commands.add_parser("replay", help="print the normalised result of a transcript")
    replay.add_argument("file", type=Path, help="a transcript's .json sidecar (or its body)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return _run(args)
    except BrokenPipeError:  # `oaicompat demo | head`: the reader left, nothing is wrong
        sys.stderr.close()
        return 0


def _run(args: argparse.Namespace) -> int:
    if args.command == "demo":
        from providers.demo import run_demo

        return asyncio.run(run_demo(args.transcripts))
    if args.command == "replay":
        return asyncio.run(_replay(args.file))
    return 2  # pragma: no cover - argparse rejects unknown commands


async def _replay(path: Path) -> int:
    from providers.chat_response import ChatResponse
    from providers.client import OpenAiCompatibleChatClient
    from providers.errors import ProviderError
    from providers.replay_server import ReceivedRequest, RecordedReply, ReplayServer
    from providers.transcripts import Transcript, summarize, summarize_error

    sidecar = path.with_suffix(".json")
    if not sidecar.exists():
        print(f"oaicompat: no transcript sidecar at {sidecar}", file=sys.stderr)
        return 2
    transcript = Transcript.load(sidecar)
    headers = {"Content-Type": transcript.sidecar["response"].get("content_type", "")}

    def answer(request: ReceivedRequest) -> RecordedReply:
        return RecordedReply(transcript.status, transcript.body, headers)

    result: dict[str, object]
    async with (
        ReplayServer(answer) as server,
        OpenAiCompatibleChatClient(server.base_url, backend=transcript.backend) as client,
    ):
        try:
            if transcript.request.get("stream", transcript.is_stream):
                updates = [u async for u in client.get_streaming_response("replay")]
                result = summarize(ChatResponse.from_updates(updates))
            else:
                result = summarize(await client.get_response("replay"))
            result["error"] = None
        except ProviderError as exc:
            partial = exc.partial_response
            result = summarize(partial) if partial is not None else {}
            result["error"] = summarize_error(exc)
    print(json.dumps(result, indent=2, ensure_ascii=False))
    return 1 if result["error"] else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
