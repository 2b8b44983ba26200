"""``oaicompat check``'s honours probes on a rig server (vLLM, SGLang): the shared run.

The scripted engine answers every request with the text last scripted, so each probe gets its
own script here (the CLI, which runs them all in one go, cannot script between them). The
probes themselves are the CLI's (``providers.cli.check_honours``), on the standard pipeline a
user builds, told the model family; the rows are printed as the CLI prints them, so ``pytest
-s`` shows the honours table of the real server.
"""

from __future__ import annotations

import sys
from contextlib import aclosing
from typing import Any

from capabilities.option_verdicts import OptionVerdict
from providers import create_chat_client
from providers.backends import profile_for
from providers.cli.check_honours import HONOURS_PROBES, HonoursContext, run_probe
from tests.integration.rigs.scenarios import HERMES_TIME, HERMES_WEATHER
from tests.integration.rigs.scripted import ScriptedServer

__all__ = ["QWEN3_NO_THINK_SUFFIX", "SCRIPTS", "VERDICTS", "honours_on"]

QWEN3_NO_THINK_SUFFIX = "<|im_start|>assistant\n<think>\n\n</think>\n\n"
"""How the Qwen3 template ends the prompt with thinking switched off."""

VERDICTS = ("honoured", "enforced here", "refused", "not honoured")

_ANSWER = "<think>\n\n</think>\n\n"
"""Before every script: the Qwen3 reasoning parsers of both servers read text with no closing
tag as reasoning, so the answer comes after an empty thinking block, as a Qwen3 with thinking
off writes it."""

SCRIPTS: dict[str, str] = {
    # the engine answers the same whatever the template says, so no script can show the switch
    # on a rig (the probe says it could not tell): the prompt the engine got shows whether the
    # switch arrived
    "reasoning.effort=none": f"{_ANSWER}51",
    "response_format=choice": f"{_ANSWER}yes",
    "allow_multiple_tool_calls=false": f"{_ANSWER}{HERMES_WEATHER}\n{HERMES_TIME}",
    "stop_sequences": f"{_ANSWER}one two three four five six seven",
}


async def honours_on(
    server: ScriptedServer[Any], backend: str, family: str
) -> dict[str, OptionVerdict]:
    """Every honours probe against ``server`` (``backend``'s row, model ``family``), each with
    its script; printed as ``oaicompat check`` prints them."""
    context = HonoursContext(profile_for(backend), family)
    rows: dict[str, OptionVerdict] = {}
    client = create_chat_client(
        server.base_url, server.model_id, backend=backend, retry=None, model_family=family
    )
    async with aclosing(client):
        for option, probe in HONOURS_PROBES:
            server.script(SCRIPTS[option])
            rows[option] = await run_probe(option, probe, client, context)
    print(f"\n{backend} (model family {family}):", file=sys.stderr)
    for row in rows.values():
        line = f"  {row.option:<32} {row.verdict:<13}  {row.provenance:<6}  {row.note}"
        print(line, file=sys.stderr)
    return rows
