"""``torchvision.transforms.v2.functional``: ``InterpolationMode`` again, stand-ins for the rest."""

from __future__ import annotations

from ..._unavailable import unavailable_names
from ..functional import InterpolationMode

__all__ = ["InterpolationMode"]

__getattr__ = unavailable_names(__name__)
