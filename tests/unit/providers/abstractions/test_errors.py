"""The ``ProviderError`` hierarchy (``providers.abstractions.errors``): what every error is
besides its class. Which class a server's answer becomes is ``test_error_classification.py``."""

from __future__ import annotations

import pytest

from providers.abstractions.errors import (
    ConfigurationError,
    ContextLengthExceededError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
    StreamInterruptedError,
)


def test_timeout_error_is_the_builtin_too_without_shadowing_it() -> None:
    import builtins

    import providers.abstractions.errors as errors_module

    error = ProviderTimeoutError("slow", phase="idle", budget=60.0)
    assert isinstance(error, builtins.TimeoutError)
    assert isinstance(error, ProviderError)
    assert "TimeoutError" not in vars(
        errors_module
    )  # `from providers.abstractions.errors import *` is safe
    assert (error.phase, error.budget) == ("idle", 60.0)


@pytest.mark.parametrize("phase", ["connect", "first_token", "idle", "total"])
def test_each_timeout_phase_has_its_own_user_message(phase: str) -> None:
    error = ProviderTimeoutError("x", phase=phase)  # type: ignore[arg-type]
    assert error.user_message
    assert error.user_message != ProviderError("x").user_message


def test_configuration_error_is_a_value_error() -> None:
    error = ConfigurationError("bad")
    assert isinstance(error, ValueError)
    assert isinstance(error, ProviderError)


@pytest.mark.parametrize(
    "error",
    [
        ProviderTimeoutError("t", phase="total", budget=1.0, backend="vllm"),
        ContextLengthExceededError("c", prompt_tokens=3030, context_window=2048, status=400),
        RateLimitError("r", status=429, retry_after=3.0),
        StreamInterruptedError("s", partial_response=None),
        ConfigurationError("bad"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_errors_survive_pickling(error: ProviderError) -> None:
    import pickle

    error.retry_attempts = 2
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error)
    assert str(copy) == str(error)
    assert vars(copy) == vars(error)
