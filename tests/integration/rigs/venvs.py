"""Build and cache the virtualenvs the real vLLM and SGLang servers run in.

vLLM and SGLang pin different versions of ``transformers``, ``openai`` and ``xgrammar``, and
neither belongs in our dev environment (several GB each), so each server gets its own venv:

    python = rig_venv("vllm-0.33.0", VLLM_STEPS) / "bin" / "python"

A venv lives in ``$OAICOMPAT_RIG_CACHE`` (default ``~/.cache/oaicompat/rigs``) under
``<name>-<hash>``, where the hash covers what the steps do: the pip arguments, the source of each
callable step, and the content of the files a callable step copies (declared with
:func:`copies`). Changing a pin, a step or a copied file builds a new venv instead of patching
an old one in place. A marker file written after the last step tells a finished venv from one
whose build was interrupted; the latter is deleted and rebuilt. An ``fcntl`` lock next to the
folder keeps two pytest processes (xdist workers, two terminals) from building the same venv at
once: the second waits, then finds the marker.

Every failure (no network, a missing wheel, a step that raises) becomes :class:`RigUnavailable`
carrying the command and the tail of its output, so a fixture can skip (or fail on CI) with a
reason a person can act on.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import inspect
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar

__all__ = ["RigUnavailable", "Step", "copies", "rig_cache_dir", "rig_venv", "venv_python"]

Step = Sequence[str] | Callable[[Path], None]
"""One build step: pip arguments (run as ``<venv>/bin/python -m pip install <args>``), or a
callable given the venv folder (to write a stub package, check an import, …)."""

CACHE_ENV = "OAICOMPAT_RIG_CACHE"
COMPLETE_MARKER = ".oaicompat-rig-complete"
BUILD_LOG = ".oaicompat-rig-build.log"
_TAIL_LINES = 40
_COPIED = "__rig_copies__"

StepFunction = TypeVar("StepFunction", bound=Callable[[Path], None])


class RigUnavailable(Exception):
    """The rig cannot be built here; ``str()`` is the reason."""


def rig_cache_dir() -> Path:
    """``$OAICOMPAT_RIG_CACHE``, or ``~/.cache/oaicompat/rigs``; created if missing."""
    configured = os.environ.get(CACHE_ENV)
    path = Path(configured) if configured else Path.home() / ".cache" / "oaicompat" / "rigs"
    path.mkdir(parents=True, exist_ok=True)
    return path


def venv_python(venv: Path) -> Path:
    """The interpreter of a venv made by :func:`rig_venv`."""
    return venv / "bin" / "python"


def copies(*sources: Path) -> Callable[[StepFunction], StepFunction]:
    """Declare the files or folders a callable step copies into the venv, so that their content
    is part of the cache key (a callable's own source is in it anyway)."""

    def declare(step: StepFunction) -> StepFunction:
        setattr(step, _COPIED, sources)
        return step

    return declare


def _content_digest(source: Path) -> str:
    """Every file under ``source`` (byte code left out): relative path and bytes."""
    digest = hashlib.sha256()
    files = [source] if source.is_file() else sorted(source.rglob("*"))
    for file in files:
        if not file.is_file() or "__pycache__" in file.parts or file.suffix == ".pyc":
            continue
        name = file.name if file == source else file.relative_to(source).as_posix()
        digest.update(name.encode("utf-8") + b"\0" + file.read_bytes() + b"\0")
    return digest.hexdigest()


def _step_identity(step: Step) -> list[str] | str:
    """What of a step goes into the cache key: a pip step's arguments; a callable's module,
    qualified name and source, and the content of what it copies (:func:`copies`).

    Only the callable's own source counts, not that of the helpers it calls: a change there
    needs a change in the step too (a comment will do) to rebuild existing caches.
    """
    if not callable(step):
        return list(step)
    try:
        source = inspect.getsource(step)
    except (OSError, TypeError) as exc:  # no source file: the key could not see a change
        raise ValueError(f"rig step {step!r} has no readable source to hash") from exc
    digest = hashlib.sha256(source.encode("utf-8"))
    for copied in getattr(step, _COPIED, ()):
        digest.update(_content_digest(Path(copied)).encode("ascii"))
    return f"callable:{step.__module__}.{step.__qualname__}:{digest.hexdigest()[:16]}"


def _steps_hash(steps: Sequence[Step], python: str) -> str:
    """The cache key. The interpreter is named by its real path: ``.venv/bin/python`` and
    ``.venv/bin/python3`` (pytest's ``sys.executable``) are the same interpreter and must not
    build two multi-GB venvs."""
    interpreter = os.path.realpath(python)
    key = json.dumps({"python": interpreter, "steps": [_step_identity(s) for s in steps]})
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]


