"""``OptionPolicy``: what a client does with an option its backend cannot honour.

Apart from ``capabilities.option_verdicts`` (which re-exports it) because every client checks
its setting when it is made, on a chat's cold start, and the verdicts' value types and logging
are needed only when an option is refused.
"""

from __future__ import annotations

from typing import Literal

from providers.abstractions.errors import ConfigurationError

__all__ = ["OPTION_POLICIES", "OptionPolicy", "checked_policy"]

OptionPolicy = Literal["raise", "warn", "ignore"]
"""What a client does with an option its backend cannot honour: ``raise`` (the default) an
``UnsupportedOptionError`` and send nothing; ``warn`` (an ``oaicompat.request.option_refused``
event) and send the request without it; ``ignore``: send it without, quietly. The caller chose
the last two; an option is never dropped without one of them."""

OPTION_POLICIES: tuple[OptionPolicy, ...] = ("raise", "warn", "ignore")


def checked_policy(policy: object) -> OptionPolicy:
    """``policy`` when it is one of ``OPTION_POLICIES``, else a ``ConfigurationError``."""
    for known in OPTION_POLICIES:
        if policy == known:
            return known
    raise ConfigurationError(
        f"unsupported_options must be one of {', '.join(OPTION_POLICIES)}, not {policy!r}"[:200]
    )
