"""Tool calls that a model wrote as plain text, recovered as ``FunctionCallContent``.

``TextToolCallParser(format="auto", tools=None)`` handles hermes, qwen3_coder, mistral,
llama3_json, pythonic, kimi_k2, deepseek_v3, deepseek_v31, gpt_oss and nemotron;
docs/formats.md has their grammars. Layout: ``parser`` (the public class), ``scanner`` (the
one streaming scanner), ``registry`` (name → format, the only importer of ``formats/``),
``formats/`` (one module per format), and helpers shared by formats (``protocol``,
``trackers``, ``json_calls``, ``schema``, ``literals``, ``tools``, ``unclosed``). Separating
reasoning is ``providers.reasoning``'s job; wiring both into the client is
``providers.layers.text_recovery``'s. ``offered_tools`` (and its names) say which tools a
request let the model call: the one rule, shared with the wire clients, for when a call is
executable.
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from providers.lazy_exports import lazy_exports as _lazy_exports

if _TYPE_CHECKING:
    from providers.text_tool_calls.parser import TextToolCallParser
    from providers.text_tool_calls.protocol import ERROR_KEY
    from providers.text_tool_calls.registry import FORMAT_NAMES
    from providers.text_tool_calls.tools import not_offered, offered_tool_names, offered_tools

__all__ = [
    "ERROR_KEY",
    "FORMAT_NAMES",
    "TextToolCallParser",
    "not_offered",
    "offered_tool_names",
    "offered_tools",
]

# Lazy: every request asks ``offered_tools`` which tools it offered, but only a request that
# offered some needs a parser, and the parser loads every format (its registry compiles their
# patterns): about 10 ms of a first request's cold start that a plain chat never uses.
__getattr__, __dir__ = _lazy_exports(
    __name__,
    {
        "ERROR_KEY": ".protocol",
        "FORMAT_NAMES": ".registry",
        "TextToolCallParser": ".parser",
        "not_offered": ".tools",
        "offered_tool_names": ".tools",
        "offered_tools": ".tools",
    },
)
