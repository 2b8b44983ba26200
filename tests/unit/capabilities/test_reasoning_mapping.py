"""``reasoning_fields``: every backend x family cell, written out, refusals included; and the
verdict rows, which come from the mapping itself."""

from __future__ import annotations

from typing import Any

import pytest

from capabilities.reasoning_families import REASONING_FAMILIES
from capabilities.reasoning_mapping import reasoning_fields, reasoning_verdicts
from providers.abstractions.errors import UnsupportedOptionError
from providers.abstractions.reasoning_options import (
    ReasoningEffort,
    ReasoningOptions,
    ReasoningOutput,
)
from providers.backends import PROFILES, profile_for

NONE, LOW, MEDIUM, HIGH, XHIGH = (
    ReasoningEffort.NONE,
    ReasoningEffort.LOW,
    ReasoningEffort.MEDIUM,
    ReasoningEffort.HIGH,
    ReasoningEffort.EXTRA_HIGH,
)
TEMPLATE_BACKENDS = ("llamacpp", "vllm", "sglang")


def fields(
    effort: ReasoningEffort | None,
    backend: str,
    family: str | None,
    output: ReasoningOutput | None = None,
    **kwargs: Any,
) -> dict[str, Any] | UnsupportedOptionError:
    return reasoning_fields(
        ReasoningOptions(effort=effort, output=output), profile_for(backend), family, **kwargs
    )


def ctk(**switches: bool) -> dict[str, Any]:
    return {"chat_template_kwargs": switches}


# --- on/off families ---------------------------------------------------------------------------


@pytest.mark.parametrize("backend", TEMPLATE_BACKENDS)
@pytest.mark.parametrize(
    ("family", "switches"),
    [
        ("qwen3", ("enable_thinking",)),
        ("qwen3.5", ("enable_thinking",)),
        ("glm", ("enable_thinking",)),
        ("deepseek-v3.1", ("thinking",)),
        ("deepseek-v3.2", ("thinking", "enable_thinking")),
        ("granite", ("thinking",)),
    ],
)
def test_an_on_off_family_gets_its_template_switch(
    backend: str, family: str, switches: tuple[str, ...]
) -> None:
    assert fields(NONE, backend, family) == ctk(**dict.fromkeys(switches, False))
    for effort in (LOW, MEDIUM, HIGH, XHIGH):  # no levels: every one is "on"
        assert fields(effort, backend, family) == ctk(**dict.fromkeys(switches, True))


@pytest.mark.parametrize("backend", ["llama-cpp-python", "openai", "generic", "ollama"])
@pytest.mark.parametrize("family", ["qwen3", "glm", "deepseek-v3.1", "granite"])
def test_an_on_off_family_is_refused_where_the_template_switch_cannot_reach(
    backend: str, family: str
) -> None:
    for effort in (NONE, HIGH):
        refused = fields(effort, backend, family)
        assert isinstance(refused, UnsupportedOptionError)
        assert (refused.option, refused.backend, refused.family) == (
            "reasoning.effort",
            backend,
            family,
        )
        assert "chat_template_kwargs" in refused.reason


# --- always and never ----------------------------------------------------------------------------


@pytest.mark.parametrize("backend", sorted(PROFILES))
@pytest.mark.parametrize("family", ["qwq", "deepseek-r1", "qwen3-thinking-2507"])
def test_an_always_thinking_family_cannot_stop_thinking(backend: str, family: str) -> None:
    refused = fields(NONE, backend, family)
    assert isinstance(refused, UnsupportedOptionError)
    assert "cannot stop thinking" in refused.reason
    assert refused.family == family and family in str(refused) and backend in str(refused)
    for effort in (LOW, MEDIUM, HIGH, XHIGH):  # it thinks anyway: sent where it can go
        expected = fields(effort, backend, None)  # (as for an unknown family)
        if isinstance(expected, UnsupportedOptionError):
            expected = {}  # (nothing reaches the model, and nothing needs to)
        assert fields(effort, backend, family) == expected
    assert fields(HIGH, "vllm", family) == ctk(enable_thinking=True, thinking=True)
    assert fields(HIGH, "openai", family) == {"reasoning_effort": "high"}
    assert fields(HIGH, "llama-cpp-python", family) == {}


@pytest.mark.parametrize("backend", sorted(PROFILES))
@pytest.mark.parametrize("family", ["qwen3-instruct-2507", "qwen3-coder", "granite-4"])
def test_a_never_thinking_family_takes_none_and_refuses_a_level(backend: str, family: str) -> None:
    assert fields(NONE, backend, family) == {}
    for effort in (LOW, HIGH, XHIGH):
        refused = fields(effort, backend, family)
        assert isinstance(refused, UnsupportedOptionError)
        assert "never thinks" in refused.reason


# --- gpt-oss -------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["llamacpp", "vllm", "sglang", "openai"])
def test_gpt_oss_gets_its_effort_word(backend: str) -> None:
    assert fields(LOW, backend, "gpt-oss") == {"reasoning_effort": "low"}
    assert fields(MEDIUM, backend, "gpt-oss") == {"reasoning_effort": "medium"}
    assert fields(HIGH, backend, "gpt-oss") == {"reasoning_effort": "high"}
    assert fields(XHIGH, backend, "gpt-oss") == {"reasoning_effort": "high"}  # its highest


