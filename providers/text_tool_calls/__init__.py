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
    from providers.text_tool_calls.parser import TextToolCallParser as TextToolCallParser
    from providers.text_tool_calls.protocol import ERROR_KEY as ERROR_KEY
    from providers.text_tool_calls.registry import FORMAT_NAMES as FORMAT_NAMES
    from providers.text_tool_calls.tools import not_offered as not_offered
    from providers.text_tool_calls.tools import offered_tool_names as offered_tool_names
    from providers.text_tool_calls.tools import offered_tools as offered_tools

# Lazy: every request asks ``offered_tools`` which tools it offered, but only a request that
# offered some needs a parser, and the parser loads every format (its registry compiles their
# patterns): about 10 ms of a first request's cold start that a plain chat never uses.
_lazy_exports(
    __name__,
    {
        ".parser": ("TextToolCallParser",),
        ".protocol": ("ERROR_KEY",),
        ".registry": ("FORMAT_NAMES",),
        ".tools": ("not_offered", "offered_tool_names", "offered_tools"),
    },
)
