"""Which pipeline a request's ``model`` names, and what ``GET /v1/models`` lists.

A client may send a role name (``main``), a backend name, or the model id a backend serves
(``Qwen/Qwen3-8B``): agents are often configured with the served id and cannot be told about
roles. Roles come first, so ``main`` with its fallback is what a role name gets; a served id
goes to the first role whose backend serves it, else to the backend itself. Names that clash
keep the first meaning in that order, so the table never depends on dict iteration luck.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from providers.abstractions.errors import ModelNotFoundError
from providers.abstractions.records import value_class
from providers.config.schema import OaicompatConfig

__all__ = ["ModelEntry", "ModelTable"]


@value_class(frozen=True)
class ModelEntry:
    """One name clients may send: ``name`` is listed, ``target`` is the role or backend whose
    pipeline answers, ``backend`` the backend behind it (for metrics and the listing)."""

    name: str
    target: str
    backend: str


class ModelTable:
    def __init__(self, config: OaicompatConfig) -> None:
        entries: dict[str, ModelEntry] = {}
        for role in config.roles:
            entries.setdefault(role, ModelEntry(role, role, config.backend_name(role)))
        for backend in config.backends:
            entries.setdefault(backend, ModelEntry(backend, backend, backend))
        self.listed: tuple[ModelEntry, ...] = tuple(entries.values())
        """Every role and backend, in the file's order: one pipeline each."""
        aliases: dict[str, ModelEntry] = {}
        for entry in self.listed:
            model_id = config.backends[entry.backend].model_id
            if model_id:
                aliases.setdefault(model_id, entry)
        self._by_name = {**aliases, **entries}

    def __iter__(self) -> Iterator[ModelEntry]:
        return iter(self.listed)

    def entry(self, model: str) -> ModelEntry:
        """The entry ``model`` names; ``ModelNotFoundError`` (a 404) listing what exists."""
        found = self._by_name.get(model)
        if found is None:
            names = ", ".join(entry.name for entry in self.listed) or "none"
            raise ModelNotFoundError(
                f"the model {model[:200]!r} does not exist here; available: {names}",
                status=404,
                param="model",
                error_type="invalid_request_error",
                code="model_not_found",
            )
        return found

    def listing(self, created: int) -> dict[str, Any]:
        """OpenAI's ``GET /v1/models`` answer."""
        return {"object": "list", "data": [self.model(e, created) for e in self.listed]}

    @staticmethod
    def model(entry: ModelEntry, created: int) -> dict[str, Any]:
        """One entry as OpenAI's model object; ``owned_by`` is the backend behind it."""
        return {"id": entry.name, "object": "model", "created": created, "owned_by": entry.backend}
