"""``ReasoningOptions``: how hard the model should think, and whether its thinking comes back.

After Microsoft.Extensions.AI's ``ChatOptions.Reasoning``. One option for what servers spell a
dozen ways: ``chat_template_kwargs.enable_thinking`` (Qwen3, GLM), ``chat_template_kwargs.thinking``
(DeepSeek-V3.1, Granite), ``reasoning_effort`` (gpt-oss, OpenAI), ``reasoning.effort`` (the
Responses API). The request builder maps it per backend *and* model family
(``capabilities.reasoning_mapping``), and refuses, before sending, what a family cannot do
(``effort=NONE`` on a model that always thinks).
"""

from __future__ import annotations

from typing import ClassVar

from providers.abstractions.open_values import OpenValue
from providers.abstractions.records import value_class

__all__ = ["EFFORT_WORDS", "ReasoningEffort", "ReasoningOptions", "ReasoningOutput"]


class ReasoningEffort(OpenValue):
    """``NONE`` (do not think), ``LOW``, ``MEDIUM``, ``HIGH``, ``EXTRA_HIGH``.

    Ordered: a family with fewer levels gets the nearest one it has (``EXTRA_HIGH`` is gpt-oss's
    ``high``), and one with only on and off gets "on" for every level but ``NONE``."""

    __slots__ = ()

    NONE: ClassVar[ReasoningEffort]
    LOW: ClassVar[ReasoningEffort]
    MEDIUM: ClassVar[ReasoningEffort]
    HIGH: ClassVar[ReasoningEffort]
    EXTRA_HIGH: ClassVar[ReasoningEffort]


ReasoningEffort.NONE = ReasoningEffort("none")
ReasoningEffort.LOW = ReasoningEffort("low")
ReasoningEffort.MEDIUM = ReasoningEffort("medium")
ReasoningEffort.HIGH = ReasoningEffort("high")
ReasoningEffort.EXTRA_HIGH = ReasoningEffort("extra_high")

EFFORT_WORDS: dict[str, ReasoningEffort] = {
    "none": ReasoningEffort.NONE,
    "minimal": ReasoningEffort.LOW,
    "low": ReasoningEffort.LOW,
    "medium": ReasoningEffort.MEDIUM,
    "high": ReasoningEffort.HIGH,
    "xhigh": ReasoningEffort.EXTRA_HIGH,
    "max": ReasoningEffort.EXTRA_HIGH,
}
"""The effort words agent frameworks take (OpenAI's ``reasoning_effort``, the Responses
client's ``xhigh`` and ``max``, pydantic-ai's ``thinking`` levels) as oaicompat's levels: the
integrations read a framework's setting through this one table. ``minimal`` (the lowest that
still thinks) and ``max`` have no level of their own and get the nearest."""


class ReasoningOutput(OpenValue):
    """Whether reasoning text is returned: ``NONE`` (the model may think, the caller gets none of
    it), ``SUMMARY`` (a summary where the server makes one, else the full text) or ``FULL``."""

    __slots__ = ()

    NONE: ClassVar[ReasoningOutput]
    SUMMARY: ClassVar[ReasoningOutput]
    FULL: ClassVar[ReasoningOutput]


ReasoningOutput.NONE = ReasoningOutput("none")
ReasoningOutput.SUMMARY = ReasoningOutput("summary")
ReasoningOutput.FULL = ReasoningOutput("full")


@value_class(frozen=True)
class ReasoningOptions:
    """``effort`` ``None`` leaves thinking as the server and template default it; ``output``
    ``None`` returns what the server sends."""

    effort: ReasoningEffort | None = None
    output: ReasoningOutput | None = None
