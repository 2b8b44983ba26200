"""The rerank rows: data, one per backend, with a cautious default."""

from __future__ import annotations

from providers.backends import PROFILES
from providers.rerank.routes import RERANK_ROUTES, VLLM_SCORE, rerank_route_for


def test_each_row_names_a_backend_of_the_backend_table() -> None:
    assert set(RERANK_ROUTES) <= set(PROFILES)


def test_score_kinds_follow_the_servers_sources() -> None:
    assert rerank_route_for("llamacpp").score_kind == "logit"
    assert rerank_route_for("VLLM").score_kind == "probability"
    assert rerank_route_for("sglang").score_kind == "unknown"
    assert VLLM_SCORE.form == "score" and not VLLM_SCORE.sends_top_n


def test_an_unknown_backend_gets_the_generic_row() -> None:
    assert rerank_route_for("someserver") == RERANK_ROUTES["generic"]
    assert rerank_route_for(None).path == "/v1/rerank"
    assert rerank_route_for(None).score_kind == "unknown"
