"""A request's ``model`` names a role, a backend or a served id; anything else is a 404."""

from __future__ import annotations

import pytest

from providers.abstractions.errors import ModelNotFoundError
from providers.config.schema import OaicompatConfig
from providers.gateway.model_table import ModelTable

CONFIG = OaicompatConfig.model_validate(
    {
        "backends": {
            "gpu": {"base_url": "http://gpu:8000", "model_id": "Qwen/Qwen3-8B"},
            "local": {"base_url": "http://127.0.0.1:8080", "model_id": "main"},
        },
        "roles": {"main": {"backend": "gpu", "fallback": "local"}, "small": "local"},
    }
)


def test_roles_then_backends_are_listed_in_the_files_order() -> None:
    table = ModelTable(CONFIG)
    assert [(e.name, e.target, e.backend) for e in table] == [
        ("main", "main", "gpu"),
        ("small", "small", "local"),
        ("gpu", "gpu", "gpu"),
        ("local", "local", "local"),
    ]


def test_a_served_id_goes_to_the_first_role_of_its_backend() -> None:
    assert ModelTable(CONFIG).entry("Qwen/Qwen3-8B").name == "main"


def test_a_name_wins_over_a_served_id_that_spells_it() -> None:
    # `local` serves a model it calls "main": the role named main is still the role.
    assert ModelTable(CONFIG).entry("main").target == "main"


def test_an_unknown_model_is_a_404_listing_what_exists() -> None:
    with pytest.raises(ModelNotFoundError) as caught:
        ModelTable(CONFIG).entry("gpt-4o")
    error = caught.value
    assert (error.status, error.param, error.code) == (404, "model", "model_not_found")
    assert "main, small, gpu, local" in str(error)


def test_the_listing_is_openais_shape() -> None:
    listing = ModelTable(CONFIG).listing(7)
    assert listing["object"] == "list"
    assert listing["data"][0] == {"id": "main", "object": "model", "created": 7, "owned_by": "gpu"}
