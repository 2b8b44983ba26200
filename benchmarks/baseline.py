"""``--baseline REV``: another git revision's library, measured beside the current one.

The revision's top-level packages (every directory with an ``__init__.py`` but ``benchmarks`` and
``tests``: ``providers``, ``capabilities``, ``telemetry``) are extracted with ``git archive`` into
a temporary directory. A measuring process for a baseline client puts that directory first on
``sys.path`` before anything imports the library (``use_tree``), and imports this directory's
``benchmarks`` as usual: the harness is the current one, the library is the revision's. The
wrappers in ``clients`` only use names the public API has exported at every revision, so they
work although the modules moved (``providers.client`` became ``providers.chat_completions.client``
in the layout change).
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchmarks.clients import Revision

__all__ = ["BaselineError", "checkout", "current_revision", "use_tree"]

_ROOT = Path(__file__).resolve().parent.parent
_NOT_LIBRARY = {"benchmarks", "tests"}
_LIBRARY = ("providers", "capabilities", "telemetry")


class BaselineError(ValueError):
    """``--baseline`` names no commit with a library: a usage error, not a crash."""


def _git(*args: str, input_bytes: bytes | None = None) -> bytes:
    done = subprocess.run(
        ["git", "-C", str(_ROOT), *args], input=input_bytes, capture_output=True, check=False
    )
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip()
        raise ValueError(f"git {' '.join(args)}: {message}")
    return done.stdout


def _text(*args: str) -> str:
    return _git(*args).decode().strip()


@contextmanager
def checkout(rev: str) -> Iterator[Revision]:
    """``rev``'s library in a temporary directory, removed on exit. ``BaselineError`` when
    ``rev`` is not a commit of this repository."""
    try:
        commit = _text("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    except ValueError:
        raise BaselineError(f"--baseline {rev}: not a commit of this repository") from None
    describe = _text("describe", "--always", "--tags", commit)
    packages = [
        name
        for name in _text("ls-tree", "--name-only", "-d", commit).splitlines()
        if name not in _NOT_LIBRARY and _has_file(commit, f"{name}/__init__.py")
    ]
    if "providers" not in packages:
        raise BaselineError(f"--baseline {rev}: no providers package at {commit[:12]}")
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", rev)
    with tempfile.TemporaryDirectory(prefix=f"oaicompat-bench-{safe}-") as directory:
        archive = _git("archive", "--format=tar", commit, "--", *packages)
        subprocess.run(["tar", "-x", "-C", directory], input=archive, check=True)
        yield Revision(rev, commit, describe, Path(directory))


def _has_file(commit: str, path: str) -> bool:
    try:
        _git("cat-file", "-e", f"{commit}:{path}")
    except ValueError:
        return False
    return True


def current_revision() -> dict[str, Any]:
    """Where the current rows' library comes from: the work tree at ``HEAD``, and whether its
    library packages differ from ``HEAD`` (then uncommitted code was measured)."""
    try:
        commit = _text("rev-parse", "HEAD")
        describe = _text("describe", "--always", "--tags", "--dirty")
        changed = _text("status", "--porcelain", "--", *_LIBRARY)
    except (OSError, ValueError):
        return {"commit": None, "describe": None, "library_uncommitted": None}
    return {"commit": commit, "describe": describe, "library_uncommitted": bool(changed)}


def use_tree(tree: str | None) -> None:
    """In a measuring process: import the library from ``tree`` (``None``: the current one).

    Raises when the library was already imported, or resolves elsewhere: a baseline row must never
    silently measure the current code.
    """
    if tree is None:
        return
    loaded = [name for name in ("providers", "telemetry", "capabilities") if name in sys.modules]
    if loaded:
        raise RuntimeError(f"{loaded} imported before the baseline tree was put on sys.path")
    sys.path.insert(0, tree)
    import providers

    origin = Path(providers.__file__ or "").resolve()
    if not origin.is_relative_to(Path(tree).resolve()):
        raise RuntimeError(f"providers resolved to {origin}, not to the baseline tree {tree}")
