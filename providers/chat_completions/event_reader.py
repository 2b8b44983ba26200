"""The chat client's per-event hot path: one network read's events into updates.

Three ways in, cheapest first, each for what the one before cannot take:

1. an event whose bytes are the stream's common chunk with another text (``event_templates``):
   only that text is parsed;
2. a parsed chunk that is the common chunk with another text, id, model, time or index
   (``chunk_shapes.Template`` and ``FragmentTemplate``): recognised with a handful of C calls;
3. the full path (``ChunkNormalizer.feed``), which learns the templates.

The updates of 1 and 2 are plain: an update and its text, nothing else. They are made as
``ChatResponseUpdate.of_text`` makes them, written out here (this module is one of the update's
friends, ``tests/unit/architecture/test_update_friends.py``): one update per event, and the
call would be a sizeable part of what reading an event costs.

What the full path learns is kept in the stream's ``ReaderState``, which the ``ChunkNormalizer``
owns and writes when it learns a template; this module reads events with it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import orjson

from providers.abstractions.contents import TextContent
from providers.abstractions.errors import InvalidResponseError
from providers.abstractions.response_update import ChatResponseUpdate, UpdateHead
from providers.chat_completions.chunk_shapes import FragmentTemplate, Template, choice_head, head
from providers.chat_completions.event_templates import EventTemplate, learn
from providers.transport.json_guard import mark_lone_surrogates, nests_deeper, too_deep

if TYPE_CHECKING:
    from providers.chat_completions.normalize import ChunkNormalizer

__all__ = ["ReaderState", "fast_loads", "loads", "read_events"]

_new = object.__new__
_TEXT_PATH = ("choices", 0, "delta")
_FRAGMENT_PATH = ("choices", 0, "delta", "tool_calls", 0, "function")


class ReaderState:
    """What the reader keeps from one read of a stream to the next: the templates the
    normaliser's full path learnt (``template``, ``fragment``), how many event templates the
    stream may still learn (``relearn``), and how deep an event may nest (``depth``)."""

    __slots__ = ("depth", "fragment", "relearn", "template")

    def __init__(self, depth: int, relearn: int) -> None:
        self.depth = depth
        self.template: Template | None = None  # this stream's common chunk, once seen
        self.fragment: FragmentTemplate | None = None  # its common tool-call chunk
        self.relearn = relearn  # event templates this stream may still learn


def read_events(
    n: ChunkNormalizer, events: list[bytes]
) -> tuple[list[ChatResponseUpdate], Exception | None]:
    """``ChunkNormalizer.read_events``: see the module docstring.

    Hot path: every event of every stream, each way in inline."""
    updates: list[ChatResponseUpdate] = []
    append = updates.append
    state = n.reader
    t = state.template
    tb = t.bytes if t is not None else None
    f = state.fragment
    fb = f.bytes if f is not None else None
    depth = state.depth
    try:
        for data in events:
            if tb is not None and data.startswith(tb.prefix) and data.endswith(tb.suffix):
                try:
                    text = fast_loads(data[tb.cut : len(data) - tb.tail])
                except ValueError:
                    text = None
                if text and type(text) is str:
                    update = _new(ChatResponseUpdate)  # (``of_text``: see the docstring)
                    update._contents = update._rare = None
                    update.plain_text = text
                    update.head = tb  # (it holds the ids, time and kind the update would)
                    update.choice_index = tb.index
                    update._event = tb  # (its bytes are the template's with this text)
                    append(update)
                    continue
            if fb is not None and data.startswith(fb.prefix) and data.endswith(fb.suffix):
                try:
                    text = fast_loads(data[fb.cut : len(data) - fb.tail])
                except ValueError:
                    text = None
                if text and type(text) is str and n.append_arguments(fb.index, fb.call, text):
                    update = _new(ChatResponseUpdate)
                    update._contents = update._rare = None
                    update.plain_text = ""  # (plain and empty)
                    update.head = fb
                    update.choice_index = fb.index
                    update._event = data
                    append(update)
                    continue
            if data == b"[DONE]":
                n.done = True
                break
            try:  # loads(), inline: the parse of nearly every other chunk
                chunk = fast_loads(data)
            except ValueError:
                chunk = None
            if type(chunk) is not dict:
                chunk = loads(data, n.backend, depth)  # json's, or an error
            elif len(data) > 2 * depth and nests_deeper(chunk, data, depth):
                raise too_deep(depth, "a stream event", n.backend)
            if t is not None and len(chunk) == t.top_len:
                try:
                    response_id, model_id, created, choices = head(chunk)
                    rest = t.top_rest
                    if (
                        (rest is None or rest(chunk) == t.top_rest_values)
                        and type(choices) is list
                        and len(choices) == 1
                    ):
                        choice = choices[0]
                        if type(choice) is dict and len(choice) == t.choice_len:
                            index, delta, finish = choice_head(choice)
                            rest = t.choice_rest
                            if (
                                finish is None
                                and type(index) is int
                                and type(delta) is dict
                                and len(delta) == t.delta_len
                                and (rest is None or rest(choice) == t.choice_rest_values)
                            ):
                                text = delta[t.field]
                                rest = t.delta_rest
                                if (
                                    text
                                    and type(text) is str
                                    and type(response_id) is str
                                    and (rest is None or rest(delta) == t.delta_rest_values)
                                ):
                                    if type(created) is not int:
                                        created = None
                                    last = t.head
                                    if (
                                        last.response_id != response_id
                                        or last.model_id != model_id
                                        or last.created_at != created
                                        or type(model_id) is not type(last.model_id)
                                    ):
                                        if type(model_id) is not str:
                                            model_id = None  # (dropped: see ``normalize``)
                                        last = t.head = UpdateHead(
                                            response_id, model_id, created, t.kind
                                        )
                                    update = _new(ChatResponseUpdate)
                                    update._contents = update._rare = None
                                    update.plain_text = text
                                    update.head = last
                                    update.choice_index = index
                                    update._event = data
                                    append(update)
                                    if state.relearn > 0:
                                        tb = _learn_text(state, t, data, update=update, text=text)
                                    continue
                except KeyError:
                    pass  # (a key of the template missing: not the common chunk)
            if f is not None:  # (the common tool-call chunk, ``FragmentTemplate``)
                fragment = f.read(chunk, n.append_arguments)
                if fragment is not None:
                    fragment._event = data  # (the chunk is kept as its bytes)
                    append(fragment)
                    if state.relearn > 0:
                        fb = _learn_fragment(state, f, data, chunk, fragment)
                    continue
            made = n.feed_full(chunk)
            for update in made:
                if update.finish_reason is not None:
                    n.finished = True
                update._event = data  # (the chunk is kept as its bytes)
                append(update)
            if state.template is not t:
                t = state.template
                tb = None
                if t is not None and state.relearn > 0 and len(made) == 1:  # (learnt from it)
                    text = made[0].contents[0].text  # type: ignore[attr-defined]
                    tb = _learn_text(state, t, data, update=made[0], text=text)
            if state.fragment is not f:
                f = state.fragment
                fb = f.bytes if f is not None else None
    except Exception as exc:  # (handed over, with the updates before it)
        return updates, exc
    return updates, None


def _learn_text(
    state: ReaderState,
    t: Template,
    data: bytes,
    *,
    update: ChatResponseUpdate,
    text: str,
) -> EventTemplate | None:
    """The event template of ``data``, a common chunk ``t`` read as ``update`` (``text``)."""
    state.relearn -= 1
    cut = learn(data, _TEXT_PATH, t.field, text)
    t.bytes = (
        None
        if cut is None
        else EventTemplate(
            *cut,
            (update.response_id, update.model_id, update.created_at, update.choice_index),
            t.kind,
        )
    )
    return t.bytes


def _learn_fragment(
    state: ReaderState,
    f: FragmentTemplate,
    data: bytes,
    chunk: dict[str, Any],
    update: ChatResponseUpdate,
) -> EventTemplate | None:
    """The event template of ``data``, a tool-call fragment ``f`` read as ``update``."""
    state.relearn -= 1
    entry = chunk["choices"][0]["delta"]["tool_calls"][0]  # (as ``f`` has just read it)
    text = entry["function"]["arguments"]
    cut = learn(data, _FRAGMENT_PATH, "arguments", text)
    f.bytes = (
        None
        if cut is None
        else EventTemplate(
            *cut,
            (update.response_id, update.model_id, update.created_at, update.choice_index),
            TextContent,
            entry["index"],
        )
    )
    return f.bytes


fast_loads = orjson.loads
"""The parse of nearly every event, on its bytes: about half the instructions of ``json``'s C
scanner on a typical chunk, and no ``str`` of the event first (decoding it cost a quarter as
much again). What it refuses goes through ``loads``, whose results and errors are ``json``'s:
orjson rejects a few documents ``json`` reads (``NaN``, integers past 64 bits, lone surrogate
escapes, invalid UTF-8, which ``json`` sees replaced), and those keep reading as they did,
except that a lone surrogate becomes U+FFFD (``mark_lone_surrogates``)."""


def loads(data: bytes | str, backend: str, depth: int) -> dict[str, Any]:
    """One event's JSON object; past ``depth`` levels, ``ResponseTooLargeError``."""
    try:
        payload = fast_loads(data)
    except ValueError:
        payload = _loads_slowly(data, backend, depth)
    if type(payload) is not dict:
        raise InvalidResponseError("a stream event is not a JSON object", backend=backend)
    if nests_deeper(payload, data, depth):
        raise too_deep(depth, "a stream event", backend)
    return payload


def _loads_slowly(data: bytes | str, backend: str, depth: int) -> Any:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    try:
        return mark_lone_surrogates(json.loads(text), text)  # (the one place they arrive)
    except RecursionError as exc:
        raise too_deep(depth, "a stream event", backend) from exc
    except ValueError as exc:
        # The text goes to `body`, not the message: it may be completion text.
        raise InvalidResponseError(
            f"a stream event is not JSON ({len(text)} characters)", backend=backend, body=text
        ) from exc
