"""``providers.backends.PROFILES`` is the one backend table: each row is complete, every name it
uses exists where it is read, the derived views agree with it, and detection can find it."""

from __future__ import annotations

from dataclasses import fields
from typing import Any, get_args

import httpx
import pytest
import respx

from capabilities import TRAITS, detect_backend, traits_for
from capabilities.backend import Backend as CapabilitiesBackend
from capabilities.models import Source
from capabilities.payloads import PARSERS
from capabilities.probes import PROBES
from providers.backends import PROFILES, Backend, BackendProfile, TimingsKind, profile_for
from providers.responses import RESPONSES_QUIRKS, responses_quirks_for
from providers.transport.endpoint import Endpoint
from telemetry.extractors import BY_TIMINGS_KIND, TIMINGS_KINDS, extractor_for
from tests.unit.capabilities.fakes import SETUPS, mount

CONSTANTS = {
    value for name, value in vars(Backend).items() if name.isupper() and isinstance(value, str)
}

NOT_FINGERPRINTED = {
    Backend.GENERIC: "what detection answers when no fingerprint matched",
}
"""Rows detection cannot find from a server's answers, and why (``capabilities/detect.py``)."""

BY_HOST = {Backend.OPENAI: "https://api.openai.com/v1"}
"""Rows detection finds from the configured host, without a request."""


def test_every_backend_constant_has_a_row_and_every_row_a_constant() -> None:
    assert set(PROFILES) == CONSTANTS
    assert CapabilitiesBackend is Backend  # one set of names, re-exported by capabilities


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_each_row_is_keyed_by_its_own_lower_case_name(name: str) -> None:
    assert PROFILES[name].name == name == name.lower()
    assert profile_for(name.upper()) is PROFILES[name]


def _is_set(value: Any) -> bool:
    if isinstance(value, bool):
        return True
    if isinstance(value, int):  # a limit (embedding_batch_limit)
        return value > 0
    if isinstance(value, str):
        return value.strip() == value != ""
    if isinstance(value, tuple):  # of names, or of (form, key) pairs (constraint_keys)
        return all(isinstance(v, str | tuple) and _is_set(v) for v in value)
    return False


_MAY_BE_NONE = frozenset({"effort_field", "include_reasoning_field", "embedding_batch_limit"})
"""Fields where ``None`` is a value: "the server has no such key" (or no known limit)."""


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_every_field_of_every_row_is_set(name: str) -> None:
    row = PROFILES[name]
    unset = [
        f.name
        for f in fields(BackendProfile)
        if not _is_set(getattr(row, f.name))
        and not (f.name in _MAY_BE_NONE and getattr(row, f.name) is None)
    ]
    assert unset == []


def test_base64_is_asked_only_of_the_servers_known_to_honour_it() -> None:
    asking = {name for name, row in PROFILES.items() if row.embedding_encoding == "base64"}
    assert asking == {
        Backend.LLAMACPP,
        Backend.VLLM,
        Backend.SGLANG,
        Backend.OLLAMA,
        Backend.OPENAI,
    }
    assert PROFILES[Backend.GENERIC].embedding_encoding == "float"  # every server takes it


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_probe_names_are_probes_capabilities_runs_and_parses(name: str) -> None:
    for probe in PROFILES[name].probes:
        assert probe in PROBES, f"{name}: no ProbeSpec for {probe!r} in capabilities.probes"
        assert probe in PARSERS, f"{name}: no parser for {probe!r} in capabilities.payloads"
    assert Source.MODELS not in PROFILES[name].probes  # every backend gets it anyway


def test_every_timings_kind_resolves_to_an_extractor() -> None:
    assert set(TIMINGS_KINDS) == set(BY_TIMINGS_KIND) == set(get_args(TimingsKind))


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_each_rows_timings_key_picks_its_extractor(name: str) -> None:
    row = PROFILES[name]
    extractor = extractor_for(name)
    assert extractor == BY_TIMINGS_KIND[row.timings](name)
    assert extractor.backend == name
    assert extractor == extractor_for(row)


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_the_derived_views_agree_with_the_row(name: str) -> None:
    row = PROFILES[name]
    traits = traits_for(name)
    assert (traits.name, traits.probes, traits.model_field_ignored) == (
        name,
        row.probes,
        row.model_field_ignored,
    )
    quirks = responses_quirks_for(name)
    assert (quirks.name, quirks.replays_function_calls) == (name, row.replays_function_calls)


def test_the_views_have_exactly_the_tables_rows() -> None:
    assert set(TRAITS) == set(RESPONSES_QUIRKS) == set(PROFILES)


def test_unknown_backends_get_the_cautious_generic_facts() -> None:
    assert profile_for("a-new-server") is PROFILES[Backend.GENERIC]
    assert traits_for("a-new-server").probes == ()
    assert responses_quirks_for("a-new-server") is RESPONSES_QUIRKS[Backend.GENERIC]
    assert extractor_for("a-new-server").backend == "a-new-server"  # type: ignore[attr-defined]


def test_every_row_is_fingerprinted_or_says_why_not() -> None:
    for name in PROFILES:
        if name in NOT_FINGERPRINTED or name in BY_HOST:
            continue
        assert name in SETUPS, f"{name}: no discovery transcripts to fingerprint it from"
    assert set(NOT_FINGERPRINTED) | set(BY_HOST) | set(SETUPS) == set(PROFILES)


ROOT = "http://gpu.test/llm"


@pytest.mark.parametrize("name", sorted(SETUPS))
async def test_detection_finds_each_backend_from_its_discovery_transcripts(name: str) -> None:
    with respx.mock(assert_all_called=False) as router:
        mount(router, ROOT, name)
        async with httpx.AsyncClient() as http:
            found = await detect_backend(http, Endpoint.from_base_url(f"{ROOT}/v1"))
    assert found.backend == name


@pytest.mark.parametrize("name", sorted(BY_HOST))
async def test_detection_finds_each_hosted_backend_by_its_host(name: str) -> None:
    with respx.mock(assert_all_called=False) as router:
        async with httpx.AsyncClient() as http:
            found = await detect_backend(http, Endpoint.from_base_url(BY_HOST[name]))
        assert not router.calls
    assert found.backend == name
