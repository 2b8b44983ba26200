"""``count_tokens`` for the chat client: the server's own tokenizer where it has one
(``token_routes``), an estimate marked as such where it has none; and the opt-in pre-flight
check that refuses a request that cannot fit before it is sent.

The messages and tools are taken from the body the chat request itself would send
(``build_request_body``), so they are counted in the form the server renders, merged system
messages and tool schemas included. A server whose route is missing (404, 405, 501: an older
SGLang, a proxy) is remembered as having none, and counted by estimate from then on.
"""

from __future__ import annotations

import json
import weakref
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from providers.abstractions.errors import InvalidResponseError
from providers.abstractions.token_count import ESTIMATE, TokenCount
from providers.chat_completions.http_client_base import fetch_whole, mask_secrets, url_for_errors
from providers.chat_completions.token_routes import CHAT_KEYS, TokenizeRoute, tokenize_route_for
from providers.transport.json_guard import loads_within

if TYPE_CHECKING:
    from providers.abstractions.chat_client import ChatInput
    from providers.abstractions.options import ChatOptions
    from providers.chat_completions.client import OpenAiCompatibleChatClient

__all__ = ["count_tokens", "fit_to_context", "prompt_texts"]

_MISSING_ROUTE = (404, 405, 501)
_WITHOUT_TOKENIZER: weakref.WeakSet[OpenAiCompatibleChatClient] = weakref.WeakSet()
"""Clients whose server answered that it has no tokenizer route."""


async def count_tokens(
    client: OpenAiCompatibleChatClient, messages: ChatInput, options: ChatOptions | None
) -> TokenCount:
    """The prompt's size as ``client``'s server would see it."""
    body = client.build_request_body(messages, options, stream=False)
    route = tokenize_route_for(client.profile.name)
    if route is None or client in _WITHOUT_TOKENIZER:
        return _estimate(body)
    try:
        return await _server_count(client, route, body)
    except _NoRoute:
        _WITHOUT_TOKENIZER.add(client)
        return _estimate(body)


def prompt_texts(body: dict[str, Any]) -> list[str]:
    """The texts of a chat body a tokenizer would see: each message's text (its text parts
    joined, its tool calls' names and arguments) and the tools' JSON."""
    texts = []
    for message in body.get("messages") or ():
        content = message.get("content")
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
        pieces = [content if isinstance(content, str) else ""]
        for call in message.get("tool_calls") or ():
            function = call.get("function") or {}
            pieces.append(f"{function.get('name', '')}{function.get('arguments', '')}")
        texts.append("".join(pieces))
    if body.get("tools"):
        texts.append(json.dumps(body["tools"], ensure_ascii=False))
    return texts


def _estimate(body: dict[str, Any]) -> TokenCount:
    # deferred: the capabilities package (pydantic) is not part of a chat client's cold start
    from capabilities.budget import estimate_prompt_tokens

    return TokenCount(estimate_prompt_tokens(prompt_texts(body)), None, False, ESTIMATE)


class _NoRoute(Exception):
    """The server has no such route."""


async def _server_count(
    client: OpenAiCompatibleChatClient, route: TokenizeRoute, body: dict[str, Any]
) -> TokenCount:
    backend = client.profile.name
    chat = {key: body[key] for key in CHAT_KEYS if key in body}
    constant = dict(route.constant_fields)
    source = f"{backend}:{route.path}"
    if route.form == "chat":
        answer, text = await _post(client, route.path, {**chat, **constant})
    elif route.form == "template":
        assert route.template_path is not None
        rendered, text = await _post(client, route.template_path, chat)
        prompt = rendered.get("prompt") if isinstance(rendered, dict) else None
        if not isinstance(prompt, str):
            raise _bad(backend, f"{route.template_path} answered without a prompt", text)
        answer, text = await _post(client, route.path, {route.text_field: prompt, **constant})
        source = f"{backend}:{route.template_path}+{route.path}"
    count = _count_of(answer, backend, text)
    window = _window_of(answer) if route.reports_context else None
    return TokenCount(count, window, route.exact, source)


