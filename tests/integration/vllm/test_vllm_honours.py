"""``oaicompat check``'s honours section on the real ``vllm serve`` (server set
``qwen3-hermes``): each probe's row agrees with the honours table, and the engine's records
show the table's keys arriving.

The engine is scripted, so what the probes can show is what vLLM's front end does around it:
the request it accepts or refuses, the stop strings its detokenizer applies, the calls its
parser returns. The model family is ``qwen3`` (the rig's template).
"""

from __future__ import annotations

from providers.backends import PROFILES, Backend
from providers.cli.check_honours import HONOURS_PROBES, HonoursContext
from tests.integration.rigs.honours_checks import QWEN3_NO_THINK_SUFFIX, VERDICTS, honours_on
from tests.integration.rigs.vllm.server import VllmServer

CONTEXT = HonoursContext(PROFILES[Backend.VLLM], "qwen3")


async def test_the_honours_section_agrees_with_the_table(vllm_qwen3_hermes: VllmServer) -> None:
    rows = await honours_on(vllm_qwen3_hermes, "vllm", "qwen3")
    assert list(rows) == [name for name, _ in HONOURS_PROBES]
    assert all(row.verdict in VERDICTS for row in rows.values())
    # the front end takes the table's choice key (or refuses the one that is not vLLM's) …
    choice = CONTEXT.table_row("response_format=choice")
    assert rows["response_format=choice"].verdict == choice.verdict
    # … applies the stop, whether sent or cut here …
    stop = CONTEXT.table_row("stop_sequences")
    assert (rows["stop_sequences"].verdict, rows["stop_sequences"].provenance) == (
        stop.verdict,
        "probed",
    )
    # … and one call comes back (vLLM trims with parallel_tool_calls false, or the client does)
    single = rows["allow_multiple_tool_calls=false"]
    if CONTEXT.table_row("allow_multiple_tool_calls=false").verdict != "not honoured":
        assert (single.verdict, single.provenance) != ("not honoured", "probed"), single.note


async def test_thinking_off_reaches_the_template_when_the_table_sends_it(
    vllm_qwen3_hermes: VllmServer,
) -> None:
    rows = await honours_on(vllm_qwen3_hermes, "vllm", "qwen3")
    assert rows["reasoning.effort=none"].verdict in VERDICTS  # the engine cannot react
    prompts = [record.prompt for record in vllm_qwen3_hermes.prompts()]
    reasoning = [p for p in prompts if "17 * 3" in p][-2:]
    off, default = reasoning
    assert not default.endswith(QWEN3_NO_THINK_SUFFIX)
    if CONTEXT.table_row("reasoning.effort=none").wire:
        assert off.endswith(QWEN3_NO_THINK_SUFFIX), "the table's switch did not reach the template"


async def test_the_choice_key_reaches_the_engine(vllm_qwen3_hermes: VllmServer) -> None:
    """vLLM validates ``structured_outputs.choice`` and hands the engine a grammar of it."""
    await honours_on(vllm_qwen3_hermes, "vllm", "qwen3")
    if "structured_outputs.choice" in CONTEXT.table_row("response_format=choice").wire:
        asked = [r for r in vllm_qwen3_hermes.prompts() if "Is the sky blue" in r.prompt][-1]
        constraint = asked.structured_outputs or {}
        if "choice" in constraint:
            assert constraint["choice"] == ["yes", "no"], constraint
        else:  # the grammar vLLM wrote for it: one alternative per choice
            assert '"yes"' in constraint["grammar"] and '"no"' in constraint["grammar"], constraint
