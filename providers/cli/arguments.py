"""The ``oaicompat`` command line: its subcommands, their flags and the exit codes it documents.

Standard library only, so ``oaicompat --help`` and a usage error load nothing else.
"""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["EXIT_BACKEND", "EXIT_OK", "EXIT_USAGE", "build_parser"]

EXIT_OK, EXIT_BACKEND, EXIT_USAGE = 0, 1, 2

_EPILOG = """\
exit codes:
  0  success
  1  the backend failed (unreachable, an error status, a broken stream) or a replay failed
  2  usage or configuration error (bad flags, missing or invalid configuration file)

The API key is read from the configuration (api_key: ${VAR}) or, with --base-url, from the
environment variable named by --api-key-env (default OAICOMPAT_API_KEY), never from a flag.
Without -v only errors reach stderr (with the answer's statistics); -v adds the library's
warnings, -vv its debug events.
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="oaicompat",
        description="One client for OpenAI-compatible servers (llama.cpp, vLLM, SGLang).",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    target = _backend_selection()
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser(
        "demo", help="replay bundled llama.cpp, vLLM and SGLang traffic side by side"
    )
    demo.add_argument("--transcripts", type=Path, default=None, help="transcripts directory")
    replay = commands.add_parser("replay", help="print the normalised result of a transcript")
    replay.add_argument("file", type=Path, help="a transcript's .json sidecar (or its body)")
    probe = commands.add_parser(
        "probe", parents=[target], help="capabilities with provenance, backend and version"
    )
    probe.add_argument("--json", action="store_true", help="print JSON instead of a table")
    chat = commands.add_parser("chat", parents=[target], help="stream one answer")
    chat.add_argument("prompt")
    chat.add_argument("--system", help="a system message")
    chat.add_argument("--max-tokens", type=int, help="max output tokens")
    chat.add_argument("--temperature", type=float)
    chat.add_argument("--tools", metavar="JSON|@FILE", help="OpenAI-style tool list")
    check = commands.add_parser(
        "check", parents=[target], help="run a compatibility battery and print a report"
    )
    check.add_argument("--json", action="store_true", help="print JSON instead of a table")
    check.add_argument("--max-tokens", type=int, default=64, help="per request (default 64)")
    _add_record(commands, target)
    _add_serve(commands)
    return parser


def _add_serve(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = commands.add_parser(
        "serve",
        help="an OpenAI-compatible server in front of the configured backends",
        description="Serve /v1/chat/completions, /v1/responses and /v1/models for every role "
        "and backend of the configuration, through the standard pipeline. Binds 127.0.0.1 "
        "unless told otherwise (docs/serve.md).",
    )
    serve.add_argument("--config", type=Path, help="configuration file (YAML)")
    serve.add_argument("--host", help="address to bind (default: serve.host, 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default: serve.port, 8000; 0: any)")
    serve.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    serve.add_argument(
        "-v", "--verbose", action="count", default=0, help="access log (-vv: library debug)"
    )


def _backend_selection() -> argparse.ArgumentParser:
    """The flags every command that talks to a backend shares (an argparse parent)."""
    target = argparse.ArgumentParser(add_help=False)
    group = target.add_argument_group("backend selection")
    group.add_argument("--config", type=Path, help="configuration file (YAML)")
    group.add_argument("--use", metavar="NAME", help="role or backend name in the configuration")
    group.add_argument("--base-url", help="server URL; bypasses the configuration file")
    group.add_argument("--model", help="model id (with --base-url)")
    group.add_argument("--backend", help="profile: auto, llamacpp, vllm, sglang… (with --base-url)")
    group.add_argument(
        "--api-key-env",
        metavar="VAR",
        help="environment variable holding the API key (with --base-url; default "
        "OAICOMPAT_API_KEY, sent only when set)",
    )
    group.add_argument(
        "--timeout",
        type=_seconds,
        metavar="SECONDS",
        help="give up on a request after this long (each attempt; default: the configuration's "
        "timeouts, else 600 s to the first token)",
    )
    group.add_argument(
        "--extra-body", metavar="JSON", help="JSON object merged into every request body"
    )
    group.add_argument(
        "--api",
        choices=("chat", "responses"),
        help="endpoint family: chat completions (default) or /v1/responses",
    )
    target.add_argument(
        "-v", "--verbose", action="count", default=0, help="log warnings (-vv: debug) to stderr"
    )
    return target


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of seconds")
    return value


def _add_record(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    target: argparse.ArgumentParser,
) -> None:
    record = commands.add_parser(
        "record", parents=[target], help="capture one exchange as a transcript"
    )
    record.add_argument("prompt")
    record.add_argument("--name", required=True, help="what the exchange shows, e.g. stream-text")
    record.add_argument("--setup", default="cli", help="server set-up label (default cli)")
    record.add_argument(
        "--transcripts",
        type=Path,
        default=Path("oaicompat-transcripts"),
        help="where to write (default ./oaicompat-transcripts, never the bundled transcripts/)",
    )
    record.add_argument(
        "--force", action="store_true", help="replace a transcript of the same name if it exists"
    )
    record.add_argument("--no-stream", action="store_true", help="record a non-streamed call")
    record.add_argument("--max-tokens", type=int)
    record.add_argument("--tools", metavar="JSON|@FILE", help="OpenAI-style tool list")
