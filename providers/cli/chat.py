"""``oaicompat chat``: stream one answer, then its tool calls and statistics."""

from __future__ import annotations

import argparse
import json
import sys

from providers.abstractions.chat_response import ChatResponse, ChatResponseUpdate
from providers.abstractions.messages import ChatMessage
from providers.abstractions.options import ChatOptions
from providers.cli.arguments import EXIT_OK
from providers.cli.flags import tools_flag
from providers.cli.output import StreamView, print_stats, print_waiting, terminal_safe
from providers.cli.target import closing, target_from

__all__ = ["chat"]


async def chat(args: argparse.Namespace) -> int:
    target = target_from(args)
    options = ChatOptions(
        max_output_tokens=args.max_tokens,
        temperature=args.temperature,
        tools=tools_flag(args.tools),
    )
    messages = [ChatMessage.user(args.prompt)]
    if args.system:
        messages.insert(0, ChatMessage.system(args.system))
    out = sys.stdout
    view = StreamView(out, tty=out.isatty())
    updates: list[ChatResponseUpdate] = []
    print_waiting(target.shown_url, target.timeout, sys.stderr)
    async with closing(target.answering_client()) as client:
        async for update in client.get_streaming_response(messages, options):
            updates.append(update)
            view.show(update)
    view.end()
    response = ChatResponse.from_updates(updates)
    for call in response.tool_calls:
        arguments = json.dumps(call.arguments, ensure_ascii=False)
        out.write(terminal_safe(f"tool call: {call.name}({arguments})  id={call.call_id}") + "\n")
    print_stats(response, updates, sys.stderr)
    return EXIT_OK
