"""The honours table: verdicts found by building each request with and without the option.

The decisions (refused, enforced here, honoured, not honoured) are checked with the builder or
the planner replaced where a case needs a mapping the tree may not have yet; the rest runs the
real request builder, so a wrong path or a lost key shows here.
"""

from __future__ import annotations

from typing import Any

import pytest

from capabilities.option_verdicts import refusal
from providers.abstractions.options import ChatOptions
from providers.backends import PROFILES, Backend, BackendProfile
from providers.chat_completions.option_enforcement import Enforcement
from providers.chat_completions.request import build_chat_request
from providers.cli import honours_table
from providers.cli.honours_samples import (
    FAMILIES,
    NO_FAMILY,
    OPTION_SAMPLES,
    OptionSample,
    sample_named,
)
from providers.cli.honours_table import RESPONSES, option_verdict, wire_changes
from providers.cli.honours_table import honours_table as table

VLLM = PROFILES[Backend.VLLM]


def test_wire_changes_are_dotted_paths_of_what_the_option_adds() -> None:
    before = {"model": "m", "stream_options": {"include_usage": True}, "stop": ["x"]}
    after = {
        "model": "m",
        "stream_options": {"include_usage": True, "continuous_usage_stats": True},
        "chat_template_kwargs": {"enable_thinking": False, "thinking": False},
        "grammar": "root ::= " + "x" * 80,
        "structured_outputs": {"json": {"type": "object"}},
    }
    changes = wire_changes(before, after, {"<schema>": {"type": "object"}})
    assert changes == [
        "stream_options.continuous_usage_stats=true",
        "chat_template_kwargs.enable_thinking=false",
        "chat_template_kwargs.thinking=false",
        'grammar="root ::= ' + "x" * 36 + '…"',
        "structured_outputs.json=<schema>",
        "stop (removed)",
    ]


def test_a_changed_value_and_an_ignored_key() -> None:
    before = {"stream": False, "tool_choice": "auto"}
    after = {"stream": True, "tool_choice": "none", "stream_options": {"include_usage": True}}
    assert wire_changes(before, after, ignored={"stream"}) == [
        'tool_choice="none"',
        "stream_options.include_usage=true",
    ]


def test_the_real_builder_sends_parallel_tool_calls_for_a_single_call() -> None:
    row = option_verdict(sample_named("allow_multiple_tool_calls=false"), VLLM, None)
    assert "parallel_tool_calls=false" in row.wire
    assert "tools" not in row.wire  # the baseline has the tool: only the option's key shows
    assert row.verdict in ("honoured", "enforced here")
    assert row.provenance == "table"


def test_stream_options_is_what_streaming_adds_and_its_drop_is_noted() -> None:
    row = option_verdict(sample_named("stream_options"), VLLM, None)
    assert row.wire == "stream_options.include_usage=true"
    assert row.verdict == "honoured"
    assert "400/422" in row.note


def test_a_refusal_is_refused_with_its_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    real = build_chat_request

    def refusing(messages: Any, options: ChatOptions | None, **kw: Any) -> dict[str, Any]:
        if options is not None and options.stop_sequences and kw["family"] == "qwq":
            raise refusal("stop_sequences", kw["profile"].name, "QwQ says no", family="qwq")
        return real(messages, options, **kw)

    monkeypatch.setattr(honours_table, "build_chat_request", refusing)
    row = option_verdict(sample_named("stop_sequences"), VLLM, "qwq")
    assert (row.verdict, row.wire, row.note, row.family) == ("refused", "", "QwQ says no", "qwq")


def test_a_plan_for_the_option_is_enforced_here(monkeypatch: pytest.MonkeyPatch) -> None:
    def planner(
        options: ChatOptions | None, profile: BackendProfile, *, family: str | None = None
    ) -> Enforcement | None:
        if options is not None and options.stop_sequences:
            return Enforcement(profile.name, stop_sequences=tuple(options.stop_sequences))
        return None

    monkeypatch.setattr(honours_table, "enforcement_for", planner)
    row = option_verdict(sample_named("stop_sequences"), VLLM, None)
    assert row.verdict == "enforced here"
    assert row.wire == 'stop=["END"]'  # sent and cut here: both
    assert "cut at the stop here" in row.note


def test_a_plan_the_baseline_has_too_is_not_the_options(monkeypatch: pytest.MonkeyPatch) -> None:
    def planner(
        options: ChatOptions | None, profile: BackendProfile, *, family: str | None = None
    ) -> Enforcement | None:
        return Enforcement(profile.name, drop_reasoning=True)

    monkeypatch.setattr(honours_table, "enforcement_for", planner)
    row = option_verdict(sample_named("stop_sequences"), VLLM, None)
    assert row.verdict == "honoured"


