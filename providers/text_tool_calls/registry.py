"""The formats by name, and the marker tables the scanner runs with.

The only module that imports the format modules. ``auto`` listens for every format's
``auto_markers``; where formats share a marker (``<tool_call>``: hermes and qwen3_coder; the
DeepSeek section: V3 and V3.1) they are listed in the order ``auto`` tries them, the stricter
grammar first, and they must agree on where the block ends (they share a tracker).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Final

from providers.text_tool_calls.formats.deepseek_v3 import DeepSeekV3
from providers.text_tool_calls.formats.deepseek_v31 import DeepSeekV31
from providers.text_tool_calls.formats.gpt_oss import GptOss
from providers.text_tool_calls.formats.hermes import Hermes
from providers.text_tool_calls.formats.kimi_k2 import KimiK2
from providers.text_tool_calls.formats.llama3_json import Llama3Json
from providers.text_tool_calls.formats.mistral import Mistral
from providers.text_tool_calls.formats.nemotron import Nemotron
from providers.text_tool_calls.formats.pythonic import Pythonic
from providers.text_tool_calls.formats.qwen3_coder import Qwen3Coder
from providers.text_tool_calls.protocol import ToolCallFormat
from providers.text_tool_calls.scanner import MarkerTable

__all__ = ["AUTO", "FORMATS", "FORMAT_NAMES", "table_for"]

AUTO: Final = "auto"

_ALL: Final[tuple[ToolCallFormat, ...]] = (
    Hermes(),
    Qwen3Coder(),
    Mistral(),
    Llama3Json(),
    Pythonic(),
    KimiK2(),
    DeepSeekV3(),
    DeepSeekV31(),
    GptOss(),
    Nemotron(),
)

FORMATS: Final[Mapping[str, ToolCallFormat]] = {f.name: f for f in _ALL}
FORMAT_NAMES: Final = (*FORMATS, AUTO)


@cache
def table_for(name: str) -> MarkerTable:
    """The markers in force for one format, or for ``auto`` before it has detected one."""
    if name == AUTO:
        candidates: dict[str, tuple[ToolCallFormat, ...]] = {}
        for fmt in _ALL:
            for marker in fmt.auto_markers:
                candidates[marker] = (*candidates.get(marker, ()), fmt)
        return MarkerTable.build(candidates)
    fmt = FORMATS[name]
    return MarkerTable.build(dict.fromkeys(fmt.markers, (fmt,)))
