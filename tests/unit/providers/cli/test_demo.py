"""``oaicompat demo``, the README's main job: the three servers' traffic gives the same calls.

It replays the bundled transcripts through one client on a loopback server; the point it makes
is that llama.cpp's calls written as text and vLLM's and SGLang's structured calls come out as
the same executable calls, and the same reasoning.
"""

from __future__ import annotations

import io

from providers.cli.demo import run_demo


async def test_the_demo_shows_the_same_executable_calls_from_every_server() -> None:
    out = io.StringIO()
    assert await run_demo(out=out) == 0
    lines = out.getvalue().splitlines()
    calls = [line.split(None, 1) for line in lines if "get_weather(" in line]
    assert sorted(backend for backend, _ in calls) == ["llamacpp", "sglang", "vllm"]
    shown = {text for _, text in calls}
    assert len(shown) == 1, shown  # the same calls from the three servers
    assert "get_time(" in next(iter(shown))
    assert "not executable" not in out.getvalue()
    assert not any("<tool_call>" in line for line in lines if line.strip().startswith("llamacpp"))
