"""What a backend does with an option: the verdicts of the honours table, and the per-client
policy for an option the backend cannot honour.

Every option a ``ChatOptions`` carries ends in one of three places, never a fourth: the server
honours it (written in the backend's own key), the client enforces it on the answer
(``providers.chat_completions.option_enforcement``), or it is refused before anything is sent
(``UnsupportedOptionError``). The mapping modules (``capabilities.reasoning_mapping``,
``capabilities.constraint_mapping``) return either body keys or a refusal; ``settle`` applies the
client's ``unsupported_options`` policy to a refusal. The same modules describe themselves as
``OptionVerdict`` rows, which the options page of the docs and ``oaicompat check`` print.
"""

from __future__ import annotations

from typing import Literal

from providers.abstractions.errors import UnsupportedOptionError
from providers.abstractions.event_names import REQUEST_OPTION_REFUSED
from providers.abstractions.option_policy import OPTION_POLICIES, OptionPolicy, checked_policy
from providers.abstractions.records import value_class

__all__ = [
    "OPTION_POLICIES",
    "OptionPolicy",
    "OptionVerdict",
    "Provenance",
    "Verdict",
    "checked_policy",
    "refusal",
    "settle",
]

Verdict = Literal["honoured", "enforced here", "refused", "not honoured"]
"""``honoured``: the server obeys the wire key written; ``enforced here``: the client applies or
checks it on the answer (the server ignores it, or cannot be trusted to obey it); ``refused``:
an ``UnsupportedOptionError`` before sending. ``not honoured`` is the fourth place the rule
forbids, named so that it can be shown rather than hidden: the honours table found the option
neither written, enforced nor refused, or a probe saw the server ignore it uncaught."""

Provenance = Literal["table", "probed"]
"""Where a verdict comes from: ``table``, the request builder and enforcement planner exercised
without a server (``providers.cli.honours``); ``probed``, a live server's answer
(``oaicompat check``)."""


@value_class(frozen=True)
class OptionVerdict:
    """One cell of the honours table: ``option`` on ``backend`` (for model ``family``, or any
    family when ``None``) is sent as ``wire`` and ends as ``verdict``; ``note`` says why."""

    option: str
    backend: str
    verdict: Verdict
    wire: str = ""
    family: str | None = None
    note: str = ""
    provenance: Provenance = "table"


def refusal(
    option: str, backend: str, reason: str, *, family: str | None = None
) -> UnsupportedOptionError:
    """The typed error for an option ``backend`` (and ``family``) cannot honour; its message
    names all three and the reason, never a value the caller passed."""
    on = f"{backend} (model family {family})" if family else backend
    return UnsupportedOptionError(
        f"{option} cannot be honoured by {on}: {reason}",
        option=option,
        backend=backend,
        family=family,
        reason=reason,
    )


def settle(error: UnsupportedOptionError, policy: OptionPolicy) -> None:
    """Raise ``error`` under ``raise``; log it under ``warn``; nothing under ``ignore``. After
    ``warn`` and ``ignore`` the caller sends the request without the option."""
    if policy == "raise":
        raise error
    if policy == "warn":
        # deferred: structlog, ~25 ms of cold import, only for a refused option
        from providers.abstractions.logs import get_logger

        get_logger(__name__).warning(
            REQUEST_OPTION_REFUSED,
            option=error.option,
            backend=error.backend,
            family=error.family,
            reason=error.reason,
        )
