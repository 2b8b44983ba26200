"""Options a server may ignore, applied or checked on the answer here.

The request builder writes each option in the backend's key or refuses it
(``capabilities.option_verdicts``); what remains is what no key can guarantee: a server that
returns several calls under ``allow_multiple_tool_calls=False`` (SGLang), that ends the answer
on a stop string inside the reasoning (vLLM, SGLang), that drops a constraint and answers
unconstrained (vLLM with a ``guided_*`` key), or reasoning text the caller asked not to get.
``enforcement_for`` reads the options once per request and returns ``None`` when none of that
applies, so a request that asks for none of it runs exactly the code it ran before; otherwise
each applicable stage wraps the answer, streamed (``enforce_runs``) or whole
(``enforce_response``), in the order the answer would be read by a caller.

Both wire clients (Chat Completions and Responses) call this, so every path that reaches a
server through them, the OpenAI-SDK transport and the gateway included, gets the same checks.
"""

from __future__ import annotations

from collections.abc import Callable

from providers.abstractions.chat_response import ChatResponse
from providers.abstractions.options import ChatOptions, ChatResponseFormat
from providers.abstractions.reasoning_options import ReasoningOutput
from providers.abstractions.records import value_class
from providers.abstractions.update_runs import UpdateRuns
from providers.backends import BackendProfile
from providers.chat_completions.request import may_constrain

__all__ = ["Enforcement", "enforce_response", "enforce_runs", "enforcement_for"]


@value_class(frozen=True)
class Enforcement:
    """What one request's answer needs here; built by ``enforcement_for``."""

    backend: str
    """The row's name, recorded on the errors and events the stages raise."""
    response_format: ChatResponseFormat | None = None
    """Check the whole answer against it after the last token (schema, full regex, choice)."""
    single_tool_call: bool = False
    """Keep the first call, record the dropped ones (``allow_multiple_tool_calls=False``)."""
    stop_sequences: tuple[str, ...] = ()
    """Cut the text at the first of these (not sent: the server would apply them to the
    reasoning too)."""
    drop_reasoning: bool = False
    """Leave reasoning text out of the answer (``ReasoningOutput.NONE``)."""


RunStage = Callable[[UpdateRuns, Enforcement], UpdateRuns]
ResponseStage = Callable[[ChatResponse, Enforcement], ChatResponse]


def enforcement_for(
    options: ChatOptions | None,
    profile: BackendProfile,
    *,
    family: str | None = None,
    api: str = "chat",
) -> Enforcement | None:
    """What ``options`` need enforced on ``profile``'s answer, or ``None`` for nothing.
    ``api="responses"``: a regex, choice or grammar is checked only where that server's
    Responses API takes one (elsewhere it was refused, or left out under ``warn``/``ignore``,
    and an answer is not held to a constraint that was never sent)."""
    if options is None:
        return None
    fields: dict[str, object] = {}
    if options.allow_multiple_tool_calls is False:
        fields["single_tool_call"] = True
    if options.stop_sequences:
        # deferred: the stop stage's module, for requests with stop sequences only
        from providers.chat_completions.stop_sequences import stops_applied_here

        stops = stops_applied_here(options, profile, family)
        if stops:
            fields["stop_sequences"] = stops
    if may_constrain(options):
        # deferred: the constraint tables (~0.6 ms of cold import), for requests that name one
        from capabilities.constraint_mapping import plan_constraints, wants_plan

        checked = plan_constraints(options, profile).checked if wants_plan(options) else None
        unsent = api == "responses" and not profile.responses_constraints
        if checked is not None and not (unsent and checked.is_constraint):
            fields["response_format"] = checked
    reasoning = options.reasoning
    if reasoning is not None and reasoning.output == ReasoningOutput.NONE:
        fields["drop_reasoning"] = True
    if not fields:
        return None
    return Enforcement(profile.name, **fields)  # type: ignore[arg-type]


def enforce_runs(runs: UpdateRuns, plan: Enforcement) -> UpdateRuns:
    """``runs`` through each stage ``plan`` needs."""
    for stage, _ in _stages(plan):
        runs = stage(runs, plan)
    return runs


def enforce_response(response: ChatResponse, plan: Enforcement) -> ChatResponse:
    """``response`` through each stage ``plan`` needs."""
    for _, stage in _stages(plan):
        response = stage(response, plan)
    return response


def _stages(plan: Enforcement) -> list[tuple[RunStage, ResponseStage]]:
    """Each stage ``plan`` needs, streamed and whole, in the order a caller reads the answer:
    the text cut at a stop first, then the calls, then the check of what is left, and the
    reasoning dropped last (the check reads only the text)."""
    stages: list[tuple[RunStage, ResponseStage]] = []
    if plan.stop_sequences:
        # deferred: the stage modules load only for the requests that need them (cold start)
        from providers.chat_completions.stop_sequences import (
            stop_sequence_response,
            stop_sequence_runs,
        )

        stages.append((stop_sequence_runs, stop_sequence_response))
    if plan.single_tool_call:
        # deferred: the stage modules load only for the requests that need them (cold start)
        from providers.chat_completions.single_tool_call import (
            single_tool_call_response,
            single_tool_call_runs,
        )

        stages.append((single_tool_call_runs, single_tool_call_response))
    if plan.response_format is not None:
        # deferred: ~0.7 ms of cold import (the check, its schema walker), for constraints only
        from providers.chat_completions.constraint_check import check_response, check_runs

        stages.append((check_runs, check_response))
    if plan.drop_reasoning:
        # deferred: the stage modules load only for the requests that need them (cold start)
        from providers.chat_completions.reasoning_output import (
            drop_reasoning_response,
            drop_reasoning_runs,
        )

        stages.append((drop_reasoning_runs, drop_reasoning_response))
    return stages
