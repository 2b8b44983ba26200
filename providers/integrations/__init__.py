"""Adapters that put oaicompat under agent frameworks, one optional extra each.

Each adapter lives in its own module or package (``providers.integrations.agent_framework``,
``providers.integrations.pydantic_ai``…) and imports its framework; this root imports none of
them, so ``import providers`` never needs a framework installed and a missing extra shows up as
an ``ImportError`` naming the extra only where that adapter is imported.
"""

__all__: list[str] = []
