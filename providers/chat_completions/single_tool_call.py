"""``allow_multiple_tool_calls=False``, enforced on the answer: the first call of each choice.

``parallel_tool_calls: false`` is sent, but not every server honours it (SGLang enforces it
only through a grammar, so plain ``auto`` with most parsers still returns several calls;
llama-cpp-python drops the key). An agent told "one call" must not run a second one, so
the client keeps the first call of each choice and drops the others, whatever the backend
row says (its ``honours_single_tool_call`` only decides whether the docs call the option
honoured or enforced here).

Nothing is lost: each dropped call is recorded, as the server sent it, under
``additional_properties["dropped_tool_calls"]`` (``DROPPED_TOOL_CALLS``): a list of
``{"choice_index", "name", "call_id", "arguments"}``, ``arguments`` being the argument text as
received (``raw_arguments``), parsed or not. A stream records it on the update that would have
carried the call, together with the calls dropped before it, so the response
``ChatResponse.from_updates`` builds has them all; a whole answer, on the response. One
``REQUEST_OPTION_ENFORCED`` event per request says it happened, naming the dropped calls'
tools, never their arguments.

A streamed call's fragments never reach the caller one by one: the chunk normaliser merges
them (``ToolCallAccumulator``) and an update carries each call whole when its choice finishes,
so dropping a call is dropping its ``FunctionCallContent``, per ``choice_index``, however many
updates the calls of a choice come in. The updates that carried fragments have no contents and
pass unchanged (their ``raw`` chunk, the server's record, still holds what was sent). The
finish reason (``tool_calls``) stays: one call is still a tool call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from providers.abstractions.chat_response import ChatResponse
from providers.abstractions.contents import AIContent, FunctionCallContent
from providers.abstractions.event_names import REQUEST_OPTION_ENFORCED
from providers.abstractions.update_runs import UpdateRuns, close_stream

if TYPE_CHECKING:
    from providers.chat_completions.option_enforcement import Enforcement

__all__ = ["DROPPED_TOOL_CALLS", "single_tool_call_response", "single_tool_call_runs"]

DROPPED_TOOL_CALLS: Final = "dropped_tool_calls"
"""``additional_properties`` key: the calls dropped under ``allow_multiple_tool_calls=False``."""

_OPTION: Final = "allow_multiple_tool_calls"


def _record(call: FunctionCallContent, choice_index: int) -> dict[str, Any]:
    return {
        "choice_index": choice_index,
        "name": call.name,
        "call_id": call.call_id,
        "arguments": call.raw_arguments,
    }


def _report(backend: str, dropped: list[dict[str, Any]]) -> None:
    """The event: tool names only, never arguments (they may hold what a user typed)."""
    # deferred: structlog, ~25 ms of cold import, only when a call was dropped
    from providers.abstractions.logs import get_logger

    get_logger(__name__).warning(
        REQUEST_OPTION_ENFORCED,
        option=_OPTION,
        backend=backend,
        dropped=[entry["name"] for entry in dropped],
    )


def _keep_first(
    contents: list[AIContent], choice_index: int, seen: set[int]
) -> tuple[list[AIContent], list[dict[str, Any]]]:
    """``contents`` without the calls after the choice's first (``seen``: the choices whose
    first call has passed), and the records of those dropped."""
    kept: list[AIContent] = []
    dropped: list[dict[str, Any]] = []
    for content in contents:
        if type(content) is FunctionCallContent or isinstance(content, FunctionCallContent):
            if choice_index in seen:
                dropped.append(_record(content, choice_index))
                continue
            seen.add(choice_index)
        kept.append(content)
    return kept, dropped


def _with_dropped(
    properties: dict[str, Any] | None, dropped: list[dict[str, Any]]
) -> dict[str, Any]:
    return {**(properties or {}), DROPPED_TOOL_CALLS: list(dropped)}


async def single_tool_call_runs(runs: UpdateRuns, plan: Enforcement) -> UpdateRuns:
    """``runs`` with each choice's calls after its first left out, recorded on the update that
    carried them: the calls dropped so far, so that the last such update holds them all (the
    response built from the updates keeps a key's last value)."""
    seen: set[int] = set()
    so_far: list[dict[str, Any]] = []
    try:
        async for run in runs:
            for update in run:
                if update.plain_text is not None:
                    continue  # (plain: one text or nothing, never a call)
                contents = update.contents
                if not contents:
                    continue
                kept, dropped = _keep_first(contents, update.choice_index, seen)
                if dropped:
                    if not so_far:
                        _report(plan.backend, dropped)
                    so_far.extend(dropped)
                    update.contents = kept
                    update.additional_properties = _with_dropped(
                        update.additional_properties, so_far
                    )
            yield run
    finally:
        await close_stream(runs)


def single_tool_call_response(response: ChatResponse, plan: Enforcement) -> ChatResponse:
    """``response`` with each message's calls after its first left out (recorded on the
    response)."""
    seen: set[int] = set()
    all_dropped: list[dict[str, Any]] = []
    for index, message in enumerate(response.messages):
        kept, dropped = _keep_first(message.contents, index, seen)
        if dropped:
            message.contents = kept
            all_dropped.extend(dropped)
    if all_dropped:
        response.additional_properties = _with_dropped(response.additional_properties, all_dropped)
        _report(plan.backend, all_dropped)
    return response
