"""``torchvision.transforms.v2``: stand-ins only."""

from __future__ import annotations

from ..._unavailable import unavailable_names
from . import functional

__all__ = ["functional"]

__getattr__ = unavailable_names(__name__)
