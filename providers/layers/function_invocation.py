"""``FunctionInvokingChatClient``: the tool loop, as MEAI's ``FunctionInvokingChatClient`` runs it.

When the model answers with calls to ``AIFunction``\\ s offered in ``ChatOptions.tools``, this
layer runs them, appends the assistant turn and one ``tool`` message with the results to the
conversation, and asks again, until the model answers without calls::

    client = ChatClientBuilder(wire).use_function_invocation().use_retry().build()
    response = await client.get_response("Weather in Paris?", ChatOptions(tools=[weather]))

The rules, and where they differ from MEAI's:

* A call whose ``error`` is set (arguments cut by ``length``, not a JSON object) is never run,
  nor one naming a tool that was not offered: the model gets an error result for it, so it can
  correct itself, and the round counts as failing. (MEAI runs no check on the arguments' text,
  and does not count an unknown name as an error; here a model that keeps calling a tool that
  does not exist stops after ``max_consecutive_errors`` rounds, not ``max_iterations``.)
* A call to a tool offered only as a declaration (a ``ToolDeclaration`` or a dict, no
  implementation) ends the loop before anything of that round runs, and the response carries
  the calls: answering them is the caller's job, as in MEAI.
* ``approve(call)`` (sync or async), when given, is asked about each call that would run, in
  call order, before any runs; a refused call gets a "not approved" result (not an error).
* Arguments are validated before the function runs; invalid ones give the model the list of
  problems whatever ``include_detailed_errors`` says (they are the model's own input). An
  exception from the function gives "Error: the function failed.", with the exception's class
  and message only when ``include_detailed_errors`` is on: a message can hold what the model
  (and so the end user) should not see. The exception itself is on the result's
  ``additional_properties["exception"]`` for the caller.
* A tool never crashes the loop (issue 32): an exception whose ``str()`` raises is described
  by its class alone, and a return value that cannot be written as the next request's text
  (its ``str()`` raises, it contains itself) is replaced, for the model, by an error text that
  names its type; the error that writing it raised is on ``additional_properties["exception"]``
  and the round counts as failing.
* With several calls in one turn they run concurrently (``allow_concurrent_invocation``; MEAI's
  default is off, ours on: an agent's parallel calls are usually independent lookups).
* ``tool_mode`` ``required`` (or one named function) applies to the first request only, as in
  MEAI: kept, it would force a call on every turn and the loop would never end.

Limits, and what the caller gets then: ``max_iterations`` (40) rounds of invocation, so the
inner client is called at most 41 times; the 41st answer is returned as it is, calls included,
unrun. More than ``max_consecutive_errors`` (3) rounds in a row with an error stop the loop after
that round's results. Either way the response is the honest state of the conversation, and
``additional_properties["function_invocation_stopped"]`` names the limit (MEAI raises the last
exception on the error limit; a response that says what happened serves a caller better).

``get_response`` returns every message the loop added (assistant turns, tool results, the
final answer), so ``history.extend(response.messages)`` keeps the whole exchange, and usage
summed over the requests. The stream yields each inner update as it arrives, then, after a
turn with calls, one update per result (role ``tool``) as each call completes, then the next
turn; its usage contents are running totals, so ``ChatResponse.from_updates`` sums the turns
too.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import aclosing
from dataclasses import replace
from typing import Final, NamedTuple

from providers.abstractions.chat_client import ChatClient, ChatInput
from providers.abstractions.chat_response import (
    ChatResponse,
    ChatResponseBuilder,
    ChatResponseUpdate,
)
from providers.abstractions.contents import (
    FunctionCallContent,
    FunctionResultContent,
    UsageContent,
    UsageDetails,
)
from providers.abstractions.delegating import DelegatingChatClient, close_stream
from providers.abstractions.errors import ConfigurationError
from providers.abstractions.event_names import (
    FUNCTION_CALL_FAILED,
    FUNCTION_LOOP_STOPPED,
    FUNCTION_RESULT_UNWRITABLE,
)
from providers.abstractions.functions import AIFunction, InvalidArgumentsError
from providers.abstractions.logs import get_logger
from providers.abstractions.messages import ChatMessage
from providers.abstractions.open_values import ChatRole
from providers.abstractions.options import ChatOptions

__all__ = [
    "FUNCTION_EXCEPTION",
    "FUNCTION_INVOCATION_STOPPED",
    "Approve",
    "FunctionInvokingChatClient",
]

FUNCTION_INVOCATION_STOPPED: Final = "function_invocation_stopped"
"""``additional_properties`` key: ``"max_iterations"`` or ``"max_consecutive_errors"`` when a
limit ended the loop (on the response; on a stream, on one last update without contents)."""

FUNCTION_EXCEPTION: Final = "exception"
"""``FunctionResultContent.additional_properties`` key: the exception a function raised."""

Approve = Callable[[FunctionCallContent], bool | Awaitable[bool]]

_log = get_logger(__name__)


class _Outcome(NamedTuple):
    position: int  # the call's place in its turn: results go back in call order
    result: FunctionResultContent
    failed: bool


class FunctionInvokingChatClient(DelegatingChatClient):
    """Runs the ``AIFunction`` calls the model makes and asks again; see the module docstring.

    A request whose tools hold no ``AIFunction`` passes through untouched.
    """

    def __init__(
        self,
        inner: ChatClient,
        *,
        max_iterations: int = 40,
        max_consecutive_errors: int = 3,
        allow_concurrent_invocation: bool = True,
        include_detailed_errors: bool = False,
        approve: Approve | None = None,
    ) -> None:
        super().__init__(inner)
        for name, value, least in (
            ("max_iterations", max_iterations, 1),
            ("max_consecutive_errors", max_consecutive_errors, 0),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ConfigurationError(f"{name} must be an int of at least {least}: {value!r}")
        self.max_iterations = max_iterations
        self.max_consecutive_errors = max_consecutive_errors
        self.allow_concurrent_invocation = allow_concurrent_invocation
        self.include_detailed_errors = include_detailed_errors
        self.approve = approve

    async def get_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> ChatResponse:
        loop = _Loop(self, messages, options)
        if not loop.functions:
            return await self.inner.get_response(loop.history, options)
        for iteration in itertools.count():
            response = await self.inner.get_response(loop.history, loop.options)
            calls = loop.calls_to_run(response.messages, iteration)
            if iteration == 0 and not response.tool_calls:
                return response  # the common case: no calls, the response as the server gave it
            loop.usage = _sum_usage(loop.usage, response.usage)
            loop.added.extend(response.messages)
            if calls is None:
                break
            async with aclosing(loop.run(calls)) as running:
                loop.end_round(response.messages, [outcome async for outcome in running])
            if loop.stopped is not None:
                break
        response.messages = loop.added
        response.usage = loop.usage
        if loop.stopped is not None:
            response.additional_properties[FUNCTION_INVOCATION_STOPPED] = loop.stopped
        return response

    def get_streaming_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        loop = _Loop(self, messages, options)
        if not loop.functions:
            return self.inner.get_streaming_response(loop.history, options)
        return self._stream(loop)

    async def _stream(self, loop: _Loop) -> AsyncIterator[ChatResponseUpdate]:
        for iteration in itertools.count():
            turn = ChatResponseBuilder(keep_raw=False)
            stream = self.inner.get_streaming_response(loop.history, loop.options)
            try:
                async for update in stream:
                    turn.add(update)
                    if loop.usage is not None:
                        _add_earlier_usage(update, loop.usage)
                    yield update
            finally:
                await close_stream(stream)
            response = turn.build()
            loop.usage = _sum_usage(loop.usage, response.usage)
            calls = loop.calls_to_run(response.messages, iteration)
            if calls is None:
                break
            outcomes: list[_Outcome] = []
            async with aclosing(loop.run(calls)) as running:
                async for outcome in running:
                    outcomes.append(outcome)
                    yield ChatResponseUpdate([outcome.result], role=ChatRole.TOOL)
            loop.end_round(response.messages, outcomes)
            if loop.stopped is not None:
                break
        if loop.stopped is not None:
            yield ChatResponseUpdate(
                additional_properties={FUNCTION_INVOCATION_STOPPED: loop.stopped}
            )


class _Loop:
    """One request's state across its rounds: the conversation so far, what was offered,
    the errors in a row and the usage so far."""

    def __init__(
        self, client: FunctionInvokingChatClient, messages: ChatInput, options: ChatOptions | None
    ) -> None:
        self.client = client
        self.history = ChatMessage.coerce_all(messages)  # a copy: the caller's list is theirs
        self.options = options
        declarations = options.tool_declarations() if options is not None else []
        self.functions = {t.name: t for t in declarations if isinstance(t, AIFunction)}
        self.declared_only = {t.name for t in declarations if not isinstance(t, AIFunction)}
        self.declared_only -= self.functions.keys()
        self.added: list[ChatMessage] = []
        self.usage: UsageDetails | None = None
        self.errors_in_a_row = 0
        self.stopped: str | None = None

    def calls_to_run(
        self, messages: list[ChatMessage], iteration: int
    ) -> list[FunctionCallContent] | None:
        """The calls of this turn, or ``None`` when the loop ends here."""
        calls = [call for message in messages for call in message.tool_calls]
        if not calls or any(call.name in self.declared_only for call in calls):
            return None
        if iteration >= self.client.max_iterations:
            self._stop("max_iterations", iteration)
            return None
        return calls

    async def run(self, calls: list[FunctionCallContent]) -> AsyncGenerator[_Outcome, None]:
        """An outcome for every call, each as soon as it is known: the calls that will not run
        first, then the others as they complete."""
        runnable: list[tuple[int, FunctionCallContent, AIFunction]] = []
        for index, call in enumerate(calls):
            screened = await self._screen(call)
            if isinstance(screened, AIFunction):
                runnable.append((index, call, screened))
            else:
                yield _Outcome(index, *screened)
        if not self.client.allow_concurrent_invocation or len(runnable) < 2:
            for index, call, function in runnable:
                yield await self._invoke(index, call, function)
            return
        tasks = [asyncio.ensure_future(self._invoke(*entry)) for entry in runnable]
        try:
            for next_done in asyncio.as_completed(tasks):
                yield await next_done
        finally:
            for task in tasks:
                task.cancel()  # only those still running: a caller stopped reading
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _screen(
        self, call: FunctionCallContent
    ) -> AIFunction | tuple[FunctionResultContent, bool]:
        """The function to run for ``call``, or the result it gets instead and whether that
        is an error."""
        function = self.functions.get(call.name)
        if function is None:
            return _result(call, f'Error: there is no function named "{call.name}".'), True
        if call.error is not None:
            text = f"Error: the call's arguments could not be read ({call.error}); not run."
            return _result(call, text), True
        approve = self.client.approve
        if approve is None:
            return function
        try:
            verdict = approve(call)
            approved = bool(await verdict if inspect.isawaitable(verdict) else verdict)
        except Exception as error:
            return self._failure(call, "Error: the approval check failed.", error), True
        if not approved:
            return _result(
                call, "Error: the call was not approved; the function was not run."
            ), False
        return function

    async def _invoke(
        self, index: int, call: FunctionCallContent, function: AIFunction
    ) -> _Outcome:
        try:
            value = await function.invoke(call.arguments)
        except InvalidArgumentsError as error:
            text = f'Error: invalid arguments for "{call.name}": {_message(error)}'
            return _Outcome(index, _result(call, text, error), True)
        except Exception as error:
            _log.warning(FUNCTION_CALL_FAILED, function=call.name, error_type=_type_name(error))
            return _Outcome(index, self._failure(call, "Error: the function failed.", error), True)
        # An empty tool message confuses models; say that the function ran.
        if value is None:
            value = "Success: the function completed."
        unwritable = _unwritable(value)
        if unwritable is not None:
            _log.warning(
                FUNCTION_RESULT_UNWRITABLE,
                function=call.name,
                result_type=_type_name(value),
                error_type=_type_name(unwritable),
            )
            text = (
                f"Error: the function ran, but its result (a {_type_name(value)}) cannot be "
                "written as text."
            )
            return _Outcome(index, _result(call, text, unwritable), True)
        return _Outcome(index, FunctionResultContent(call.call_id, value), False)

    def _failure(
        self, call: FunctionCallContent, text: str, error: Exception
    ) -> FunctionResultContent:
        if self.client.include_detailed_errors:
            text = f"{text} {_type_name(error)}: {_message(error)}"
        return _result(call, text, error)

    def end_round(self, turn: list[ChatMessage], outcomes: list[_Outcome]) -> None:
        """Add the turn and its results (in call order) to the conversation; count the round."""
        ordered = sorted(outcomes, key=lambda outcome: outcome.position)
        tool_message = ChatMessage(ChatRole.TOOL, [outcome.result for outcome in ordered])
        self.history.extend(turn)
        self.history.append(tool_message)
        self.added.append(tool_message)
        if any(outcome.failed for outcome in outcomes):
            self.errors_in_a_row += 1
            if self.errors_in_a_row > self.client.max_consecutive_errors:
                self._stop("max_consecutive_errors", self.errors_in_a_row)
        else:
            self.errors_in_a_row = 0
        mode = self.options.tool_mode if self.options is not None else None
        if self.options is not None and mode is not None and mode.value in ("required", "function"):
            self.options = replace(self.options, tool_mode=None)

    def _stop(self, reason: str, count: int) -> None:
        self.stopped = reason
        _log.warning(FUNCTION_LOOP_STOPPED, reason=reason, count=count)


def _result(
    call: FunctionCallContent, text: str, error: Exception | None = None
) -> FunctionResultContent:
    properties = {FUNCTION_EXCEPTION: error} if error is not None else None
    return FunctionResultContent(call.call_id, text, additional_properties=properties)


def _type_name(value: object) -> str:
    """The class name of a tool's object: ``type()`` is the interpreter's, not the object's,
    so even an object whose every method raises cannot make this raise."""
    name = type(value).__name__
    return name if isinstance(name, str) else "object"


def _message(error: BaseException) -> str:
    """``str(error)``, or a placeholder when the exception's ``__str__`` raises or returns
    something other than a ``str``: a tool's exception runs the tool's code when formatted,
    and that must not end the loop."""
    try:
        return str(error)
    except Exception:
        return "(the exception's message could not be read)"


def _unwritable(value: object) -> Exception | None:
    """Why ``value`` cannot become the ``tool`` message's text, or ``None`` when it can.

    The request builders write a result with ``json.dumps(..., default=str)``; done there, an
    object whose ``str()`` raises failed the *next* request with that object's own exception,
    and a value that contains itself with an ``InvalidRequestError``: either ended the loop. So
    the same encoding is tried here, once per result (a tool round trip costs far more), and a
    failure is the tool's, not the loop's. A plain scalar cannot fail and is not encoded.
    """
    if isinstance(value, str | int | float | bool):
        return None
    try:
        json.dumps(value, ensure_ascii=False, default=str)
    except Exception as error:  # the object's own code ran: any exception is possible
        return error
    return None


def _sum_usage(total: UsageDetails | None, more: UsageDetails | None) -> UsageDetails | None:
    """Usage of two requests together (``UsageDetails.__add__``); ``None`` when neither has any."""
    if total is None or more is None:
        return more if total is None else total
    return total + more


def _add_earlier_usage(update: ChatResponseUpdate, earlier: UsageDetails) -> None:
    """Make a later turn's usage report a running total, so that ``from_updates`` (which keeps
    a stream's latest report) sums the turns as ``get_response`` does."""
    contents = update.contents
    for position, content in enumerate(contents):
        if type(content) is UsageContent:
            contents[position] = UsageContent(_sum_usage(earlier, content.details) or earlier)
