"""oaicompat as a pydantic-ai model (extra ``pydantic-ai``): ``OaicompatModel``."""

from providers.integrations.pydantic_ai._model import OaicompatModel

__all__ = ["OaicompatModel"]
