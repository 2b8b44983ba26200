"""``oaicompat serve``: the standard pipeline behind an OpenAI-compatible HTTP server.

Agents that are not written in Python (the OpenAI Node SDK, editor plugins, coding agents in Go
or Rust) talk to the gateway as to any OpenAI server and get what the Python callers get: text
tool calls as structured ``tool_calls``, reasoning in its own field, retry and fallback before
the first token, and typed errors in OpenAI's envelope. ``docs/serve.md`` covers running it.
"""
