"""``oaicompat check``'s honours section on SGLang's real OpenAI server (server set
``qwen3-qwen25``): each probe's row agrees with the honours table where the rig can show it.

The scheduler is scripted and leaves stop strings out (``rigs/sglang/fake_scheduler.py``), so
the stop probe here only shows what the client does; SGLang itself returns every call its
parser finds whatever ``parallel_tool_calls`` says (research-33 §2), so one call back is the
client's doing.
"""

from __future__ import annotations

from providers.backends import PROFILES, Backend
from providers.cli.check_honours import HONOURS_PROBES, HonoursContext
from tests.integration.rigs.honours_checks import QWEN3_NO_THINK_SUFFIX, VERDICTS, honours_on
from tests.integration.rigs.sglang.server import SglangServer

CONTEXT = HonoursContext(PROFILES[Backend.SGLANG], "qwen3")


async def test_the_honours_section_agrees_with_the_table(
    sglang_qwen3_qwen25: SglangServer,
) -> None:
    rows = await honours_on(sglang_qwen3_qwen25, "sglang", "qwen3")
    assert list(rows) == [name for name, _ in HONOURS_PROBES]
    assert all(row.verdict in VERDICTS for row in rows.values())
    choice = CONTEXT.table_row("response_format=choice")
    if choice.verdict in ("refused", "not honoured"):
        assert rows["response_format=choice"].verdict == choice.verdict
    else:  # taken (or checked here): the scripted "yes" is in the set
        assert rows["response_format=choice"].verdict != "not honoured"
    single = rows["allow_multiple_tool_calls=false"]
    if CONTEXT.table_row("allow_multiple_tool_calls=false").verdict == "enforced here":
        assert (single.verdict, single.note) == (
            "enforced here",
            "the server sent 2 calls; the first kept here",
        )
    stop = rows["stop_sequences"]
    if CONTEXT.table_row("stop_sequences").verdict == "enforced here":
        assert (stop.verdict, stop.provenance) == ("enforced here", "probed")


async def test_thinking_off_reaches_the_template_when_the_table_sends_it(
    sglang_qwen3_qwen25: SglangServer,
) -> None:
    rows = await honours_on(sglang_qwen3_qwen25, "sglang", "qwen3")
    assert rows["reasoning.effort=none"].verdict in VERDICTS  # the engine cannot react
    prompts = [record.prompt for record in sglang_qwen3_qwen25.prompts()]
    off, default = [p for p in prompts if "17 * 3" in p][-2:]
    assert not default.endswith(QWEN3_NO_THINK_SUFFIX)
    if CONTEXT.table_row("reasoning.effort=none").wire:
        assert off.endswith(QWEN3_NO_THINK_SUFFIX), "the table's switch did not reach the template"
