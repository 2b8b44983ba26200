"""What the vLLM and SGLang rig servers share: a real server whose model is a script.

Both run ``python -m <serve module>`` with the rig venv's interpreter and this checkout on
``PYTHONPATH`` (the dev venv never imports vLLM or SGLang), and both replace the model by a
scripted stand-in (``vllm/fake_engine.py``, ``sglang/fake_scheduler.py``) that talks to the test
through two files in the server's work folder:

* ``script.json``, ``{"text": ...}``: the text the "model" emits (then end-of-sequence) for
  each request from now on, written with :meth:`ScriptedServer.script`;
* ``prompts.jsonl``: one JSON line per request, the prompt as the model was given it and its
  token count (``prompt``, ``prompt_tokens``) plus what each stand-in adds, read back with
  :meth:`ScriptedServer.prompts` as that server's record type.

The environment variables naming those files are the stand-ins' contract
(``OAICOMPAT_RIG_*``, defined again on their side, which runs in the rig venv).

:func:`scripted_rig` builds a rig for the server pool (``rigs/pool.py``): its venv, the
weightless model folders, and a server per :class:`ServerSet`.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from tests.integration.rigs.hf_models import MODELS, weightless_models
from tests.integration.rigs.process import LoopbackServer
from tests.integration.rigs.venvs import Step, rig_cache_dir, rig_venv, venv_python

__all__ = [
    "PROJECT_ROOT",
    "ReceivedRequest",
    "RecordT",
    "ScriptedServer",
    "ServerSet",
    "scripted_rig",
]

PROJECT_ROOT = Path(__file__).resolve().parents[3]
SCRIPT_FILE_ENV = "OAICOMPAT_RIG_SCRIPT_FILE"
PROMPT_LOG_ENV = "OAICOMPAT_RIG_PROMPT_LOG"
STEP_SECONDS_ENV = "OAICOMPAT_RIG_STEP_SECONDS"


@dataclass(frozen=True)
class ReceivedRequest:
    """One request as the scripted model saw it: what every rig's prompt log records."""

    prompt: str
    """The rendered prompt, decoded from the ids the model got (special tokens kept)."""
    prompt_tokens: int


RecordT = TypeVar("RecordT", bound=ReceivedRequest)


class ScriptedServer(LoopbackServer, Generic[RecordT]):
    """A rig server run from its venv's ``python`` on ``model_dir``, served as
    ``served_model_name`` with a context of ``context_length`` tokens; ``extra_args`` are more
    flags (parsers…), ``env`` more environment variables. ``step_seconds`` paces the scripted
    tokens, so streams arrive over time as from a model.

    A subclass gives the flags (:attr:`args`), its own environment
    (:meth:`server_environment`) and reads a prompt-log line into its record type
    (:meth:`record`). Requests logged before the server became ready (SGLang's warm-up) are
    not in :meth:`prompts`.
    """

    serve_module: ClassVar[str] = ""
    default_step_seconds: ClassVar[float] = 0.01
    default_startup_timeout: ClassVar[float] = 300.0

    def __init__(
        self,
        python: Path,
        model_dir: Path,
        served_model_name: str,
        extra_args: Sequence[str] = (),
        *,
        context_length: int = 4096,
        env: Mapping[str, str] | None = None,
        port: int | None = None,
        step_seconds: float | None = None,
        startup_timeout: float | None = None,
        stop_timeout: float = 15.0,
    ) -> None:
        super().__init__(
            port=port,
            startup_timeout=(
                self.default_startup_timeout if startup_timeout is None else startup_timeout
            ),
            stop_timeout=stop_timeout,
            cwd=PROJECT_ROOT,
        )
        self.python = python
        self.model_dir = model_dir
        self.model_id = served_model_name
        self.extra_args = list(extra_args)
        self.context_length = context_length
        self.env = dict(env or {})
        self.step_seconds = self.default_step_seconds if step_seconds is None else step_seconds
        self._prompts_before_ready = 0

    @property
    def args(self) -> list[str]:
        """The server's flags."""
        raise NotImplementedError

    @property
    def argv(self) -> list[str]:
        return [str(self.python), "-m", self.serve_module, *self.args]

    def record(self, entry: Mapping[str, Any]) -> RecordT:
        """One line of the prompt log as this server's record type."""
        raise NotImplementedError

    def server_environment(self) -> dict[str, str]:
        """The subclass's variables (``env`` still overrides them)."""
        return {}

    def environment(self) -> dict[str, str]:
        return {
            "PYTHONPATH": str(PROJECT_ROOT),
            SCRIPT_FILE_ENV: str(self.path("script.json")),
            PROMPT_LOG_ENV: str(self.path("prompts.jsonl")),
            STEP_SECONDS_ENV: str(self.step_seconds),
            # Everything is local: never ask a model hub for the folder or its tokenizer.
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            **self.server_environment(),
            **self.env,
        }

    def before_launch(self) -> None:
        self._prompts_before_ready = 0

    def on_ready(self) -> None:
        self._prompts_before_ready = len(self._prompt_lines())

    def script(self, text: str) -> None:
        """Make the model emit ``text`` (then end-of-sequence) for the next requests.

        Written atomically (rename), so a request arriving meanwhile reads the old or the new
        text, never half of one.
        """
        target = self.path("script.json")
        tmp = target.with_suffix(".tmp")
        tmp.write_text(json.dumps({"text": text}), encoding="utf-8")
        tmp.replace(target)

    def prompts(self) -> list[RecordT]:
        """Every request the model got since the server became ready, oldest first."""
        lines = self._prompt_lines()[self._prompts_before_ready :]
        return [self.record(json.loads(line)) for line in lines if line]

    def _prompt_lines(self) -> list[str]:
        log = self.path("prompts.jsonl")
        return log.read_text(encoding="utf-8").splitlines() if log.is_file() else []


@dataclass(frozen=True)
class ServerSet:
    """One server configuration of a rig: the model folder (a key of ``hf_models.MODELS``),
    the server flags and any environment (vLLM switches its Responses store by environment)."""

    model: str
    flags: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)


def scripted_rig(
    venv_name: str,
    steps: Sequence[Step],
    kind: type[ScriptedServer[Any]],
    sets: Mapping[str, ServerSet],
) -> Callable[[], Callable[[str], ScriptedServer[Any]]]:
    """The ``build`` of a rig for the server pool: make the venv and the model folders
    (``RigUnavailable`` when they cannot be made), then give ``kind`` servers by set name."""

    def build() -> Callable[[str], ScriptedServer[Any]]:
        started = time.monotonic()
        python = venv_python(rig_venv(venv_name, steps))
        models = weightless_models(rig_cache_dir() / "models")
        print(f"[rig {venv_name}] ready in {time.monotonic() - started:.1f} s", file=sys.stderr)

        def server(name: str) -> ScriptedServer[Any]:
            chosen = sets[name]
            return kind(
                python,
                models[chosen.model],
                MODELS[chosen.model].served_name,
                chosen.flags,
                env=chosen.env,
            )

        return server

    return build
