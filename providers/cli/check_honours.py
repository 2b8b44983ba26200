"""The honours section of ``oaicompat check``: each mapped option tried on the live server.

Each probe starts from the honours table's row for this backend and model family
(``providers.cli.honours_table``, provenance ``table``) and asks the server the question the
row answers on paper: does switching reasoning off change the output, is a choice constraint
obeyed, are parallel calls trimmed (and by whom), is the stop applied. What the answer shows
replaces the row's verdict (provenance ``probed``); an answer that cannot show it (the model
never reasons, calls no tool, never reaches the stop) keeps the table's verdict and says why,
which is not a failure. ``not honoured`` is a finding: the server ignored the option and
nothing here caught it.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from capabilities.option_verdicts import OptionVerdict, Verdict
from providers.abstractions.chat_client import ChatClient
from providers.abstractions.chat_response import ChatResponse
from providers.abstractions.errors import (
    ConstraintViolationError,
    ProviderError,
    UnsupportedOptionError,
)
from providers.abstractions.open_values import ChatFinishReason
from providers.abstractions.options import ChatOptions, ChatResponseFormat
from providers.abstractions.reasoning_options import ReasoningEffort, ReasoningOptions
from providers.abstractions.records import value_class
from providers.backends import BackendProfile
from providers.cli.check_battery import TIME_TOOL, WEATHER_TOOL
from providers.cli.honours_samples import sample_named
from providers.cli.honours_table import option_verdict
from providers.factory import core_client_class

__all__ = ["HONOURS_PROBES", "HonoursContext", "HonoursProbe", "client_settings", "run_probe"]


@value_class(frozen=True)
class HonoursContext:
    """What every probe needs besides the client: the backend's row, the model family the
    client was told, the endpoint family and the per-request token budget."""

    profile: BackendProfile
    family: str | None
    api: str = "chat"
    max_tokens: int = 64

    def table_row(self, option: str) -> OptionVerdict:
        return option_verdict(sample_named(option), self.profile, self.family, api=self.api)


HonoursProbe = Callable[[ChatClient, HonoursContext, OptionVerdict], Awaitable[OptionVerdict]]
"""``(client, context, the table's row) -> the row to print``."""


def client_settings(api: str, family: str | None) -> dict[str, Any]:
    """The client keywords the probes need, where the endpoint's client takes them: the model
    family (the request is mapped for it, as the table's row was) and ``raise`` for an option
    the backend cannot honour (a configured ``warn`` would send the probe without it)."""
    takes = inspect.signature(core_client_class(api)).parameters
    settings: dict[str, Any] = {}
    if "model_family" in takes and family:
        settings["model_family"] = family
    if "unsupported_options" in takes:
        settings["unsupported_options"] = "raise"
    return settings


async def run_probe(
    option: str, probe: HonoursProbe, client: ChatClient, context: HonoursContext
) -> OptionVerdict:
    """One probe, its errors turned into rows: a refusal is the table's (nothing was sent), a
    constraint the server broke and the client caught is enforced here, any other error the
    server answered means it did not take the option."""
    table = context.table_row(option)
    try:
        return await probe(client, context, table)
    except UnsupportedOptionError as exc:
        return dataclasses.replace(table, verdict="refused", note=exc.reason, provenance="table")
    except ConstraintViolationError as exc:
        note = f"the server ignored it; the answer was checked here: {_first_line(exc)}"
        return _probed(table, "enforced here", note)
    except ProviderError as exc:
        return _probed(table, "not honoured", f"the server answered {_first_line(exc)}")


def _first_line(exc: Exception) -> str:
    return f"{type(exc).__name__}: {str(exc).splitlines()[0][:140] if str(exc) else ''}"


def _probed(table: OptionVerdict, verdict: Verdict, note: str) -> OptionVerdict:
    return dataclasses.replace(table, verdict=verdict, note=note, provenance="probed")


def _works(table: OptionVerdict, note: str) -> OptionVerdict:
    """The server's answer shows the option obeyed: the table's verdict (which says whether the
    server or the client did it) when it has one of the two, else ``honoured``."""
    verdict: Verdict = table.verdict if table.verdict == "enforced here" else "honoured"
    return _probed(table, verdict, note)


def _not_probed(table: OptionVerdict, why: str) -> OptionVerdict:
    note = f"not probed: {why}" + (f" (table: {table.note})" if table.note else "")
    return dataclasses.replace(table, note=note, provenance="table")


async def _stream(client: ChatClient, prompt: str, options: ChatOptions) -> ChatResponse:
    updates = [u async for u in client.get_streaming_response(prompt, options)]
    return ChatResponse.from_updates(updates)


async def _probe_reasoning_off(
    client: ChatClient, context: HonoursContext, table: OptionVerdict
) -> OptionVerdict:
    prompt = "Think step by step: what is 17 * 3?"
    off = ChatOptions(
        max_output_tokens=context.max_tokens,
        reasoning=ReasoningOptions(effort=ReasoningEffort.NONE),
    )
    answer = await _stream(client, prompt, off)  # first: a refusal sends nothing at all
    default = await _stream(client, prompt, ChatOptions(max_output_tokens=context.max_tokens))
    if not default.reasoning:
        return _not_probed(table, "the model gave no reasoning by default")
    if answer.reasoning:
        note = f"still {len(answer.reasoning)} chars of reasoning with effort none"
        return _probed(table, "not honoured", note)
    return _works(table, f"{len(default.reasoning)} chars of reasoning by default, none with it")


_CHOICES = ("yes", "no")


async def _probe_choice(
    client: ChatClient, context: HonoursContext, table: OptionVerdict
) -> OptionVerdict:
    options = ChatOptions(
        max_output_tokens=context.max_tokens,
        response_format=ChatResponseFormat.choice(list(_CHOICES)),
    )
    answer = (await _stream(client, "Is the sky blue? Answer yes or no.", options)).text
    if answer.strip() in _CHOICES:
        return _works(table, f"answered {answer.strip()!r}")
    return _probed(table, "not honoured", f"answered {answer[:40]!r}: not one of yes, no")


async def _probe_single_call(
    client: ChatClient, context: HonoursContext, table: OptionVerdict
) -> OptionVerdict:
    options = ChatOptions(
        max_output_tokens=max(context.max_tokens, 128),
        tools=[WEATHER_TOOL, TIME_TOOL],
        allow_multiple_tool_calls=False,
    )
    prompt = "What are the weather and the time in Paris? Call both tools at once."
    response = await client.get_response(prompt, options)  # whole: its raw body counts calls
    kept = len(response.tool_calls)
    sent = _calls_sent(response.raw)
    if kept == 0:
        return _not_probed(table, "the model made no tool call")
    if kept > 1:
        return _probed(table, "not honoured", f"{kept} calls came back")
    if sent is not None and sent > 1:
        return _probed(table, "enforced here", f"the server sent {sent} calls; the first kept here")
    if sent == 1:  # the server's doing, whatever the client would have trimmed
        return _probed(table, "honoured", "the server sent one call")
    return _works(table, "one call came back")


def _calls_sent(raw: Any) -> int | None:
    """Tool calls in a whole chat completion's first choice (``None``: not that shape, e.g.
    a Responses body or calls written as text)."""
    if not isinstance(raw, Mapping):
        return None
    choices = raw.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        return None
    message = choices[0].get("message")
    calls = message.get("tool_calls") if isinstance(message, Mapping) else None
    return len(calls) if isinstance(calls, list) and calls else None


_STOP = "five"


async def _probe_stop(
    client: ChatClient, context: HonoursContext, table: OptionVerdict
) -> OptionVerdict:
    options = ChatOptions(max_output_tokens=context.max_tokens, stop_sequences=[_STOP])
    prompt = "Count from one to ten in words, separated by spaces."
    response = await _stream(client, prompt, options)
    text = response.text.lower()
    if _STOP in text:
        return _probed(table, "not honoured", f"the text goes on past {_STOP!r}")
    matched = response.additional_properties.get("stop_sequence")
    if matched == _STOP:
        return _works(table, f"stopped before {_STOP!r}; the matched stop is reported")
    if "four" in text and response.finish_reason == ChatFinishReason.STOP:
        return _works(table, f"stopped before {_STOP!r}; no matched stop reported")
    return _not_probed(table, f"the answer never reached {_STOP!r}")


HONOURS_PROBES: tuple[tuple[str, HonoursProbe], ...] = (
    ("reasoning.effort=none", _probe_reasoning_off),
    ("response_format=choice", _probe_choice),
    ("allow_multiple_tool_calls=false", _probe_single_call),
    ("stop_sequences", _probe_stop),
)
"""Option (a sample of ``providers.cli.honours_samples``) → its probe, in report order."""
