"""Every cell of the constraint table: each form on each backend row is written in the server's
key or refused, ``guided_*`` extras are translated, a second constraint is refused, and the
honours table is derived from the same rows."""

from __future__ import annotations

import re
from typing import Any

import pytest

from capabilities.constraint_mapping import (
    FORMS,
    constraint_fields,
    constraint_verdicts,
    form_of,
    merge_fields,
    nested,
    plan_constraints,
    wants_plan,
)
from providers import ChatOptions, ChatResponseFormat
from providers.abstractions.errors import UnsupportedOptionError
from providers.backends import PROFILES

REGEX = ChatResponseFormat.regex("[0-9]{3}")
CHOICE = ChatResponseFormat.choice(["yes", "no", 'say "x"'])
GBNF = ChatResponseFormat.grammar('root ::= "a" | "b"', "gbnf")
EBNF = ChatResponseFormat.grammar('root ::= "a" | "b"', "ebnf")
LARK = ChatResponseFormat.grammar('start: "a" | "b"', "lark")
SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}

# backend -> form -> the body keys written, or None: refused
EXPECTED: dict[str, dict[str, dict[str, Any] | None]] = {
    "vllm": {
        "regex": {"structured_outputs": {"regex": "[0-9]{3}"}},
        "choice": {"structured_outputs": {"choice": ["yes", "no", 'say "x"']}},
        "gbnf": {"structured_outputs": {"grammar": 'root ::= "a" | "b"'}},
        "ebnf": {"structured_outputs": {"grammar": 'root ::= "a" | "b"'}},
        "lark": {"structured_outputs": {"grammar": 'start: "a" | "b"'}},
    },
    "sglang": {
        "regex": {"regex": "[0-9]{3}"},
        "choice": {"regex": '(?:say "x"|yes|no)'},
        "gbnf": None,
        "ebnf": {"ebnf": 'root ::= "a" | "b"'},
        "lark": None,
    },
    "llamacpp": {
        "regex": None,
        "choice": {"grammar": 'root ::= "yes" | "no" | "say \\"x\\""'},
        "gbnf": {"grammar": 'root ::= "a" | "b"'},
        "ebnf": None,
        "lark": None,
    },
    "llama-cpp-python": {
        "regex": None,
        "choice": {"grammar": 'root ::= "yes" | "no" | "say \\"x\\""'},
        "gbnf": {"grammar": 'root ::= "a" | "b"'},
        "ebnf": None,
        "lark": None,
    },
}
for name in ("openai", "generic", "ollama", "lmstudio"):
    EXPECTED[name] = dict.fromkeys(("regex", "choice", "gbnf", "ebnf", "lark"))
FORMATS = {"regex": REGEX, "choice": CHOICE, "gbnf": GBNF, "ebnf": EBNF, "lark": LARK}
CELLS = [(b, f) for b in sorted(EXPECTED) for f in FORMATS]


def test_the_table_covers_every_row() -> None:
    assert set(EXPECTED) == set(PROFILES)


@pytest.mark.parametrize(("backend", "form"), CELLS)
def test_each_form_on_each_backend(backend: str, form: str) -> None:
    written = constraint_fields(FORMATS[form], PROFILES[backend])
    expected = EXPECTED[backend][form]
    if expected is None:
        assert isinstance(written, UnsupportedOptionError)
        assert written.backend == backend
        assert written.option.startswith("response_format.")
        assert backend in str(written) and written.reason in str(written)
    else:
        assert written == expected


def test_a_regex_on_llamacpp_is_refused_with_the_grammar_as_the_way_out() -> None:
    error = constraint_fields(REGEX, PROFILES["llamacpp"])
    assert isinstance(error, UnsupportedOptionError)
    assert error.option == "response_format.regex"
    assert "unconstrained" in error.reason and "GBNF" in error.reason
    assert "[0-9]" not in str(error)  # never the caller's value


def test_a_grammar_refusal_names_the_syntaxes_the_row_takes() -> None:
    error = constraint_fields(LARK, PROFILES["sglang"])
    assert isinstance(error, UnsupportedOptionError)
    assert "ebnf" in error.reason and "lark" in error.reason


