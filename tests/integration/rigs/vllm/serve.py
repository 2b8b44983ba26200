"""``python -m tests.integration.rigs.vllm.serve MODEL [vllm serve options…]`` in the vLLM venv.

Installs the scripted engine (``fake_engine.install``: one patched factory) and then runs
vLLM's own command-line entry point as ``vllm serve MODEL …``, so argument parsing, validation
and the server start-up are exactly what a user of ``vllm serve`` gets.
"""

from __future__ import annotations

import os
import sys


def main(argv: list[str]) -> None:
    # The PyPI wheel is the CUDA build: without this VllmConfig fails with "Failed to infer
    # device type". It must be set before vLLM resolves its platform.
    os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
    from tests.integration.rigs.vllm import fake_engine

    fake_engine.install()
    from vllm.entrypoints.cli.main import main as vllm_main  # type: ignore[import-not-found]

    sys.argv = ["vllm", "serve", *argv]
    vllm_main()


if __name__ == "__main__":
    main(sys.argv[1:])