def test_an_option_nothing_happens_to_is_not_honoured() -> None:
    sample = OptionSample("nothing", ChatOptions(), ChatOptions())
    row = option_verdict(sample, VLLM, None)
    assert (row.verdict, row.wire) == ("not honoured", "")
    assert "dropped without a word" in row.note


def test_sending_nothing_is_right_only_where_the_sample_says_why() -> None:
    sample = OptionSample("quiet", ChatOptions(), ChatOptions(), unsent="nothing to send")
    row = option_verdict(sample, VLLM, None)
    assert (row.verdict, row.note) == ("honoured", "nothing to send")


def test_oaicompat_s_own_constraint_form_on_the_wire_is_not_honoured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def own_form(messages: Any, options: ChatOptions | None, **kw: Any) -> dict[str, Any]:
        body: dict[str, Any] = {"model": "m"}
        if options is not None and options.response_format is not None:
            body["response_format"] = options.response_format.to_openai()
        return body

    monkeypatch.setattr(honours_table, "build_chat_request", own_form)
    row = option_verdict(sample_named("response_format=regex"), VLLM, None)
    assert row.verdict == "not honoured"
    assert 'response_format.type="regex"' in row.wire


def test_the_responses_api_gets_rows_from_its_own_builder() -> None:
    row = option_verdict(sample_named("response_format=json_schema"), VLLM, None, api="responses")
    assert row.backend.startswith(RESPONSES)
    assert 'text.format.type="json_schema"' in row.wire
    assert "text.format.schema=<schema>" in row.wire


def test_rows_collapse_across_families_unless_the_verdict_differs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = build_chat_request

    def refusing(messages: Any, options: ChatOptions | None, **kw: Any) -> dict[str, Any]:
        if options is not None and options.stop_sequences and kw["family"] == "qwq":
            raise refusal("stop_sequences", kw["profile"].name, "no", family="qwq")
        return real(messages, options, **kw)

    monkeypatch.setattr(honours_table, "build_chat_request", refusing)
    samples = (sample_named("stop_sequences"), sample_named("stream_options"))
    rows = table(samples)
    stop_vllm = [r for r in rows if r.option == "stop_sequences" and r.backend == "vllm"]
    assert [r.family for r in stop_vllm] == [f or NO_FAMILY for f in FAMILIES]
    assert [r.verdict for r in stop_vllm if r.family == "qwq"] == ["refused"]
    streamed = [r for r in rows if r.option == "stream_options" and r.backend == "vllm"]
    assert [r.family for r in streamed] == [None]


def test_every_backend_row_and_the_responses_api_are_in_the_table() -> None:
    rows = table(OPTION_SAMPLES[:1])
    backends = {row.backend for row in rows}
    assert set(PROFILES) <= backends
    assert any(name.startswith(RESPONSES) for name in backends)


def test_the_samples_cover_what_the_issue_maps() -> None:
    names = {sample.option for sample in OPTION_SAMPLES}
    for effort in ("none", "low", "high", "extra_high"):
        assert f"reasoning.effort={effort}" in names
    for form in ("json_schema", "json_object", "regex", "choice"):
        assert f"response_format={form}" in names
    for syntax in ("gbnf", "ebnf", "lark"):
        assert f"response_format=grammar:{syntax}" in names
    assert {"reasoning.output=none", "allow_multiple_tool_calls=false", "stop_sequences"} <= names
    assert {"tool_mode without tools", "stream_options"} <= names


def test_no_option_is_dropped_without_a_word() -> None:
    dropped = [
        f"{r.option} on {r.backend} ({r.family})" for r in table() if r.verdict == "not honoured"
    ]
    assert dropped == []


def test_an_effort_asked_of_an_always_thinking_family_is_honoured_only_for_that_family() -> None:
    """R1 thinks whatever is sent; a family that can be switched off cannot be left unsent."""
    rows = {(r.option, r.backend, r.family): r for r in table() if r.option.startswith("reasoning")}
    r1 = rows.get(("reasoning.effort=high", "llama-cpp-python", "deepseek-r1"))
    if r1 is None:  # (collapsed: the same verdict for every family)
        r1 = rows[("reasoning.effort=high", "llama-cpp-python", None)]
    assert r1.verdict == "honoured" and "always thinks" in r1.note
    qwen3 = rows.get(("reasoning.effort=none", "llama-cpp-python", "qwen3"))
    qwen3 = qwen3 or rows[("reasoning.effort=none", "llama-cpp-python", None)]
    assert qwen3.verdict == "refused"
