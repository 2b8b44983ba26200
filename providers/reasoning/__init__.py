"""Separating reasoning from the answer when a server leaves the reasoning markup in ``content``.

A server whose reasoning parser is off (llama.cpp ``--reasoning-format none``, vLLM or SGLang
started without ``--reasoning-parser``) returns ``<think>…</think>`` or harmony channels as plain
text. ``ReasoningParser`` splits such text into ``TextReasoningContent`` and ``TextContent``, in
order, for a whole text (``parse``) or a stream (``feed``/``finish``). docs/formats.md §6 has
the grammars and what the servers' own parsers do; the choices below follow them.

Formats:

* ``think``, ``qwen3``, ``kimi_k2``: ``<think>`` opens reasoning, ``</think>`` closes it. Text
  before any tag is content, as in SGLang's detectors (vLLM's ``kimi_k2`` assumes reasoning
  instead: say so with ``starts_in_reasoning=True``).
* ``deepseek_r1``: the same tags, but the chat template put ``<think>`` into the prompt, so the
  output starts inside reasoning (``starts_in_reasoning`` defaults to ``True``, as on both
  servers). Everything up to ``</think>`` is reasoning; a leading ``<think>`` is consumed. Qwen3
  thinking models whose template pre-fills ``<think>`` need ``starts_in_reasoning=True`` too.
* ``kimi``: ``◁think▷`` … ``◁/think▷`` (U+25C1, U+25B7).
* ``gpt_oss``: harmony messages. ``analysis`` is reasoning; ``final``, a ``commentary`` preamble
  (no recipient) and a tool's response (``<|start|>functions.X to=assistant``) are content, one
  part each, joined by a line break as vLLM joins preambles and the answer; their headers and
  the ``<|end|>``/``<|return|>``/``<|call|>`` terminators are markup. Messages of the prompt's
  roles (``system``, ``developer``, ``user``: a rendered conversation echoed) are dropped, as
  both servers drop them, and so is a bare ``<|start|>assistant`` at the end. A message with a
  ``to=`` recipient, or of an unknown channel, is copied into the content verbatim, header and
  terminator included: tool calls are the tool-call parser's job, and it needs
  ``to=functions.NAME`` and ``<|call|>`` to find them. A header that never reaches
  ``<|message|>`` is malformed and kept as raw text.
* ``auto``: the first marker decides: ``<think>``/``</think>`` give ``think``, ``◁think▷``/
  ``◁/think▷`` give ``kimi``, ``<|channel|>``/``<|start|>`` give ``gpt_oss``.

Rules shared by the tag formats, and why:

* A tool-call marker (``TOOL_CALL_MARKERS``) seen in reasoning may end it: Qwen3 and Kimi-K2
  call tools without closing ``</think>``, and both servers split there so that the tool parser
  sees the marker. But a model also *thinks about* calls, markup included, and markup inside
  ``<think>…</think>`` is reasoning, never a call (issue #20). So what follows the marker is
  held until it is decided: a closing tag makes all of it reasoning; the end of the stream
  without one makes the marker and all that follows content. ``calls_end_reasoning=False``
  (no tools were offered: there is no call to find) leaves the markers as reasoning text.
* The first closing tag ends reasoning, and from then on every tag is plain content: vLLM and
  SGLang both split at the first ``</think>`` (``A</think>B</think>C`` gives content
  ``B</think>C``). A closing tag in content before any reasoning is content too (SGLang). An
  opening tag inside reasoning is plain reasoning text once reasoning has said something
  (``<think>Outer<think>Inner``), and consumed before that (R1-0528 emits the one its prompt
  already had; SGLang collapses ``<think><think>``). An opening tag in content before the first
  closing tag opens reasoning, so text before it stays content.
* An unclosed ``<think>`` at end of stream leaves its text as reasoning: the model was cut off
  while thinking (vLLM treats output without ``</think>`` the same way).

Every input character ends up in one output content, in order, except recognised markup (and
messages of the prompt's roles); whitespace is kept exactly. Streaming holds back only a suffix
that may become a marker (``</thi``, ``◁``, ``<|``), a harmony header until ``<|message|>``, and
reasoning after a tool-call marker until it is decided (``held_bytes``). Any cutting of a text
into deltas yields the same contents as ``parse`` of the whole text.
"""

from providers.lazy_exports import lazy_exports as _lazy_exports
from providers.reasoning.parser import FORMATS as FORMATS
from providers.reasoning.parser import TOOL_CALL_MARKERS as TOOL_CALL_MARKERS
from providers.reasoning.parser import ReasoningParser as ReasoningParser

_lazy_exports(__name__, {})
