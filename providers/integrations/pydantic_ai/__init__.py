"""oaicompat as a pydantic-ai model (extra ``pydantic-ai``): ``OaicompatModel``."""

from providers.integrations.pydantic_ai.model import OaicompatModel

__all__ = ["OaicompatModel"]
