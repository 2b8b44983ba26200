"""SGLang with ``--tool-call-parser qwen3_coder`` on the Qwen3-Coder template (``qwen3coder``).

Qwen3-Coder writes calls as XML (``<function=…><parameter=…>``); SGLang's parser types each
parameter from the tool's schema. Each case scripts a scenario's model text
(``tests/integration/rigs/scenarios.py``) and checks the result through our standard pipeline.
"""

from __future__ import annotations

import pytest

from tests.integration.rigs.scenarios import SCENARIOS, assert_matches
from tests.integration.rigs.sglang.server import SglangServer
from tests.integration.sglang.helpers import STREAMING, STREAMING_IDS, assert_usage, run_scenario

streaming_cases = pytest.mark.parametrize("streaming", STREAMING, ids=STREAMING_IDS)


@streaming_cases
async def test_tool_call(sglang_qwen3coder: SglangServer, streaming: bool) -> None:
    """ "<tool_call>\\n<function=get_weather>\\n<parameter=city>\\nParis\\n</parameter>\\n
    <parameter=days>\\n3\\n</parameter>\\n</function>\\n</tool_call>" -> get_weather with
    city "Paris" and days the integer 3."""
    scenario = SCENARIOS["coder-tool-call"]
    response = await run_scenario(sglang_qwen3coder, scenario, streaming=streaming)
    assert_matches(response, scenario)
    assert_usage(response, sglang_qwen3coder)
    (call,) = response.tool_calls
    assert call.call_id.startswith("call_")
    assert isinstance(call.arguments["days"], int)


@streaming_cases
async def test_text_then_tool_call(sglang_qwen3coder: SglangServer, streaming: bool) -> None:
    """ "Let me check.\\n" then the XML call -> text "Let me check." and the call."""
    scenario = SCENARIOS["coder-text-then-tool-call"]
    response = await run_scenario(sglang_qwen3coder, scenario, streaming=streaming)
    assert_matches(response, scenario)
    assert_usage(response, sglang_qwen3coder)


@pytest.mark.parametrize("streaming", STREAMING, ids=STREAMING_IDS)
async def test_tool_call_cut_by_max_tokens(
    sglang_qwen3coder: SglangServer, streaming: bool
) -> None:
    """The XML call cut after 14 tokens (inside the parameters) -> finish length, no call."""
    scenario = SCENARIOS["coder-tool-call-length-cut"]
    response = await run_scenario(sglang_qwen3coder, scenario, streaming=streaming)
    assert_matches(response, scenario)
    assert_usage(response, sglang_qwen3coder)
