"""Error answers of ``/v1/embeddings`` that have one known fix, as typed errors saying it.

The wordings are the servers' own, matched whatever the configured backend (a ``generic`` row
may well be a llama-server); each row is (pattern, error class, fix). An answer no row matches
goes on to the wire client's ordinary classification (``providers.transport``), so a 401, a
429 or an unknown model are typed there as for chat.

* llama.cpp without ``--embeddings``: 501 ``not_supported_error`` "This server does not
  support embeddings. Start it with `--embeddings`".
* llama.cpp with ``--pooling none``: 400 "Pooling type 'none' is not OAI compatible. Please use
  a different pooling type" (one vector per token; only its native ``/embedding`` serves it).
* llama.cpp, one input longer than ``--ubatch-size`` tokens: 500 "input is too large to
  process. increase the physical batch size" (an embedding input cannot be split), and past
  the context "input (N tokens) is larger than the max context size".
* vLLM serving a model that does not pool: 400 (501 in older releases) "The model does not
  support Embeddings API"; releases that mount routes by task answer 404 ``{"detail": "Not
  Found"}``, as does any server without the route.
* vLLM, ``dimensions`` for a model without Matryoshka training: 400 "Model … does not support
  matryoshka representation".
"""

from __future__ import annotations

import re
from typing import Final

from providers.abstractions.embedding_errors import (
    EmbeddingInputTooLargeError,
    EmbeddingsUnavailableError,
)
from providers.abstractions.errors import ProviderError
from providers.transport.error_bodies import parse_error_body

__all__ = ["embedding_error"]

_ErrorClass = type[EmbeddingsUnavailableError] | type[EmbeddingInputTooLargeError]

_START_POOLING = (
    "start llama-server with `--embeddings` and a pooling of `mean`, `cls` or `last` "
    "(`--pooling mean`)"
)
_ROWS: Final[tuple[tuple[re.Pattern[str], _ErrorClass, str, str | None], ...]] = (
    (
        re.compile(r"does not support embeddings\.", re.IGNORECASE),
        EmbeddingsUnavailableError,
        _START_POOLING,
        None,
    ),
    (
        re.compile(r"pooling type 'none' is not oai compatible", re.IGNORECASE),
        EmbeddingsUnavailableError,
        "restart llama-server with `--pooling mean` (or `cls`, `last`): pooling `none` gives a "
        "vector per token, which only its native /embedding route returns",
        None,
    ),
    (
        re.compile(
            r"input (?:\(\d+ tokens\) )?is too large to process"
            r"|input \(\d+ tokens\) is larger than",
            re.I,
        ),
        EmbeddingInputTooLargeError,
        "send shorter pieces, or restart llama-server with `--ubatch-size` and `--batch-size` "
        "(and `-c`) at least the longest input's token count: an embedding input is pooled "
        "in one pass and cannot be split",
        None,
    ),
    (
        re.compile(r"does not support embeddings api", re.IGNORECASE),
        EmbeddingsUnavailableError,
        "serve an embedding model: vLLM pools with `--runner pooling` (older: `--task embed`), "
        "SGLang with `--is-embedding`",
        None,
    ),
    (  # SGLang 0.5.23, a chat model (400, its message at the top level of the body)
        re.compile(r"does not appear to be an embedding model", re.IGNORECASE),
        EmbeddingsUnavailableError,
        "restart SGLang with `--is-embedding` and an embedding model",
        None,
    ),
    (
        re.compile(r"does not support matryoshka", re.IGNORECASE),
        EmbeddingsUnavailableError,
        "leave `dimensions` out: this model was not trained to give shorter vectors",
        "dimensions",
    ),
)

_NO_ROUTE_FIX = (
    "this server has no /v1/embeddings route for this model: serve an embedding model (vLLM "
    "`--runner pooling`, SGLang `--is-embedding`, llama-server `--embeddings`)"
)


def embedding_error(status: int, body: bytes, *, backend: str) -> ProviderError | None:
    """The typed error for an error answer one row explains, else ``None``."""
    text = body.decode("utf-8", "replace")
    parsed = parse_error_body(text)
    message = parsed.message
    row = next((row for row in _ROWS if row[0].search(message)), None)
    if row is not None:
        _, error_class, fix, param = row
    elif status == 404 and "model" not in message.lower():
        error_class, fix, param = EmbeddingsUnavailableError, _NO_ROUTE_FIX, None
    else:
        return None
    quoted = message[:300] or "(no message)"
    return error_class(
        f"HTTP {status} from {backend}: {quoted} — to fix: {fix}",
        fix=fix,
        status=status,
        backend=backend,
        body=text,
        param=param,
    )