@pytest.mark.parametrize("backend", ["llamacpp", "vllm", "sglang", "openai"])
def test_gpt_oss_refuses_none_which_servers_400_or_ignore(backend: str) -> None:
    refused = fields(NONE, backend, "gpt-oss")
    assert isinstance(refused, UnsupportedOptionError)
    assert "cannot stop thinking" in refused.reason


def test_gpt_oss_refuses_a_level_where_no_effort_key_reaches_it() -> None:
    refused = fields(HIGH, "llama-cpp-python", "gpt-oss")
    assert isinstance(refused, UnsupportedOptionError)
    assert "reasoning_effort" in refused.reason


def test_gpt_oss_refuses_a_word_it_does_not_have() -> None:
    refused = fields(ReasoningEffort("minimal"), "vllm", "gpt-oss")
    assert isinstance(refused, UnsupportedOptionError)
    assert "low, medium, high" in refused.reason


# --- unknown families --------------------------------------------------------------------------


@pytest.mark.parametrize("backend", TEMPLATE_BACKENDS)
@pytest.mark.parametrize("family", [None, "some-new-family", "llama-3.x"])
def test_an_unknown_family_gets_the_portable_form(backend: str, family: str | None) -> None:
    assert fields(NONE, backend, family) == ctk(enable_thinking=False, thinking=False)
    assert fields(HIGH, backend, family) == ctk(enable_thinking=True, thinking=True)


def test_an_unknown_family_on_openai_gets_openais_effort_word() -> None:
    assert fields(NONE, "openai", None) == {"reasoning_effort": "none"}
    assert fields(MEDIUM, "openai", None) == {"reasoning_effort": "medium"}
    assert fields(XHIGH, "openai", None) == {"reasoning_effort": "xhigh"}


@pytest.mark.parametrize("backend", ["llama-cpp-python", "generic", "ollama", "lmstudio"])
def test_an_unknown_family_is_refused_where_nothing_reaches_the_model(backend: str) -> None:
    refused = fields(NONE, backend, None)
    assert isinstance(refused, UnsupportedOptionError)
    assert refused.family is None and "neither" in refused.reason


# --- output ------------------------------------------------------------------------------------


def test_output_none_sends_include_reasoning_false_on_vllm_only() -> None:
    assert fields(None, "vllm", None, ReasoningOutput.NONE) == {"include_reasoning": False}
    for backend in sorted(set(PROFILES) - {"vllm"}):
        assert fields(None, backend, None, ReasoningOutput.NONE) == {}
    assert fields(None, "vllm", None, ReasoningOutput.SUMMARY) == {}
    assert fields(None, "vllm", None, ReasoningOutput.FULL) == {}


def test_output_none_rides_beside_the_effort() -> None:
    both = fields(NONE, "vllm", "qwen3", ReasoningOutput.NONE)
    assert both == {"chat_template_kwargs": {"enable_thinking": False}, "include_reasoning": False}


# --- the Responses API -------------------------------------------------------------------------


def test_on_responses_the_effort_is_reasoning_effort_nested() -> None:
    assert fields(HIGH, "vllm", "gpt-oss", api="responses") == {"reasoning": {"effort": "high"}}
    assert fields(XHIGH, "openai", None, api="responses") == {"reasoning": {"effort": "xhigh"}}
    # (every Responses server takes reasoning.effort, even one whose chat row has no key)
    assert fields(LOW, "generic", "gpt-oss", api="responses") == {"reasoning": {"effort": "low"}}
    assert fields(NONE, "vllm", "qwen3", api="responses") == ctk(enable_thinking=False)
    assert isinstance(fields(NONE, "vllm", "qwq", api="responses"), UnsupportedOptionError)


# --- verdicts ----------------------------------------------------------------------------------


def test_the_verdicts_cover_every_backend_family_and_effort() -> None:
    verdicts = reasoning_verdicts()
    cells = {(v.option, v.backend, v.family) for v in verdicts}
    families = [row.family for row in REASONING_FAMILIES] + [None]
    for backend in PROFILES:
        for family in families:
            for effort in ("none", "low", "medium", "high", "extra_high"):
                assert (f"reasoning.effort={effort}", backend, family) in cells
        assert ("reasoning.output=none", backend, None) in cells
    assert len(cells) == len(verdicts)


def test_the_verdicts_say_what_the_mapping_does() -> None:
    by_cell = {(v.option, v.backend, v.family): v for v in reasoning_verdicts()}
    off = by_cell["reasoning.effort=none", "vllm", "qwen3"]
    assert (off.verdict, off.wire) == ("honoured", "chat_template_kwargs.enable_thinking=false")
    r1 = by_cell["reasoning.effort=none", "sglang", "deepseek-r1"]
    assert r1.verdict == "refused" and "cannot stop thinking" in r1.note
    oss = by_cell["reasoning.effort=extra_high", "llamacpp", "gpt-oss"]
    assert (oss.verdict, oss.wire) == ("honoured", 'reasoning_effort="high"')
    assert "nearest" in oss.note
    unknown = by_cell["reasoning.effort=none", "sglang", None]
    assert "portable" in unknown.note
    assert by_cell["reasoning.effort=none", "llama-cpp-python", None].verdict == "refused"
    assert by_cell["reasoning.output=none", "vllm", None].wire == "include_reasoning=false"
    assert by_cell["reasoning.output=none", "sglang", None].verdict == "enforced here"
