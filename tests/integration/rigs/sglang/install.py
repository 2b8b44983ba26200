"""The pinned install steps of the SGLang 0.5.23 venv (``rig_venv(SGLANG_RIG_NAME, SGLANG_STEPS)``).

SGLang's wheel depends on CUDA torch 2.14 and a long list of GPU kernels, so it goes in with
``--no-deps`` and the pure-Python dependencies its serving layer imports follow by hand (the
list of ``shared/research/real-servers-on-cpu.md``; ``dill``, ``compressed-tensors`` and
``soundfile`` were found there by import errors). Every step repeats the exact CPU torch pin so
pip can never swap in the CUDA build; ``torch==2.13.0+cpu`` is found through ``find-links`` in
this machine's pip configuration, and without it the step fails and the rig is reported
unavailable instead of pulling CUDA torch.

``torchvision`` is not installed: PyPI has no CPU build for torch 2.13, and its CUDA build fails
at import time ("operator torchvision::nms does not exist"). SGLang imports it at module level
in multimodal code the text server loads anyway, so :func:`install_torchvision_stub` copies our
import-only stand-in (``torchvision_stub/``) into the venv; the stub's files are part of the
venv's cache key, so changing them builds a new venv.

Left out on purpose (CUDA-only, or pinned to torch 2.14): flashinfer, sglang-kernel, sgl-*,
flash-attn-4, cuda-python, nvidia-*, quack-kernels, tilelang, torchaudio, torchcodec, timm,
datasets, modelscope, outlines, … pip then says "sglang requires …, which is not installed";
nothing imports them on the paths the rig runs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tests.integration.rigs.venvs import RigUnavailable, Step, copies, venv_python

__all__ = [
    "SGLANG_RIG_NAME",
    "SGLANG_STEPS",
    "SGLANG_VERSION",
    "TORCH_CPU",
    "check_sglang_imports",
    "install_torchvision_stub",
]

SGLANG_VERSION = "0.5.23"
SGLANG_RIG_NAME = f"sglang-{SGLANG_VERSION}"
TORCH_CPU = "torch==2.13.0+cpu"
STUB_SOURCE = Path(__file__).resolve().parent / "torchvision_stub" / "torchvision"


def _run_in_venv(venv: Path, code: str, what: str) -> str:
    completed = subprocess.run(
        [str(venv_python(venv)), "-c", code],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"},
    )
    if completed.returncode != 0:
        tail = "\n".join((completed.stdout + completed.stderr).splitlines()[-30:])
        raise RigUnavailable(f"the SGLang venv failed to {what}:\n{tail}")
    return completed.stdout.strip()


@copies(STUB_SOURCE)
def install_torchvision_stub(venv: Path) -> None:
    """Copy the import-only ``torchvision`` stand-in into the venv's ``site-packages``."""
    site_packages = Path(
        _run_in_venv(
            venv, "import sysconfig; print(sysconfig.get_paths()['purelib'])", "locate site"
        )
    )
    target = site_packages / "torchvision"
    if target.exists():  # a real torchvision came in as someone's dependency: it cannot load
        raise RigUnavailable(f"a real torchvision was installed at {target}; refusing to mix")
    shutil.copytree(STUB_SOURCE, target, ignore=shutil.ignore_patterns("__pycache__"))


def check_sglang_imports(venv: Path) -> None:
    """Fail the build (not the first server start) when SGLang's server cannot import, and
    refuse a CUDA torch that slipped in. Importing also compiles the byte code once, which the
    first server start would otherwise pay for."""
    probe = (
        "import torch, sglang, sglang.srt.entrypoints.http_server, torchvision\n"
        "import sglang.srt.managers.detokenizer_manager\n"
        "assert torch.version.cuda is None, f'CUDA torch installed: {torch.__version__}'\n"
        "assert torchvision.__version__.endswith('oaicompat.stub'), torchvision.__file__\n"
        "print(torch.__version__, sglang.__version__)\n"
    )
    _run_in_venv(venv, probe, "import")


SGLANG_STEPS: list[Step] = [
    [TORCH_CPU],
    ["--no-deps", f"sglang=={SGLANG_VERSION}"],
    [
        TORCH_CPU,
        "aiohttp", "anthropic", "blobfile", "build", "distro", "easydict", "einops", "fastapi",
        "gguf", "interegular", "llguidance<2.0.0,>=1.7.6", "mistral_common", "msgspec", "ninja",
        "numpy", "openai==2.8.0", "openai-harmony==0.0.4", "orjson", "packaging",
        "partial_json_parser", "pillow", "prometheus-client", "psutil", "pybase64", "pydantic",
        "python-dateutil<3", "python-multipart", "pyzmq", "regex", "requests", "scipy",
        "sentencepiece", "setproctitle", "tiktoken", "tqdm", "tokenizers==0.23.2",
        "transformers==5.19.0", "uvicorn>=0.51", "uvloop", "watchfiles", "xgrammar==0.2.7",
        "xxhash", "zstandard", "nvidia-ml-py", "IPython",
        # found by import errors; SGLang pins compressed-tensors 0.18.0, 0.20.0 imports fine
        "dill", "compressed-tensors==0.20.0", "soundfile",
    ],
    install_torchvision_stub,
    check_sglang_imports,
]  # fmt: skip
