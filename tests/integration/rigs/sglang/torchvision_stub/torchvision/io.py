"""``torchvision.io`` names (``decode_jpeg``, ``read_image``, ``ImageReadMode``…): stand-ins."""

from __future__ import annotations

from ._unavailable import unavailable_names

__getattr__ = unavailable_names(__name__)
