"""``oaicompat serve`` as a real subprocess (``python -m providers serve --config F --port P``),
reached with ``curl``: answers, bad input, keys, and SIGTERM while a stream is open.

The process is owned like every server of the suite (``rigs/process.py``): its own process
group and a watcher that ends it if the test runner dies. The backends are loopback fakes that
record what they receive, so the tests see what the gateway sends on (never the inbound key).
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest

from providers.replay.server import ReplayServer
from tests.integration.gateway.harness import (
    BackgroundLoop,
    GatewayProcess,
    TrickleBackend,
    curl,
    text_backend,
)

INBOUND_KEY = "sk-inbound-secret-7f3a"
BACKEND_KEY = "sk-backend-own-key"
KEYS_ENV = "OAICOMPAT_IT_SERVE_KEYS"
MAX_BODY = 4096
CHAT = {"model": "echo", "messages": [{"role": "user", "content": "Hi"}]}


def config_for(echo: str, slow: str, **serve: Any) -> dict[str, Any]:
    once = {"retry": {"max_attempts": 1}, "backend": "vllm"}
    return {
        "backends": {
            "echo": {"base_url": echo, "model_id": "echo-model", "api_key": BACKEND_KEY, **once},
            "slow": {"base_url": slow, "model_id": "slow-model", **once},
        },
        "serve": {"api_keys_env": KEYS_ENV, "max_body_bytes": MAX_BODY, **serve},
    }


@pytest.fixture(scope="module")
def echo(background: BackgroundLoop) -> Iterator[ReplayServer]:
    with background.entered(text_backend(lambda _: "Hello from the backend.")) as server:
        yield server


@pytest.fixture(scope="module")
def slow(background: BackgroundLoop) -> Iterator[TrickleBackend]:
    with background.entered(TrickleBackend(count=40, interval=0.05)) as server:
        yield server


@pytest.fixture(scope="module")
def served(echo: ReplayServer, slow: TrickleBackend) -> Iterator[GatewayProcess]:
    process = GatewayProcess(config_for(echo.base_url, slow.base_url), env={KEYS_ENV: INBOUND_KEY})
    with process:
        yield process
        assert "Traceback" not in process.log_text(), process.log_tail()


def post(
    served: GatewayProcess, body: str, *, content_type: str = "application/json", key: str = ""
) -> tuple[int, Any]:
    """``curl`` a chat-completions request; the status and the parsed body."""
    done = curl(
        *("-X", "POST", f"{served.api_url}/chat/completions"),
        *("-H", f"Content-Type: {content_type}"),
        *("-H", f"Authorization: Bearer {key or INBOUND_KEY}"),
        "--data-binary",
        body,
    )
    assert done.returncode == 0, done.stderr
    text, _, status = done.stdout.rpartition("\n")
    return int(status), json.loads(text) if text.startswith("{") else text


def test_curl_gets_an_answer_and_the_backend_never_gets_the_inbound_key(
    served: GatewayProcess, echo: ReplayServer
) -> None:
    status, answer = post(served, json.dumps(CHAT))
    assert status == 200, answer
    assert answer["choices"][0]["message"]["content"] == "Hello from the backend."
    received = echo.requests[-1]
    assert received.headers["authorization"] == f"Bearer {BACKEND_KEY}"
    for request in echo.requests:
        assert INBOUND_KEY not in json.dumps(request.headers) + request.body.decode()


def test_curl_streams_sse_ending_with_done(served: GatewayProcess) -> None:
    done = curl(
        "-N",
        *("-H", "Content-Type: application/json", "-H", f"Authorization: Bearer {INBOUND_KEY}"),
        *("-d", json.dumps(CHAT | {"stream": True}), f"{served.api_url}/chat/completions"),
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("data: ")]
    assert lines[-1] == "data: [DONE]"
    chunks = [json.loads(line.removeprefix("data: ")) for line in lines[:-1]]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert text == "Hello from the backend."


def test_without_the_inbound_key_the_answer_is_401(
    served: GatewayProcess, echo: ReplayServer
) -> None:
    before = len(echo.requests)
    status, answer = post(served, json.dumps(CHAT), key="sk-wrong")
    assert status == 401
    assert set(answer["error"]) >= {"message", "type", "param", "code"}
    assert len(echo.requests) == before
    models = curl(f"{served.api_url}/models")  # no key at all
    assert models.stdout.rpartition("\n")[2] == "401"


JSON = "application/json"
BAD_INPUT = [
    pytest.param(('{"model": "echo", "messages": [', JSON), 400, None, id="malformed-json"),
    pytest.param((json.dumps(CHAT), "text/plain"), 415, "content-type", id="content-type"),
    pytest.param((json.dumps(CHAT | {"pad": "x" * MAX_BODY}), JSON), 413, None, id="too-big"),
    pytest.param((json.dumps(CHAT | {"stream": "yes"}), JSON), 400, "stream", id="stream-str"),
    pytest.param(
        (json.dumps(CHAT | {"messages": [{"role": "wizard", "content": "hi"}]}), JSON),
        400,
        "messages[0].role",
        id="unknown-role",
    ),
    pytest.param((json.dumps(CHAT | {"messages": "Hi"}), JSON), 400, "messages", id="messages"),
]


@pytest.mark.parametrize(("request_", "status", "param"), BAD_INPUT)
def test_bad_input_is_refused_in_openais_error_shape(
    served: GatewayProcess,
    echo: ReplayServer,
    request_: tuple[str, str],
    status: int,
    param: str | None,
) -> None:
    """Malformed JSON, a wrong ``Content-Type``, a body over ``max_body_bytes``, ``stream``
    not a boolean, an unknown role, ``messages`` not a list: the status, OpenAI's error
    envelope naming the field, nothing sent on, no traceback in the server's output."""
    body, content_type = request_
    before = len(echo.requests)
    got, answer = post(served, body, content_type=content_type)
    assert got == status, answer
    error = answer["error"]
    assert set(error) >= {"message", "type", "param", "code"}
    assert isinstance(error["message"], str) and error["message"]
    assert error["param"] == param
    if param is not None and param != "content-type":
        assert f"`{param}`" in error["message"]
    assert len(echo.requests) == before  # nothing reached the backend
    assert "Traceback" not in served.log_text()