def test_json_and_text_formats_are_not_written_here() -> None:
    for fmt in (
        ChatResponseFormat.TEXT,
        ChatResponseFormat.JSON,
        ChatResponseFormat.json_schema(SCHEMA),
    ):
        assert constraint_fields(fmt, PROFILES["vllm"]) == {}


def test_dotted_keys_nest_and_merge_under_the_same_parent() -> None:
    assert nested("a.b.c", 1) == {"a": {"b": {"c": 1}}}
    body: dict[str, Any] = {"structured_outputs": {"disable_any_whitespace": True}, "x": 1}
    merge_fields(body, {"structured_outputs": {"regex": "a"}})
    assert body == {"structured_outputs": {"disable_any_whitespace": True, "regex": "a"}, "x": 1}


def test_form_names() -> None:
    assert [form_of(f) for f in (REGEX, CHOICE, GBNF, LARK)] == [
        "regex", "choice", "grammar:gbnf", "grammar:lark",
    ]  # fmt: skip


# --- whole requests -----------------------------------------------------------------------------


def test_nothing_to_plan_for_a_plain_request() -> None:
    assert not wants_plan(ChatOptions())
    assert not wants_plan(ChatOptions(response_format=ChatResponseFormat.TEXT))
    assert not wants_plan(ChatOptions(additional_properties={"top_k": 3}))
    assert wants_plan(ChatOptions(additional_properties={"guided_regex": "a"}))
    assert wants_plan(ChatOptions(response_format=ChatResponseFormat.JSON))


@pytest.mark.parametrize(
    ("key", "value", "fmt"),
    [
        ("guided_json", SCHEMA, ChatResponseFormat.json_schema(SCHEMA)),
        ("guided_json", '{"type": "object"}', ChatResponseFormat.json_schema({"type": "object"})),
        ("guided_regex", "[a-z]+", ChatResponseFormat.regex("[a-z]+")),
        ("guided_choice", ["a", "b"], ChatResponseFormat.choice(["a", "b"])),
        ("guided_grammar", 'root ::= "a"', ChatResponseFormat.grammar('root ::= "a"', "ebnf")),
    ],
)
def test_guided_keys_become_vllms_structured_outputs(
    key: str, value: Any, fmt: ChatResponseFormat
) -> None:
    plan = plan_constraints(
        ChatOptions(additional_properties={key: value, "top_k": 2}), PROFILES["vllm"]
    )
    assert plan.refusals == ()
    assert plan.sent == fmt
    assert plan.extras == {"top_k": 2}  # the old key is never sent: vLLM ignores it
    if fmt.is_constraint:
        assert list(plan.fields) == ["structured_outputs"]
    assert plan.checked == (fmt if fmt.kind != "grammar" else None)


def test_guided_keys_become_sglangs_native_keys_or_are_refused() -> None:
    sglang = PROFILES["sglang"]
    regex = plan_constraints(ChatOptions(additional_properties={"guided_regex": "a+"}), sglang)
    assert regex.fields == {"regex": "a+"} and regex.extras == {}
    choice = plan_constraints(
        ChatOptions(additional_properties={"guided_choice": ["a", "b"]}), sglang
    )
    assert choice.fields == {"regex": "(?:a|b)"}
    grammar = plan_constraints(
        ChatOptions(additional_properties={"guided_grammar": "r ::= x"}), sglang
    )
    assert grammar.fields == {"ebnf": "r ::= x"}


def test_a_guided_regex_on_llamacpp_is_refused_and_never_sent() -> None:
    plan = plan_constraints(
        ChatOptions(additional_properties={"guided_regex": "a+"}), PROFILES["llamacpp"]
    )
    assert plan.sent is None and plan.extras == {}
    (error,) = plan.refusals
    assert error.option == "additional_properties.guided_regex" and error.backend == "llamacpp"


def test_a_guided_choice_on_llamacpp_becomes_a_gbnf_grammar() -> None:
    plan = plan_constraints(
        ChatOptions(additional_properties={"guided_choice": ["x", "y"]}), PROFILES["llamacpp"]
    )
    assert plan.fields == {"grammar": 'root ::= "x" | "y"'} and plan.refusals == ()


