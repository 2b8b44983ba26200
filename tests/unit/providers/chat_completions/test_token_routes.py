"""The tokenizer rows: data, one per backend that has a route."""

from __future__ import annotations

from providers.backends import PROFILES
from providers.chat_completions.token_routes import TOKENIZE_ROUTES, tokenize_route_for


def test_each_row_names_a_backend_of_the_backend_table() -> None:
    assert set(TOKENIZE_ROUTES) <= set(PROFILES)


def test_only_a_chat_or_template_route_is_exact() -> None:
    for route in TOKENIZE_ROUTES.values():
        assert route.exact == (route.form in ("chat", "template"))
        assert (route.template_path is not None) == (route.form == "template")


def test_the_rows_follow_the_servers_sources() -> None:
    vllm, llama, sglang = (tokenize_route_for(name) for name in ("VLLM", "llamacpp", "sglang"))
    assert vllm is not None and vllm.reports_context and vllm.path == "/tokenize"
    assert llama is not None and llama.template_path == "/apply-template"
    assert llama.text_field == "content"
    assert sglang is not None and not sglang.reports_context and sglang.text_field == "prompt"
    assert tokenize_route_for("ollama") is None and tokenize_route_for(None) is None
