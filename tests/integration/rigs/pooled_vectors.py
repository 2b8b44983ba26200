"""The scripted "model"'s pooled outputs: deterministic vectors from the prompt's token ids.

Pure Python (no torch, no numpy), so the same function runs inside the rig venvs, where the
scripted engine (``vllm/fake_engine.py``) and scheduler (``sglang/fake_scheduler.py``) return
these vectors as the model's pooled output, and in the dev venv, where tests compute what a
value's vector must be from the token ids the engine logged, and so can tell a vector that
went to the wrong value, was cut short or was altered on the way.

The vector of a prompt is the mean of one fixed pseudo-random vector per token id (a bag of
tokens): the same text always gives the same vector, texts sharing tokens point in similar
directions (so similarity scores rank a document sharing the query's words first, as a real
model would), and any other text gives another vector. What a real pooler then applies is
applied here in the same order: the Matryoshka cut to ``dimensions`` first, then the L2
normalisation (vLLM's ``use_activation``, on by default for ``embed``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["classify_scores", "pooled_vector", "token_vector"]

_MASK = 0xFFFFFFFF


def _mix(value: int) -> int:
    """A 32-bit integer hash (the murmur3 finaliser): neighbouring ids give unrelated bits."""
    value &= _MASK
    value ^= value >> 16
    value = (value * 0x85EBCA6B) & _MASK
    value ^= value >> 13
    value = (value * 0xC2B2AE35) & _MASK
    value ^= value >> 16
    return value


def token_vector(token_id: int, width: int) -> list[float]:
    """The fixed vector of one token id, each value in [-1, 1)."""
    return [_mix(token_id * 0x9E3779B1 + _mix(j + 1)) / 2**31 - 1.0 for j in range(width)]


def pooled_vector(
    token_ids: Sequence[int],
    width: int,
    *,
    dimensions: int | None = None,
    normalize: bool = True,
) -> list[float]:
    """The pooled vector of a prompt: the mean of its tokens' vectors (zeros for no tokens),
    cut to ``dimensions``, then scaled to length 1 if ``normalize``."""
    total = [0.0] * width
    for token in token_ids:
        for j, value in enumerate(token_vector(token, width)):
            total[j] += value
    count = max(len(token_ids), 1)
    vector = [value / count for value in total]
    if dimensions is not None:
        vector = vector[:dimensions]
    if normalize:
        norm = math.sqrt(sum(value * value for value in vector))
        if norm > 0:
            vector = [value / norm for value in vector]
    return vector


def classify_scores(
    token_ids: Sequence[int], labels: int, *, activation: bool = True
) -> list[float]:
    """A classifier head over the pooled vector: ``labels`` logits (the first values of the
    unnormalised pooled vector, times 4), through a sigmoid for one label or a softmax for
    more when ``activation`` (vLLM's default for ``classify``)."""
    logits = [4.0 * value for value in pooled_vector(token_ids, max(labels, 1), normalize=False)]
    if not activation:
        return logits
    if labels == 1:
        return [1.0 / (1.0 + math.exp(-logits[0]))]
    peak = max(logits)
    exps = [math.exp(value - peak) for value in logits]
    total = sum(exps)
    return [value / total for value in exps]