def test_sigterm_drains_an_open_stream_then_exits(echo: ReplayServer, slow: TrickleBackend) -> None:
    """The README's command, stopped as a process manager stops it: the stream open at
    SIGTERM ends whole, new connections are refused meanwhile, the process ends well before
    the drain deadline (its exit status: the next test)."""
    config = config_for(echo.base_url, slow.base_url, drain_seconds=10)
    with GatewayProcess(config, env={KEYS_ENV: INBOUND_KEY}) as served:
        stream = subprocess.Popen(
            [
                *("curl", "-sS", "-N", "--max-time", "30", f"{served.api_url}/chat/completions"),
                *("-H", "Content-Type: application/json"),
                *("-H", f"Authorization: Bearer {INBOUND_KEY}"),
                *("-d", json.dumps(CHAT | {"model": "slow", "stream": True})),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert stream.stdout is not None
        first = stream.stdout.readline()  # the stream is open and flowing
        assert first.startswith("data: "), first
        served.terminate()
        signalled = time.monotonic()
        time.sleep(0.3)
        assert curl(f"{served.base_url}/health", timeout=3).returncode != 0  # not accepting
        rest, _ = stream.communicate(timeout=20)
        served.wait_exit(timeout=20)
        assert time.monotonic() - signalled < 10
    events = [line for line in (first + rest).splitlines() if line.startswith("data: ")]
    assert events[-1] == "data: [DONE]"
    text = "".join(
        json.loads(line[6:])["choices"][0]["delta"].get("content") or ""
        for line in events[:-1]
        if json.loads(line[6:])["choices"]
    )
    assert text == "".join(f"[{index}]" for index in range(40))
    assert slow.finished


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="uvicorn re-raises the captured SIGTERM after its graceful shutdown "
    "(Server.capture_signals), so `oaicompat serve` dies by SIGTERM (status 143) instead of "
    "returning EXIT_OK: providers/gateway/server.py run() calls uvicorn.Server(...).run()",
)
def test_sigterm_exit_status_is_zero(echo: ReplayServer, slow: TrickleBackend) -> None:
    """A process manager reads a non-zero status after SIGTERM as a failed stop."""
    config = config_for(echo.base_url, slow.base_url)
    with GatewayProcess(config, env={KEYS_ENV: INBOUND_KEY}) as served:
        served.terminate()
        assert served.wait_exit(timeout=20) == 0
