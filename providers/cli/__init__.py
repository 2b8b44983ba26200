"""The ``oaicompat`` command. Thin: every subcommand calls the library.

Only ``argparse`` and the standard library load at start-up; each subcommand imports what it
uses, so ``oaicompat --help`` is instant and ``import providers`` never pays for the CLI.
Where a backend comes from: ``--base-url`` (with ``--model``, ``--backend``), else the
configuration file (``--config``, else ``./oaicompat.yaml``, else
``~/.config/oaicompat/config.yaml``) and its role or backend named by ``--use``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from providers.abstractions.chat_client import ChatClient
    from providers.abstractions.chat_response import ChatResponse, ChatResponseUpdate

__all__ = ["main"]

EXIT_OK, EXIT_BACKEND, EXIT_USAGE = 0, 1, 2

_EPILOG = """\
exit codes:
  0  success
  1  the backend failed (unreachable, an error status, a broken stream) or a replay failed
  2  usage or configuration error (bad flags, missing or invalid configuration file)

The API key is read from the configuration (api_key: ${VAR}) or, with --base-url, from the
environment variable named by --api-key-env (default OAICOMPAT_API_KEY), never from a flag.
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="oaicompat",
        description="One client for OpenAI-compatible servers (llama.cpp, vLLM, SGLang).",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    target = argparse.ArgumentParser(add_help=False)
    group = target.add_argument_group("backend selection")
    group.add_argument("--config", type=Path, help="configuration file (YAML)")
    group.add_argument("--use", metavar="NAME", help="role or backend name in the configuration")
    group.add_argument("--base-url", help="server URL; bypasses the configuration file")
    group.add_argument("--model", help="model id (with --base-url)")
    group.add_argument("--backend", help="profile: auto, llamacpp, vllm, sglang… (with --base-url)")
    group.add_argument("--api-key-env", default="OAICOMPAT_API_KEY", metavar="VAR")
    group.add_argument(
        "--extra-body", metavar="JSON", help="JSON object merged into every request body"
    )
    group.add_argument(
        "--api",
        choices=("chat", "responses"),
        help="endpoint family: chat completions (default) or /v1/responses",
    )
    target.add_argument("-v", "--verbose", action="count", default=0, help="log to stderr")
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
    record = commands.add_parser(
        "record", parents=[target], help="capture one exchange as a transcript"
    )
    record.add_argument("prompt")
    record.add_argument("--name", required=True, help="what the exchange shows, e.g. stream-text")
    record.add_argument("--setup", default="cli", help="server set-up label (default cli)")
    record.add_argument("--transcripts", type=Path, default=Path("transcripts"))
    record.add_argument("--no-stream", action="store_true", help="record a non-streamed call")
    record.add_argument("--max-tokens", type=int)
    record.add_argument("--tools", metavar="JSON|@FILE", help="OpenAI-style tool list")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:  # argparse: --help (0) or a usage error (2)
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    try:
        return _run(args)
    except BrokenPipeError:  # `oaicompat demo | head`: the reader left, nothing is wrong
        sys.stderr.close()
        return EXIT_OK
    except KeyboardInterrupt:
        return 130


