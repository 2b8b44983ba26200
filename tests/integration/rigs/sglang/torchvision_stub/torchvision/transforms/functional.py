"""``torchvision.transforms.functional``: the ``InterpolationMode`` enum, stand-ins for the rest."""

from __future__ import annotations

from enum import Enum

from .._unavailable import unavailable_names

__all__ = ["InterpolationMode"]


class InterpolationMode(Enum):
    """The resampling filters, by the names torchvision gives them."""

    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


__getattr__ = unavailable_names(__name__)