def _log(name: str, message: str) -> None:
    """Progress on stderr: a cold build takes minutes, and silence looks like a hang."""
    print(f"[rig {name}] {message}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def _locked(lock_file: Path, name: str) -> Iterator[None]:
    with open(lock_file, "a+b") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            _log(name, f"another process is building it; waiting for {lock_file}")
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _tail(text: str, lines: int = _TAIL_LINES) -> str:
    return "\n".join(text.splitlines()[-lines:])


def _run(name: str, command: Sequence[str], log_file: Path) -> None:
    """Run one command, appending its output to the build log; raise with its tail on failure."""
    started = time.monotonic()
    shown = " ".join(command)
    _log(name, f"$ {shown}")
    try:
        completed = subprocess.run(
            list(command),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            check=False,
        )
    except OSError as exc:
        raise RigUnavailable(f"{name}: cannot run {shown}: {exc}") from exc
    output = completed.stdout.decode("utf-8", errors="replace")
    with open(log_file, "a", encoding="utf-8") as log:
        log.write(f"$ {shown}\n{output}\n")
    if completed.returncode != 0:
        raise RigUnavailable(
            f"{name}: `{shown}` exited with {completed.returncode} (full log: {log_file})\n"
            f"--- output tail ---\n{_tail(output)}"
        )
    _log(name, f"done in {time.monotonic() - started:.1f} s")


def _build(name: str, venv: Path, steps: Sequence[Step], python: str) -> None:
    log_file = venv.parent / f"{venv.name}{BUILD_LOG}"
    log_file.write_text("", encoding="utf-8")
    _run(name, [python, "-m", "venv", str(venv)], log_file)
    pip = [str(venv_python(venv)), "-m", "pip", "install", "--disable-pip-version-check"]
    for index, step in enumerate(steps, start=1):
        _log(name, f"step {index}/{len(steps)}")
        if callable(step):
            try:
                step(venv)
            except RigUnavailable:
                raise
            except Exception as exc:
                what = f"{step.__module__}.{step.__qualname__}"
                raise RigUnavailable(f"{name}: step {what} failed: {exc!r}") from exc
        else:
            _run(name, [*pip, *step], log_file)
    shutil.move(str(log_file), str(venv / BUILD_LOG))


def rig_venv(name: str, steps: Sequence[Step], *, python: str = sys.executable) -> Path:
    """The folder of a venv built with ``steps`` (built on first call, cached afterwards).

    ``python`` creates the venv (``python -m venv``); a venv's interpreter works, since
    ``venv`` bases the new one on the underlying installation. Raises :class:`RigUnavailable`
    when any step fails; the half-built folder is then deleted, so the next call retries.
    """
    if not name or "/" in name:
        raise ValueError(f"rig_venv: bad name {name!r}")
    root = rig_cache_dir()
    venv = root / f"{name}-{_steps_hash(steps, python)}"
    marker = venv / COMPLETE_MARKER
    if marker.is_file():
        return venv
    with _locked(root / f"{venv.name}.lock", name):
        if marker.is_file():  # built by the process we waited for
            return venv
        if venv.exists():
            _log(name, f"removing the half-built {venv}")
            shutil.rmtree(venv)
        _log(name, f"building {venv} ({len(steps)} steps; this takes minutes)")
        started = time.monotonic()
        try:
            _build(name, venv, steps, python)
        except BaseException:
            shutil.rmtree(venv, ignore_errors=True)
            raise
        elapsed = time.monotonic() - started
        marker.write_text(
            json.dumps({"name": name, "seconds": round(elapsed, 1), "built_at": time.time()}),
            encoding="utf-8",
        )
        _log(name, f"built in {elapsed:.0f} s")
    return venv
