"""The errors only embeddings raise, each under the class whose handling it shares::

    InvalidResponseError
    └── EmbeddingResponseError        the answer's vectors cannot be trusted (a wrong width, a
                                      missing or repeated index, NaN, a bad base64 string);
                                      partial: what was read, payload: what was received
    InvalidRequestError
    └── EmbeddingsUnavailableError    the server or model does not embed as asked (llama.cpp
                                      without --embeddings or with pooling none, a vLLM model
                                      that is not an embedding model); fix: what to change
    ContextLengthExceededError
    └── EmbeddingInputTooLargeError   one input is larger than the server can pool at once
                                      (llama.cpp's physical batch); fix: what to change

Each message names the server (``backend``) and says the fix, and ``body`` keeps the server's
own answer. None is retried: the same request would fail the same way. An input too large is a
``ContextLengthExceededError`` although llama.cpp sends it as a 500, which the retry policy
would otherwise send again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from providers.abstractions.errors import (
    ContextLengthExceededError,
    InvalidRequestError,
    InvalidResponseError,
)

if TYPE_CHECKING:
    from providers.abstractions.embeddings import GeneratedEmbeddings

__all__ = [
    "EmbeddingInputTooLargeError",
    "EmbeddingResponseError",
    "EmbeddingsUnavailableError",
]


class EmbeddingResponseError(InvalidResponseError):
    """The server answered ``/v1/embeddings`` with vectors that cannot be used as they are.

    ``problem`` says what is wrong in a few words (``wrong width``, ``duplicate index``…);
    nothing is dropped or reordered to hide it. ``partial`` holds what was read before the
    problem: the embeddings of every earlier batch, in the values' order, then those of the
    failing answer that were read whole, in the order the server sent them (so an index
    problem cannot misplace them). ``payload`` is the failing answer as parsed.
    """

    def __init__(
        self,
        message: str,
        *,
        problem: str,
        partial: GeneratedEmbeddings | None = None,
        payload: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(message, **kwargs)
        self.problem = problem
        self.partial = partial
        self.payload = payload

    def _default_user_message(self) -> str:
        return "The embedding server sent vectors this client cannot use."


class EmbeddingsUnavailableError(InvalidRequestError):
    """The server, or the model it serves, cannot answer ``/v1/embeddings`` as it is started.
    ``fix`` is the change that makes it embed (a server flag, another model)."""

    def __init__(self, message: str, *, fix: str, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.fix = fix

    def _default_user_message(self) -> str:
        return "The model server is not set up to compute embeddings."


class EmbeddingInputTooLargeError(ContextLengthExceededError):
    """One input is larger than the server can pool in one pass (llama.cpp's
    ``--ubatch-size``). Splitting the list cannot help, since each input must fit whole;
    ``fix`` says which server setting to raise, or to send shorter pieces."""

    def __init__(self, message: str, *, fix: str, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.fix = fix

    def _default_user_message(self) -> str:
        return "A text is too long for the embedding model; send shorter pieces."
