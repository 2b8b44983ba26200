"""Fixtures of the gateway's integration tests: the background loop, the Node SDK, vLLM.

The Node SDK is installed with ``npm ci`` from the committed ``node/package-lock.json`` into a
folder of the rig cache (``$OAICOMPAT_RIG_CACHE``, default ``~/.cache/oaicompat/rigs``) named
after the lock's hash, so the checkout stays clean and a second run installs nothing. Without
``node`` the Node tests skip, saying so; on CI (``CI`` set) a missing ``node`` and a failed
install fail them instead, as every unavailable server of the suite does.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.integration.gateway.harness import BackgroundLoop
from tests.integration.rigs.venvs import rig_cache_dir

# The scripted vLLM server of the vLLM suite, from the session's pool (shared with that suite).
from tests.integration.sglang.conftest import sglang_plain  # noqa: F401
from tests.integration.vllm.conftest import vllm_qwen3_hermes  # noqa: F401

NODE_DIR = Path(__file__).resolve().parent / "node"
_COMPLETE = ".oaicompat-node-complete"


@pytest.fixture(scope="session")
def background() -> Iterator[BackgroundLoop]:
    """The loop the gateways and the loopback fakes run on (a thread of its own)."""
    loop = BackgroundLoop()
    try:
        yield loop
    finally:
        loop.close()


@dataclass(frozen=True)
class NodeSdk:
    """``node`` and the ``node_modules`` folder holding the pinned ``openai`` package."""

    node: str
    modules: Path

    def chat(
        self, base_url: str, body: dict[str, Any], api_key: str = "unused", api: str = "chat"
    ) -> Any:
        """``node/chat.cjs``: one ``chat.completions.create(body)`` (``api="responses"``: one
        ``responses.create`` or ``responses.stream``); its JSON result."""
        request = {"baseURL": base_url, "apiKey": api_key, "body": body, "api": api}
        done = subprocess.run(
            [self.node, str(NODE_DIR / "chat.cjs")],
            input=json.dumps(request),
            env={**os.environ, "NODE_PATH": str(self.modules)},
            capture_output=True,
            text=True,
            timeout=90,
            check=False,
        )
        assert done.returncode == 0, f"node failed:\n{done.stderr}"
        return json.loads(done.stdout)


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (on CI the integration suite must run, not skip)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def node_sdk() -> NodeSdk:
    """The OpenAI Node SDK of ``node/package-lock.json``, installed once per lock."""
    node = shutil.which("node")
    if node is None:
        _unavailable("`node` is not installed: the OpenAI Node SDK tests need it")
        raise AssertionError("unreachable")
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail("`node` is installed but `npm` is not: cannot install the OpenAI Node SDK")
    manifest = (NODE_DIR / "package.json").read_bytes()
    lock = (NODE_DIR / "package-lock.json").read_bytes()
    digest = hashlib.sha256(manifest + b"\0" + lock).hexdigest()[:12]
    target = rig_cache_dir() / f"node-openai-{digest}"
    if not (target / _COMPLETE).is_file():
        _install(npm, manifest, lock, target)
    return NodeSdk(node, target / "node_modules")


def _install(npm: str, manifest: bytes, lock: bytes, target: Path) -> None:
    """``npm ci`` in a fresh folder, renamed into place once complete (a concurrent or
    interrupted install never leaves a half folder under the final name)."""
    staging = Path(tempfile.mkdtemp(prefix=f"{target.name}-", dir=target.parent))
    (staging / "package.json").write_bytes(manifest)
    (staging / "package-lock.json").write_bytes(lock)
    command = [npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund"]
    try:
        done = subprocess.run(
            command, cwd=staging, capture_output=True, text=True, timeout=600, check=False
        )
    except subprocess.TimeoutExpired:
        done = None
    if done is None or done.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        output = "timed out" if done is None else (done.stdout + done.stderr)[-3000:]
        pytest.fail(f"`npm ci` of the OpenAI Node SDK failed:\n{output}")
    (staging / _COMPLETE).write_text("ok", encoding="utf-8")
    try:
        staging.rename(target)
    except OSError:  # another run finished first: its folder is as good
        shutil.rmtree(staging, ignore_errors=True)
