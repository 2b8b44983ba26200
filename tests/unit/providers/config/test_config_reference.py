"""The README's configuration reference is what ``providers.config.reference`` renders from the
models, so a field added, renamed or re-documented in code without regenerating fails here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from providers.config import BackendConfig, OaicompatConfig
from providers.config.reference import BEGIN, END, SECTIONS, render, splice

README = Path(__file__).resolve().parents[4] / "README.md"


def test_readme_reference_is_in_sync_with_the_models() -> None:
    text = README.read_text(encoding="utf-8")
    assert text == splice(text, render()), (
        "README.md's configuration reference is stale: run "
        "`python -m providers.config.reference --write README.md`"
    )


def test_every_field_of_every_reachable_model_is_documented() -> None:
    rendered = render()
    for _, model in SECTIONS:
        for name, field in model.model_fields.items():
            assert field.description, f"{model.__name__}.{name} has no attribute docstring"
            assert f"| `{name}` |" in rendered


def test_every_nested_model_has_a_section() -> None:
    """A new nested model (a mapping-typed field) must get its own table."""
    covered = {model for _, model in SECTIONS}
    for model in (OaicompatConfig, BackendConfig):
        for field in model.model_fields.values():
            for nested in _models_in(field.annotation):
                assert nested in covered, f"{nested.__name__} has no reference section"


def test_splice_needs_the_markers() -> None:
    assert splice(f"a\n{BEGIN}\nold\n{END}\nb", "new\n") == f"a\n{BEGIN}\nnew\n{END}\nb"
    with pytest.raises(ValueError, match="config-reference"):
        splice("no markers here", "new")


def _models_in(annotation: object) -> list[type]:
    import typing

    from pydantic import BaseModel

    found: list[type] = []
    stack = [annotation]
    while stack:
        current = stack.pop()
        if isinstance(current, type) and issubclass(current, BaseModel):
            found.append(current)
        stack.extend(typing.get_args(current))
    return found


def test_the_limits_defaults_the_reference_states_are_the_library_defaults() -> None:
    """``LimitsConfig`` documents each default in prose: it must say what ``Limits`` does."""
    from providers.abstractions.limits import DEFAULT_LIMITS
    from providers.config import LimitsConfig

    units = {"": 1, "KiB": 1024, "MiB": 1024 * 1024}
    for name, field in LimitsConfig.model_fields.items():
        match = re.search(r"\(default (\d+)(?: (KiB|MiB))?\)", field.description or "")
        assert match, f"LimitsConfig.{name} does not state its default"
        stated = int(match.group(1)) * units[match.group(2) or ""]
        assert stated == getattr(DEFAULT_LIMITS, name), name


def test_the_readme_configuration_example_loads(tmp_path: Path) -> None:
    from providers.config import load_config

    text = README.read_text(encoding="utf-8")
    example = text.split("Or from configuration", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "oaicompat.yaml"
    path.write_text(example, encoding="utf-8")
    config = load_config(path, env={"VLLM_API_KEY": "sk-x"})
    limits = config.limits_for(config.backend("main"))
    assert limits is not None and limits.max_tool_calls == 64