def _run(args: argparse.Namespace) -> int:
    if args.command == "demo":
        from providers.cli.demo import run_demo

        return asyncio.run(run_demo(args.transcripts))
    if args.command == "replay":
        return asyncio.run(_replay(args.file))
    from providers.abstractions.errors import ConfigurationError, ProviderError

    restore = _configure_logging(args.verbose)
    try:
        if args.command == "probe":
            return asyncio.run(_probe(args))
        if args.command == "chat":
            return asyncio.run(_chat(args))
        if args.command == "check":
            return asyncio.run(_check(args))
        if args.command == "record":
            return asyncio.run(_record(args))
    except ConfigurationError as exc:
        print(f"oaicompat: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ProviderError as exc:
        print(f"oaicompat: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_BACKEND
    finally:
        restore()
    return EXIT_USAGE  # pragma: no cover - argparse rejects unknown commands


def _configure_logging(verbose: int) -> Any:
    """Library events go to stderr (warnings only unless ``-v``), so stdout stays the answer
    or the JSON. The CLI is an application, so it may configure structlog; it restores the
    previous configuration afterwards because ``main`` is also called in-process (tests)."""
    import logging

    import structlog

    previous = structlog.get_config()
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    structlog.configure(
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
    )
    return lambda: structlog.configure(**previous)


# -- backend selection ---------------------------------------------------------------------------


@dataclass(slots=True)
class _Target:
    """One backend as the command line or the configuration described it."""

    name: str
    base_url: str
    model_id: str | None
    api_key: str | None
    backend: str
    capabilities: Any = None
    settings: dict[str, Any] = field(default_factory=dict)
    """``create_chat_client`` keywords (retry, timeouts, recovery, extra_body)."""

    def client(self, **overrides: Any) -> ChatClient:
        from providers.factory import create_chat_client

        settings = {"backend": self.backend, **self.settings, **overrides}
        return create_chat_client(self.base_url, self.model_id, self.api_key, **settings)


def _target(args: argparse.Namespace) -> _Target:
    from providers.abstractions.errors import ConfigurationError

    extra: dict[str, Any] = {}
    if args.extra_body:
        try:
            extra = json.loads(args.extra_body)
        except json.JSONDecodeError as exc:
            raise ConfigurationError(f"--extra-body is not JSON: {exc.msg}") from None
        if not isinstance(extra, dict):
            raise ConfigurationError("--extra-body must be a JSON object")
    if args.base_url:
        return _Target(
            args.base_url,
            args.base_url,
            args.model,
            os.environ.get(args.api_key_env) or None,
            args.backend or "auto",
            settings={"extra_body": extra or None, "api": args.api or "chat"},
        )
    from providers.config import default_config_paths, find_config, load_config

    path = find_config(args.config)
    if path is None:
        tried = ", ".join(str(p) for p in default_config_paths())
        raise ConfigurationError(f"no backend: pass --base-url or write a configuration ({tried})")
    config = load_config(path)
    name = args.use or _default_name(config, path)
    backend = config.backend(name)
    settings = config.pipeline_settings(backend)
    del settings["backend"]  # --backend may override it: passed on its own below
    settings["extra_body"] = {**backend.extra_body, **extra} or None
    if args.api and args.api != backend.api:
        settings["api"] = args.api
        settings.pop("conversation_mode", None)  # a Responses-only setting
    key = backend.api_key.get_secret_value() if backend.api_key is not None else None
    return _Target(
        name,
        backend.base_url,
        args.model or backend.model_id,
        key,
        args.backend or backend.backend,
        backend.capabilities,
        settings,
    )


def _default_name(config: Any, path: Path) -> str:
    """Role ``main``, else the only backend; anything else needs ``--use``."""
    from providers.abstractions.errors import ConfigurationError

    if "main" in config.roles:
        return "main"
    if len(config.backends) == 1:
        return str(next(iter(config.backends)))
    raise ConfigurationError(f"{path}: no role 'main' and several backends: pass --use NAME")


# -- probe ---------------------------------------------------------------------------------------


async def _probe(args: argparse.Namespace) -> int:
    from capabilities import OpenAiCompatibleCapabilityResolver

    target = _target(args)
    overrides = target.capabilities
    if target.backend not in ("", "auto") and (overrides is None or overrides.backend is None):
        overrides = {**(overrides.model_dump(exclude_unset=True) if overrides else {})}
        overrides["backend"] = target.backend
    async with OpenAiCompatibleCapabilityResolver(
        target.base_url, api_key=target.api_key, overrides=overrides
    ) as resolver:
        caps = await resolver.resolve(target.model_id)
    data = {"target": target.name, "base_url": target.base_url, **caps.to_dict()}
    if args.json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        _print_probe(data, sys.stdout)
    if not caps.answered_probes:
        print(f"oaicompat: no probe of {target.base_url} answered", file=sys.stderr)
        return EXIT_BACKEND
    return EXIT_OK


def _print_probe(data: dict[str, Any], out: TextIO) -> None:
    rows: list[tuple[str, str, str]] = []
    for key, value in data.items():
        if isinstance(value, dict) and set(value) == {"value", "source"}:
            rows.append((key, _cell(value["value"]), value["source"]))
        else:
            rows.append((key, _cell(value), ""))
    widths = [max(len(r[i]) for r in [("field", "value", "source"), *rows]) for i in range(2)]
    for name, value, source in [("field", "value", "source"), *rows]:
        out.write(f"{name:<{widths[0]}}  {value:<{widths[1]}}  {source}".rstrip() + "\n")


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value) or "-"
    return str(value)


# -- chat ----------------------------------------------------------------------------------------


async def _chat(args: argparse.Namespace) -> int:
    from providers.abstractions.chat_response import ChatResponse
    from providers.abstractions.messages import ChatMessage
    from providers.abstractions.options import ChatOptions

    target = _target(args)
    options = ChatOptions(
        max_output_tokens=args.max_tokens, temperature=args.temperature, tools=_tools(args.tools)
    )
    messages = [ChatMessage.user(args.prompt)]
    if args.system:
        messages.insert(0, ChatMessage.system(args.system))
    out = sys.stdout
    view = _StreamView(out, tty=out.isatty())
    updates: list[ChatResponseUpdate] = []
    async with _closing(target.client()) as client:
        async for update in client.get_streaming_response(messages, options):
            updates.append(update)
            view.show(update)
    view.end()
    response = ChatResponse.from_updates(updates)
    for call in response.tool_calls:
        arguments = json.dumps(call.arguments, ensure_ascii=False)
        out.write(f"tool call: {call.name}({arguments})  id={call.call_id}\n")
    _print_stats(response, updates, sys.stderr)
    return EXIT_OK


def _tools(spec: str | None) -> list[Any] | None:
    from providers.abstractions.errors import ConfigurationError

    if not spec:
        return None
    text = Path(spec[1:]).read_text() if spec.startswith("@") else spec
    try:
        tools = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigurationError(f"--tools is not JSON: {exc.msg}") from None
    if not isinstance(tools, list):
        raise ConfigurationError("--tools must be a JSON list of tools")
    return tools


class _StreamView:
    """Prints text and reasoning as they arrive: reasoning dimmed on a terminal, labelled
    otherwise (escape codes in a file or a pipe are noise)."""

    DIM, RESET = "\x1b[2m", "\x1b[0m"

    def __init__(self, out: TextIO, *, tty: bool) -> None:
        self.out = out
        self.tty = tty
        self.kind: str | None = None

    def show(self, update: ChatResponseUpdate) -> None:
        from providers.abstractions.contents import TextContent, TextReasoningContent

        for content in update.contents:
            if type(content) is TextReasoningContent and content.text:
                self._write("reasoning", content.text)
            elif type(content) is TextContent and content.text:
                self._write("text", content.text)

    def _write(self, kind: str, text: str) -> None:
        if kind != self.kind:
            if self.tty and self.kind == "reasoning":
                self.out.write(self.RESET + "\n")
            elif not self.tty:
                self.out.write(("\n" if self.kind else "") + f"[{kind}]\n")
            if self.tty and kind == "reasoning":
                self.out.write(self.DIM)
            self.kind = kind
        self.out.write(text)
        self.out.flush()

    def end(self) -> None:
        if self.tty and self.kind == "reasoning":
            self.out.write(self.RESET)
        if self.kind is not None:
            self.out.write("\n")


def _print_stats(response: ChatResponse, updates: list[Any], out: TextIO) -> None:
    from telemetry import CacheEvolution, request_timings

    out.write(f"finish: {response.finish_reason}\n")
    usage = response.usage
    if usage is not None:
        out.write(
            f"usage: in {usage.input_token_count} out {usage.output_token_count} "
            f"cached {usage.cached_input_token_count}\n"
        )
    timings = next((t for u in reversed(updates) if (t := request_timings(u)) is not None), None)
    if timings is None:
        return
    for name, measurement in timings.measurements().items():
        out.write(f"{name}: {measurement.value:.1f} {measurement.unit}\n")
    evolution = CacheEvolution()
    evolution.add(timings)
    out.write(evolution.render_text() + "\n")


class _closing:
    """``async with`` for any ``ChatClient``: the protocol has ``aclose``, not ``__aenter__``."""

    def __init__(self, client: ChatClient) -> None:
        self.client = client

    async def __aenter__(self) -> ChatClient:
        return self.client

    async def __aexit__(self, *exc: object) -> None:
        await self.client.aclose()


# -- check ---------------------------------------------------------------------------------------

_WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather in a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
_TIME = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "Current time in a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


@dataclass(slots=True)
class _CheckResult:
    name: str
    outcome: str
    """``ok``, ``differs`` (works, but not the OpenAI way) or ``failed``."""
    detail: str


async def _check(args: argparse.Namespace) -> int:
    """Each check is one request; a failure is a finding, not a crash, so all of them run."""
    from capabilities import OpenAiCompatibleCapabilityResolver

    target = _target(args)
    progress = sys.stderr.isatty()
    async with OpenAiCompatibleCapabilityResolver(
        target.base_url, api_key=target.api_key
    ) as resolver:
        caps = await resolver.resolve(target.model_id)
        if not caps.answered_probes:
            print(f"oaicompat: no probe of {target.base_url} answered", file=sys.stderr)
            return EXIT_BACKEND
        results: list[_CheckResult] = []
        async with _closing(target.client(retry=None)) as client:
            for name, run in _BATTERY:
                if progress:
                    print(f"… {name}", file=sys.stderr, flush=True)
                results.append(await _run_check(name, run, client, args, caps, resolver))
    header = {
        "base_url": target.base_url,
        "backend": caps.backend.value,
        "version": caps.backend_version.value,
    }
    if args.json:
        rows = [{"check": r.name, "outcome": r.outcome, "detail": r.detail} for r in results]
        print(json.dumps({**header, "checks": rows}, indent=2, ensure_ascii=False))
    else:
        print(f"{header['backend']} {header['version'] or ''} at {target.base_url}".strip())
        width = max(len(r.name) for r in results)
        for r in results:
            print(f"  {r.name:<{width}}  {r.outcome:<8} {r.detail}")
    plain = results[0]
    return EXIT_BACKEND if plain.outcome == "failed" else EXIT_OK


async def _run_check(name: str, run: Any, *context: Any) -> _CheckResult:
    from providers.abstractions.errors import ProviderError

    try:
        outcome, detail = await run(*context)
    except ProviderError as exc:
        outcome, detail = "failed", f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
    return _CheckResult(name, outcome, detail)


async def _ask(client: ChatClient, prompt: str, args: argparse.Namespace, **kw: Any) -> Any:
    from providers.abstractions.chat_response import ChatResponse
    from providers.abstractions.options import ChatOptions

    options = ChatOptions(max_output_tokens=args.max_tokens, **kw)
    updates = [u async for u in client.get_streaming_response(prompt, options)]
    return ChatResponse.from_updates(updates)


def _calls(response: Any) -> str:
    return "; ".join(f"{c.name}({json.dumps(c.arguments)})" for c in response.tool_calls) or "-"


async def _check_text(client: ChatClient, args: argparse.Namespace, *_: Any) -> tuple[str, str]:
    response = await _ask(client, "Say hello.", args)
    outcome = "ok" if response.text else "differs"
    return outcome, f"{len(response.text)} chars, finish {response.finish_reason}"


async def _check_reasoning(
    client: ChatClient, args: argparse.Namespace, *_: Any
) -> tuple[str, str]:
    response = await _ask(client, "Think step by step: what is 17 * 3?", args)
    if response.reasoning:
        where = "split from the text" if "<think>" not in response.text else "left in the text"
        return "ok", f"{len(response.reasoning)} chars of reasoning, {where}"
    return "differs", "no reasoning (the model or server does not reason here)"


async def _check_tool(client: ChatClient, args: argparse.Namespace, *_: Any) -> tuple[str, str]:
    response = await _ask(client, "What is the weather in Paris?", args, tools=[_WEATHER])
    if response.tool_calls:
        return "ok", f"{_calls(response)}, finish {response.finish_reason}"
    return "differs", f"no tool call; answered {len(response.text)} chars of text"


async def _check_parallel(client: ChatClient, args: argparse.Namespace, *_: Any) -> tuple[str, str]:
    response = await _ask(
        client,
        "What are the weather and the time in Paris?",
        args,
        tools=[_WEATHER, _TIME],
        allow_multiple_tool_calls=True,
    )
    count = len(response.tool_calls)
    return ("ok" if count >= 2 else "differs"), f"{count} call(s): {_calls(response)}"


async def _check_usage(client: ChatClient, args: argparse.Namespace, *_: Any) -> tuple[str, str]:
    usage = (await _ask(client, "Say hello.", args)).usage
    if usage is None:
        return "differs", "no usage reported on the stream"
    detail = (
        f"in {usage.input_token_count}, out {usage.output_token_count}, "
        f"cached {usage.cached_input_token_count}"
    )
    return ("ok" if usage.input_token_count else "differs"), detail


async def _check_overlong(
    client: ChatClient, args: argparse.Namespace, caps: Any, _: Any
) -> tuple[str, str]:
    from providers.abstractions.errors import ContextLengthExceededError

    window = caps.context_window.value or 32768
    prompt = "weather " * min(int(window * 1.5) + 100, 400_000)
    try:
        response = await _ask(client, prompt, args)
    except ContextLengthExceededError as exc:
        sizes = f"prompt_tokens {exc.prompt_tokens}, context_window {exc.context_window}"
        return "ok", f"ContextLengthExceededError (status {exc.status}), {sizes}"
    return "differs", f"accepted ({len(response.text)} chars, finish {response.finish_reason})"


async def _check_model_id(
    client: ChatClient, args: argparse.Namespace, caps: Any, resolver: Any
) -> tuple[str, str]:
    from providers.abstractions.errors import ModelNotFoundError

    wrong = "oaicompat-no-such-model"
    try:
        await resolver.validate_model(wrong)
    except ModelNotFoundError as exc:
        return "ok", f"ModelNotFoundError: {str(exc).splitlines()[0][:120]}"
    if caps.model_field_ignored:
        return "differs", "the server ignores the model field (answers with its one model)"
    return "differs", "accepted an unknown model id"


_BATTERY = (
    ("plain text", _check_text),
    ("reasoning", _check_reasoning),
    ("tool call", _check_tool),
    ("parallel tool calls", _check_parallel),
    ("usage", _check_usage),
    ("over-long prompt", _check_overlong),
    ("wrong model id", _check_model_id),
)


# -- record --------------------------------------------------------------------------------------


async def _record(args: argparse.Namespace) -> int:
    """One exchange, byte for byte, in the ``transcripts/README.md`` layout.

    The client's own body builder makes the request; ``providers.replay.recording`` sends it, keeps
    the body exactly as the server sent it and writes the sidecar, whose ``expected`` is what the
    core client (text recovery off) makes of those bytes, replayed on a loopback server. Review
    it before committing: it is the client's reading, not an independent one.
    """
    from providers.abstractions.options import ChatOptions
    from providers.factory import core_client_class
    from providers.replay.recording import record_exchange

    target = _target(args)
    api = target.settings.get("api", "chat")
    core = core_client_class(api)(
        target.base_url,
        target.model_id,
        backend=None if target.backend == "auto" else target.backend,
    )
    extra = target.settings.get("extra_body") or {}
    options = ChatOptions(
        max_output_tokens=args.max_tokens,
        tools=_tools(args.tools),
        additional_properties=dict(extra),
    )
    body = core.build_request_body(args.prompt, options, stream=not args.no_stream)
    await core.aclose()
    recording = await record_exchange(
        target.base_url,
        body,
        root=args.transcripts,
        scenario=f"captured--{args.setup}--{'responses--' if api != 'chat' else ''}{args.name}",
        api_key=target.api_key,
        source="oaicompat record",
        api=api,
    )
    print(f"recorded {recording.body_path} and {recording.sidecar_path}")
    return EXIT_OK if 200 <= recording.exchange.status < 300 else EXIT_BACKEND


# -- replay --------------------------------------------------------------------------------------


async def _replay(path: Path) -> int:
    from providers.replay.transcripts import Transcript, replay_bytes

    sidecar = path.with_suffix(".json")
    if not sidecar.exists():
        print(f"oaicompat: no transcript sidecar at {sidecar}", file=sys.stderr)
        return 2
    transcript = Transcript.load(sidecar)
    result = await replay_bytes(
        transcript.status,
        transcript.body,
        transcript.sidecar["response"].get("content_type", ""),
        streaming=bool(transcript.request.get("stream", transcript.is_stream)),
        backend=transcript.backend,
        api=transcript.api,
    )
    print(json.dumps(result, indent=2, ensure_ascii=False))
    return 1 if result["error"] else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
