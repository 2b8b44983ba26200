"""``torchvision.transforms``: ``InterpolationMode`` is real (SGLang reads its members at import
time, as default arguments); every other name is a stand-in that raises when used."""

from __future__ import annotations

from .._unavailable import unavailable_names
from . import functional, v2
from .functional import InterpolationMode

__all__ = ["InterpolationMode", "functional", "v2"]

__getattr__ = unavailable_names(__name__)
