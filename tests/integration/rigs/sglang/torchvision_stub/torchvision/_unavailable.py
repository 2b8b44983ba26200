"""The one behaviour of the stub: every name exists, and nothing works.

SGLang imports ``torchvision`` (and names from it) at module level in its multimodal code, which
the text-only server loads anyway; the rig never processes an image or a video. PyPI has no CPU
torchvision for the CPU torch the rig uses, and its CUDA build fails at import time
("operator torchvision::nms does not exist"), so the venv gets this package instead.

A module that ends with ``__getattr__ = unavailable_names(__name__)`` hands out, for any name,
a class that can be subclassed, referenced in default arguments and stored, but raises as soon
as it is instantiated: a rig that really needed torchvision fails loudly, never silently.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class TorchvisionStubError(RuntimeError):
    """Raised by anything in the stub that would do real work."""


class Unavailable:
    """Base of every stand-in: instantiating or calling one raises."""

    qualified_name = "torchvision"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TorchvisionStubError(
            f"{self.qualified_name} is not available: this venv has an import-only "
            "torchvision stub (the oaicompat SGLang rig serves text only)"
        )


def unavailable_names(module: str) -> Callable[[str], type[Unavailable]]:
    """A module-level ``__getattr__`` giving a stand-in class for any public name."""

    def __getattr__(name: str) -> type[Unavailable]:
        if name.startswith("__"):  # dunder probes (__path__, __wrapped__…) must stay missing
            raise AttributeError(name)
        return type(name, (Unavailable,), {"qualified_name": f"{module}.{name}"})

    return __getattr__
