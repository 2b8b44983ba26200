"""The pinned install steps of the vLLM 0.33.0 venv (``rig_venv(VLLM_RIG_NAME, VLLM_STEPS)``).

vLLM's wheel depends on CUDA torch 2.14 and GPU kernels, so it goes in with ``--no-deps`` and
its pure-Python dependencies follow by hand. Every later step repeats the exact CPU torch pin
so pip can never "upgrade" torch to the CUDA build (a 2 GB download that then cannot load).
``torch==2.13.0+cpu`` only matches the CPU wheel: pip finds it through ``find-links`` in this
machine's pip configuration (``/opt/wheels``); without it the step fails and the rig is
reported unavailable instead of pulling CUDA torch.

Left out on purpose (CUDA-only, or pinned to torch 2.14): torchaudio, torchvision, torchcodec,
flashinfer-python, nvidia-*, nvtx, quack-kernels, tilelang, tokenspeed-mla, humming-kernels,
PyNvVideoCodec, fastsafetensors, instanttensor, apache-tvm-ffi. pip then says "vllm requires
…, which is not installed"; nothing imports them on the paths the rig runs.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.integration.rigs.venvs import RigUnavailable, Step, venv_python

__all__ = ["TORCH_CPU", "VLLM_RIG_NAME", "VLLM_STEPS", "VLLM_VERSION"]

VLLM_VERSION = "0.33.0"
VLLM_RIG_NAME = f"vllm-{VLLM_VERSION}"
TORCH_CPU = "torch==2.13.0+cpu"


def check_vllm_imports(venv: Path) -> None:
    """Fail the build (not the first server start) when vLLM's CLI or parsers cannot import,
    and refuse a CUDA torch that slipped in."""
    probe = (
        "import torch, vllm.entrypoints.cli.main, vllm.v1.engine.core_client\n"
        "assert torch.version.cuda is None, f'CUDA torch installed: {torch.__version__}'\n"
        "print(torch.__version__, vllm.__version__)\n"
    )
    completed = subprocess.run(
        [str(venv_python(venv)), "-c", probe],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "VLLM_TARGET_DEVICE": "cpu"},
    )
    if completed.returncode != 0:
        tail = "\n".join((completed.stdout + completed.stderr).splitlines()[-30:])
        raise RigUnavailable(f"the vLLM venv does not import:\n{tail}")


VLLM_STEPS: list[Step] = [
    [TORCH_CPU],
    ["--no-deps", f"vllm=={VLLM_VERSION}"],
    [
        TORCH_CPU,
        "regex", "cachetools", "psutil", "sentencepiece", "numpy", "requests>=2.33.0",
        "certifi", "tqdm", "blake3", "py-cpuinfo", "transformers<5.21.0,>=5.16.1",
        "huggingface_hub>=1.31.0", "tokenizers>=0.23.2", "safetensors", "protobuf",
        "fastapi[standard]<0.137.0,>=0.133.0", "starlette>=1.0.1", "aiohttp", "multidict",
        "openai>=2.25.0", "pydantic", "orjson", "prometheus_client", "pillow",
        "prometheus-fastapi-instrumentator", "tiktoken", "partial-json-parser", "jsonschema",
        "pyzmq", "msgspec", "pyyaml", "einops", "cloudpickle", "watchfiles",
        "python-json-logger", "pybase64", "cbor2", "ijson", "setproctitle",
        "oss-harmony>=0.0.11", "anthropic>=0.71.0",
        "model-hosting-container-standards<1.0.0,>=0.1.14", "mcp<3.0.0,>=2.2.0",
        "opentelemetry-sdk", "opentelemetry-api", "lark==1.2.2", "gguf",
    ],
    [
        TORCH_CPU,
        # xgrammar is imported by vllm.parser even when no structured output is requested
        "xgrammar==0.2.8", "llguidance<1.8.0,>=1.7.0", "outlines_core==0.2.14",
        "lm-format-enforcer==0.11.3", "compressed-tensors==0.17.0", "depyf==0.20.0", "ninja",
        "numba==0.65.0", "mistral_common[image]>=1.11.6", "opencv-python-headless",
    ],
    check_vllm_imports,
]  # fmt: skip
