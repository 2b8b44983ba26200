"""Import-only stand-in for ``torchvision`` in the SGLang rig venv; see ``_unavailable``.

Written for the oaicompat test rig, not derived from torchvision. The version marks it as a
stub wherever a version is printed.
"""

from __future__ import annotations

from . import io, transforms
from ._unavailable import unavailable_names

__all__ = ["io", "transforms"]
__version__ = "0.0.0+oaicompat.stub"

__getattr__ = unavailable_names(__name__)
