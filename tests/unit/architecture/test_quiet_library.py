"""A library is quiet: nothing on stdout or stderr unless the application configured logging.

Each case runs in a fresh interpreter, because what is being tested is the state nobody has
configured: one request through the standard pipeline (telemetry's ``oaicompat.request.completed``
included) against a loopback server, and the same with a retry (a warning-level event).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

_SCRIPT = textwrap.dedent(
    """
    import asyncio, logging, sys
    {setup}
    from providers import create_chat_client, RetryPolicy
    from providers.replay.server import RecordedReply, ReplayServer

    BODY = (
        b'data: {{"choices":[{{"index":0,"delta":{{"content":"hi"}}}}]}}\\n\\n'
        b'data: {{"choices":[{{"index":0,"delta":{{}},"finish_reason":"stop"}}],'
        b'"usage":{{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}}}\\n\\n'
        b'data: [DONE]\\n\\n'
    )
    calls = []

    def answer(request):
        calls.append(1)
        if len(calls) == 1:
            busy = b'{{"error": "busy"}}'
            return RecordedReply(503, busy, {{"Content-Type": "application/json"}})
        return RecordedReply(200, BODY, {{"Content-Type": "text/event-stream"}})

    async def main():
        async with ReplayServer(answer) as server:
            client = create_chat_client(
                server.base_url, "m", retry=RetryPolicy(base_delay=0.0, max_delay=0.0)
            )
            try:
                updates = [u async for u in client.get_streaming_response("hello")]
                assert "".join(u.text for u in updates) == "hi"
            finally:
                await client.aclose()

    asyncio.run(main())
    """
)


def _run(setup: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _SCRIPT.format(setup=setup)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_an_unconfigured_application_sees_nothing() -> None:
    result = _run("")
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert result.stderr == ""


@pytest.mark.parametrize(
    "setup",
    [
        "logging.basicConfig(level=logging.INFO, stream=sys.stdout)",
        "import structlog; structlog.configure()",
    ],
    ids=["stdlib-logging", "structlog"],
)
def test_a_configured_application_sees_the_events(setup: str) -> None:
    result = _run(setup)
    assert result.returncode == 0, result.stderr
    assert "oaicompat.request.completed" in result.stdout
    assert "oaicompat.request.retry" in result.stdout
