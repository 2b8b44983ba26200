"""Embeddings over ``/v1/embeddings``: ``OpenAiCompatibleEmbeddingGenerator`` and its parts.

* ``client``: the generator (the wire: headers, budgets, the request body);
* ``batching``: how many values a request carries, the slices a long list becomes;
* ``decoding``: an answer read by its shape, checked, and put in the values' order;
* ``error_answers``: the servers' error answers that have one known fix, typed with it.
"""

from providers.embeddings.client import (
    OpenAiCompatibleEmbeddingGenerator as OpenAiCompatibleEmbeddingGenerator,
)
from providers.embeddings.decoding import NORMALIZED as NORMALIZED
from providers.embeddings.decoding import SERVER_NORM as SERVER_NORM
from providers.lazy_exports import lazy_exports as _lazy_exports

_lazy_exports(__name__, {})