def _count_of(answer: Any, backend: str, text: str) -> int:
    """``count``, else the length of ``tokens``; a typed error for anything else."""
    if isinstance(answer, dict):
        count = answer.get("count")
        if type(count) is int and count >= 0:
            return count
        tokens = answer.get("tokens")
        if count is None and isinstance(tokens, list):
            return len(tokens)
    raise _bad(backend, "the tokenize answer has no token count", text)


def _window_of(answer: dict[str, Any]) -> int | None:
    window = answer.get("max_model_len")
    return window if type(window) is int and window > 0 else None


def _bad(backend: str, what: str, text: str) -> InvalidResponseError:
    return InvalidResponseError(f"{backend}: {what}", backend=backend, body=text[:2000])


async def _post(
    client: OpenAiCompatibleChatClient, path: str, body: dict[str, Any]
) -> tuple[Any, str]:
    """One tokenizer request's answer, parsed, and its text; ``_NoRoute`` for a missing route,
    the chat client's typed errors for any other error answer."""
    # deferred: the mapping is made per request only as the chat client's is
    from providers.transport.error_mapping import TransportErrorMapping

    backend = client.profile.name
    url = client.endpoint.server_path(path)
    mapping = TransportErrorMapping(
        backend=backend,
        url=url_for_errors(url),
        connect_budget=client.timeouts.connect,
        secrets=client._secret_texts,
    )
    response, content, _ = await fetch_whole(
        client._http,
        "POST",
        url,
        body=body,
        headers=client._headers,
        extensions=client._request_extensions,
        total=client.timeouts.total,
        backend=backend,
        mapping=mapping,
        limits=client.limits,
    )
    if response.status_code in _MISSING_ROUTE:
        raise _NoRoute
    if response.status_code >= 400:
        raise client._status_error(response.status_code, content, response.headers)
    text = mask_secrets(content, client._secrets).decode("utf-8", "replace")
    try:
        return loads_within(content, client.limits.max_json_depth, backend), text
    except ValueError:
        raise _bad(backend, f"{path} answered with something that is not JSON", text) from None


async def fit_to_context(
    client: OpenAiCompatibleChatClient,
    messages: ChatInput,
    options: ChatOptions | None,
    *,
    clamp: bool,
) -> ChatOptions | None:
    """The pre-flight check (``preflight_context_check=True``): the prompt counted by the
    server's tokenizer, ``max_output_tokens`` clamped to what the window leaves when ``clamp``
    (``clamp_max_tokens=True``), and ``ContextLengthExceededError`` before anything is sent when
    the prompt and the output asked for cannot fit.

    An estimate never refuses (it errs high on purpose, ``capabilities.budget``), and an unknown
    window never does: the server's own answer decides then. A count by the server's tokenizer
    is exact or a lower bound, so a refusal on it is never wrong."""
    # deferred: the capabilities package (pydantic) is not part of a chat client's cold start
    from capabilities.budget import clamp_max_output_tokens, refuse_past_context

    count = await count_tokens(client, messages, options)
    caps = None
    window = count.max_model_len
    if window is None:
        caps = await client.get_capabilities()
        window = caps.context_window.value
    requested = options.max_output_tokens if options is not None else None
    if clamp and options is not None and requested:
        if caps is None:
            caps = await client.get_capabilities()
        clamped = clamp_max_output_tokens(
            requested,
            context_window=window,
            prompt_tokens=count.count,
            max_output_tokens=caps.max_output_tokens.value,
        )
        if clamped != requested:
            options, requested = replace(options, max_output_tokens=clamped), clamped
    if count.source != ESTIMATE:
        refuse_past_context(
            prompt_tokens=count.count,
            max_output_tokens=requested,
            context_window=window,
            backend=client.profile.name,
            counted_by=count.source,
        )
    return options
