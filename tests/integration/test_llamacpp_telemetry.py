"""Telemetry against a real llama-server: the prompt cache grows turn over turn.

A three-turn conversation on one slot (the fixture runs ``-np 1``): each turn's prompt extends
the previous one, so the server's ``cache_n`` must grow. The system prompt starts with a nonce,
so whatever earlier tests left in the slot's cache matches only the template's first tokens.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from structlog.testing import capture_logs

from providers import (
    ChatMessage,
    ChatOptions,
    ChatResponse,
    OpenAiCompatibleChatClient,
    RetryingChatClient,
    RetryPolicy,
)
from telemetry import (
    CLIENT_MEASURED,
    SERVER_REPORTED,
    CacheEvolution,
    TelemetryChatClient,
    events,
    request_timings,
)


def forced(text: str, max_tokens: int = 40) -> ChatOptions:
    """Options whose GBNF grammar makes the random-weight model emit exactly ``text``."""
    literal = json.dumps(text, ensure_ascii=True)
    return ChatOptions(
        max_output_tokens=max_tokens, additional_properties={"grammar": f"root ::= {literal}"}
    )


async def test_cache_evolution_from_a_live_three_turn_conversation(plain_server: Any) -> None:
    evolution = CacheEvolution()
    system = f"Session {uuid.uuid4().hex}. " + "You are terse. " * 40
    history = [ChatMessage.system(system)]
    async with OpenAiCompatibleChatClient(plain_server.base_url, backend="llamacpp") as inner:
        # Retry inside telemetry, as the standard pipeline has it: on a loaded CI machine a turn
        # can outlast llama-server's keep-alive, and httpx then reuses a connection the server
        # has closed ("Server disconnected without sending a response"), which only a retry
        # absorbs. The cache figures are unaffected: a retried turn sends the same prompt.
        retrying = RetryingChatClient(inner, RetryPolicy(max_attempts=3, base_delay=0))
        client = TelemetryChatClient(retrying, observers=[evolution.add])
        with capture_logs() as logs:
            for number in (1, 2, 3):
                history.append(ChatMessage.user(f"Turn {number}?"))
                updates = [
                    u
                    async for u in client.get_streaming_response(
                        history, forced(f"Answer {number}.")
                    )
                ]
                response = ChatResponse.from_updates(updates)
                assert response.text == f"Answer {number}."
                history.append(ChatMessage.assistant(response.text))
                timings = request_timings(response)
                assert timings is not None and timings.server is not None
                assert timings.client.ttft_ms is not None and timings.client.ttft_ms > 0
                c = timings.client
                assert c.first_token is not None and c.last_token is not None
                assert c.request_sent <= c.first_token <= c.last_token <= c.end

    print("\n" + evolution.render_text())  # the table, for whoever runs this with -s
    turns = evolution.turns
    assert len(turns) == 3
    cached = [t.cached_tokens for t in turns]
    assert all(m is not None and m.source == SERVER_REPORTED for m in cached)
    values = [m.value for m in cached if m is not None]
    assert values[0] < values[1] < values[2]
    inputs = [t.input_tokens.value for t in turns if t.input_tokens is not None]
    assert values[1] >= inputs[0] - 1  # turn 2 reuses (about) all of turn 1's prompt
    for turn in turns:
        assert turn.prompt_ms_server is not None and turn.prompt_ms_server.value > 0
        assert turn.ttft_ms_client is not None and turn.ttft_ms_client.value > 0
        assert turn.ttft_ms_client.source == CLIENT_MEASURED
    assert evolution.notes == []
    table = evolution.render_text().splitlines()
    assert [row.split()[2] for row in table[1:4]] == [str(int(v)) for v in values]
    completed = [e for e in logs if e["event"] == events.REQUEST_COMPLETED]
    assert [e[events.USAGE]["cached_input_tokens"] for e in completed] == values
