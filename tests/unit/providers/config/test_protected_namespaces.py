"""Loading a configuration is silent: no pydantic warns that ``model_id`` shadows its namespace.

pydantic before 2.10 warns, for each model class with a field named ``model_…``, that the field
shadows its protected ``model_`` namespace, once per process, whenever the class is built (with
2.6 on every configuration load and capability probe, issue 37 item 3). The bound is now 2.10 for
other reasons (pyproject.toml), and the models switch the namespace off all the same, so an
environment pinned lower stays quiet. The suite's pydantic no longer warns, so the guard is
structural: every configuration and capability model with such a field switches it off.
"""

from __future__ import annotations

import importlib
import pkgutil

import pytest
from pydantic import BaseModel

import capabilities
import providers.config


def _models() -> list[type[BaseModel]]:
    found: dict[str, type[BaseModel]] = {}
    for package in (providers.config, capabilities):
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            module = importlib.import_module(info.name)
            for value in vars(module).values():
                ours = isinstance(value, type) and value.__module__.startswith(
                    ("providers.", "capabilities.")
                )
                if ours and issubclass(value, BaseModel):
                    found[f"{value.__module__}.{value.__qualname__}"] = value
    return [found[name] for name in sorted(found)]


MODELS = _models()


def test_the_configuration_models_are_found() -> None:
    names = {model.__name__ for model in MODELS}
    assert {"BackendConfig", "OaicompatConfig", "CapabilityOverrides"} <= names


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_a_model_field_never_meets_the_protected_namespace(model: type[BaseModel]) -> None:
    shadowing = [name for name in model.model_fields if name.startswith("model_")]
    if shadowing:
        assert model.model_config.get("protected_namespaces") == (), (
            f"{model.__name__} has {shadowing}: set protected_namespaces=() in its model_config"
        )
