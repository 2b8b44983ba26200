"""The errors only reranking raises, each under the class whose handling it shares::

    InvalidResponseError
    └── RerankResponseError       the answer cannot be trusted (an index out of range or
                                  repeated, more results than documents or than top_n, fewer
                                  than asked, a NaN score, the wrong shape); payload: what was
                                  received
    InvalidRequestError
    └── RerankUnavailableError    the server does not rerank as started (llama.cpp without
                                  --reranking, a model that is not a cross-encoder); fix: what
                                  to change

Each message names the server (``backend``) and ``body`` keeps its own answer (an error body,
or the JSON text of an answer refused): nothing is dropped or reordered to hide a problem.
Neither is retried: the same request would fail the same way.
"""

from __future__ import annotations

from typing import Any

from providers.abstractions.errors import InvalidRequestError, InvalidResponseError

__all__ = ["RerankResponseError", "RerankUnavailableError"]


class RerankResponseError(InvalidResponseError):
    """A rerank answer that cannot be used as it is. ``problem`` says what is wrong in a few
    words (``index out of range``, ``duplicate index``…); ``payload`` is the answer as parsed."""

    def __init__(self, message: str, *, problem: str, payload: Any = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.problem = problem
        self.payload = payload

    def _default_user_message(self) -> str:
        return "The reranking server sent scores this client cannot use."


class RerankUnavailableError(InvalidRequestError):
    """The server, or the model it serves, does not answer rerank requests as it is started.
    ``fix`` is the change that makes it rerank."""

    def __init__(self, message: str, *, fix: str, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.fix = fix

    def _default_user_message(self) -> str:
        return "The model server is not set up to rerank documents."
