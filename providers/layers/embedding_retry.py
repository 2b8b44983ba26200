"""``RetryingEmbeddingGenerator``: the chat retry policy, around ``generate``.

What is retried and how long to wait are ``RetryPolicy``'s decisions, unchanged
(``providers.layers.retry``): a refused connection, a connect timeout, 408/409/429/5xx with the
server's ``Retry-After``; never a 4xx, a read timeout, a malformed answer
(``EmbeddingResponseError``), an input too large (``EmbeddingInputTooLargeError``, a
``ContextLengthExceededError`` although llama.cpp sends it as a 500) or a server that does not
embed (``EmbeddingsUnavailableError``). An embedding request has no stream and no partial
output to protect, so a whole ``generate`` is repeated, every batch of it.

The count of retries is ``additional_properties["retry_attempts"]`` on the result and
``error.retry_attempts`` on a ``ProviderError``; each retry logs ``oaicompat.request.retry``.
"""

from __future__ import annotations

import asyncio
import random as _random
from collections.abc import Callable, Sequence

from providers.abstractions.embeddings import (
    DelegatingEmbeddingGenerator,
    EmbeddingGenerationOptions,
    EmbeddingGenerator,
    GeneratedEmbeddings,
)
from providers.abstractions.event_names import REQUEST_RETRY
from providers.abstractions.logs import EventSink, get_logger
from providers.abstractions.properties import RETRY_ATTEMPTS
from providers.layers.retry import RetryPolicy, Sleep

__all__ = ["RetryingEmbeddingGenerator"]


class RetryingEmbeddingGenerator(DelegatingEmbeddingGenerator):
    """Retries failed ``generate`` calls per ``policy`` (default ``RetryPolicy()``); see the
    module docstring. ``sleep`` and ``random`` (the jitter) are injectable for tests."""

    def __init__(
        self,
        inner: EmbeddingGenerator,
        policy: RetryPolicy | None = None,
        *,
        sleep: Sleep = asyncio.sleep,
        random: Callable[[], float] = _random.random,
        logger: EventSink | None = None,
    ) -> None:
        super().__init__(inner)
        self.policy = policy or RetryPolicy()
        self._sleep = sleep
        self._random = random
        self._log = logger if logger is not None else get_logger(__name__)

    async def generate(
        self, values: Sequence[str], options: EmbeddingGenerationOptions | None = None
    ) -> GeneratedEmbeddings:
        values = values if isinstance(values, str | list | tuple) else list(values)
        retries = 0

        def logged(attempt: int, wait: float, reason: str, error: BaseException) -> None:
            nonlocal retries
            retries = attempt
            self._log.warning(
                REQUEST_RETRY,
                attempt=attempt,
                max_attempts=self.policy.max_attempts,
                wait=round(wait, 3),
                reason=reason,
                error=type(error).__name__,
                status=getattr(error, "status", None),
                backend=getattr(error, "backend", None),
            )

        result = await self.policy.run(
            lambda: self.inner.generate(values, options),
            sleep=self._sleep,
            random=self._random,
            on_retry=logged,
        )
        result.additional_properties = {**(result.additional_properties or {})}
        result.additional_properties[RETRY_ATTEMPTS] = retries
        return result