def test_a_guided_key_with_a_bad_value_is_refused() -> None:
    plan = plan_constraints(
        ChatOptions(additional_properties={"guided_json": [1]}), PROFILES["vllm"]
    )
    (error,) = plan.refusals
    assert "guided_json" in error.reason and plan.extras == {}


def test_a_generic_server_gets_the_callers_keys_as_they_are() -> None:
    extras = {"guided_regex": "a+", "grammar": "g"}
    plan = plan_constraints(
        ChatOptions(response_format=ChatResponseFormat.JSON, additional_properties=extras),
        PROFILES["generic"],
    )
    assert plan.extras == extras and plan.refusals == ()


@pytest.mark.parametrize("backend", ["llamacpp", "sglang", "vllm", "llama-cpp-python"])
@pytest.mark.parametrize(
    "extra",
    [
        {"grammar": 'root ::= "a"'},
        {"regex": "a"},
        {"ebnf": "x"},
        {"guided_regex": "a"},
        {"structured_outputs": {"regex": "a"}},
    ],
)
def test_a_json_schema_and_a_second_constraint_are_refused(
    backend: str, extra: dict[str, Any]
) -> None:
    for fmt in (ChatResponseFormat.json_schema(SCHEMA), ChatResponseFormat.JSON):
        plan = plan_constraints(
            ChatOptions(response_format=fmt, additional_properties=dict(extra)), PROFILES[backend]
        )
        (error,) = plan.refusals
        assert error.option == f"additional_properties.{next(iter(extra))}"
        assert "one at a time" in error.reason
        assert plan.sent == fmt and plan.extras == {}  # the JSON stays, the second goes


def test_structured_outputs_options_beside_a_schema_are_not_a_second_constraint() -> None:
    extras = {"structured_outputs": {"disable_any_whitespace": True}}
    plan = plan_constraints(
        ChatOptions(
            response_format=ChatResponseFormat.json_schema(SCHEMA), additional_properties=extras
        ),
        PROFILES["vllm"],
    )
    assert plan.refusals == () and plan.extras == extras


def test_two_extra_constraints_are_refused_too() -> None:
    plan = plan_constraints(
        ChatOptions(additional_properties={"grammar": "g", "json_schema": SCHEMA}),
        PROFILES["llamacpp"],
    )
    (error,) = plan.refusals
    assert error.option == "additional_properties.json_schema" and plan.extras == {"grammar": "g"}


def test_a_regex_refused_leaves_nothing_to_check() -> None:
    plan = plan_constraints(ChatOptions(response_format=REGEX), PROFILES["llamacpp"])
    assert plan.sent is None and plan.checked is None and len(plan.refusals) == 1


# --- the honours table --------------------------------------------------------------------------


def test_every_backend_and_form_has_one_verdict() -> None:
    verdicts = constraint_verdicts()
    cells = {(v.backend, v.option) for v in verdicts}
    assert len(cells) == len(verdicts) == len(PROFILES) * len(FORMS)


def _verdict(backend: str, option: str) -> Any:
    (found,) = [v for v in constraint_verdicts() if v.backend == backend and v.option == option]
    return found


def test_the_verdicts_follow_the_rows() -> None:
    assert _verdict("llamacpp", "response_format.regex").verdict == "refused"
    choice = _verdict("llamacpp", "response_format.choice")
    assert (choice.verdict, choice.wire) == ("honoured", "grammar") and "GBNF" in choice.note
    assert _verdict("sglang", "response_format.choice").wire == "regex"
    assert _verdict("vllm", "response_format.grammar.lark").wire == "structured_outputs.grammar"
    assert "not checked" in _verdict("vllm", "response_format.grammar.gbnf").note
    assert _verdict("llama-cpp-python", "response_format.json_schema").wire.startswith(
        "response_format.schema"
    )
    generic = _verdict("generic", "response_format.json_schema")
    assert generic.verdict == "enforced here" and "ConstraintViolationError" in generic.note
    assert _verdict("openai", "response_format.json_schema").verdict == "honoured"
    for verdict in constraint_verdicts():
        if verdict.verdict == "refused":
            assert verdict.note and not verdict.wire
        else:
            assert re.fullmatch(r"[a-z_.]+( \(type json_object\))?(, [a-z_.]+)*", verdict.wire)
