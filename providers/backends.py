"""Everything the library knows about one backend, as one frozen row: the only backend table.

A row (``BackendProfile``) holds, for one server:

* the *request* quirks the chat path obeys (``reasoning_fields`` … ``json_schema_fields``);
* the *Responses API* quirks (``replays_function_calls``);
* what *discovery* asks it after detection (``probes``, ``model_field_ignored``);
* which *timings extractor* reads what it reports (``timings``);
* what its ``/v1/embeddings`` honours (``embedding_encoding``, ``embedding_batch_limit``).

The other per-backend views are derived from ``PROFILES`` and never spelled twice:
``providers.responses.RESPONSES_QUIRKS``, ``capabilities.TRAITS`` and
``telemetry.extractor_for``. Code reads a row's fields and never tests a backend's name.

The normaliser is tolerant by construction (it reads every known field name, accepts every
known chunk shape), so most differences need no flag at all. What remains is what a server
punishes or what only it can answer, and each default is the cautious choice for a server we
have never seen.

Adding a backend (a ``Backend`` constant, its row below, its transcripts and fingerprint, and the
tests that guard them): docs/extending.md, "A new backend".

This module sits at rank 1 and may import only ``providers.abstractions``: probe names are
``capabilities.models.Source`` values spelled as plain strings, and the timings key is the plain
name of a ``telemetry.extractors`` kind.
"""

from __future__ import annotations

from typing import Final, Literal

from providers.abstractions.records import value_class

__all__ = [
    "PROFILES",
    "Backend",
    "BackendProfile",
    "EmbeddingEncoding",
    "JsonSchemaField",
    "TimingsKind",
    "profile_for",
]


class Backend:
    """Well-known backend names, each the key of its row in ``PROFILES``. Open: any other
    lower-case string is a valid backend name (it gets the ``generic`` row), so a server we have
    never seen never raises."""

    LLAMACPP: Final = "llamacpp"
    LLAMA_CPP_PYTHON: Final = "llama-cpp-python"
    VLLM: Final = "vllm"
    SGLANG: Final = "sglang"
    OLLAMA: Final = "ollama"
    LMSTUDIO: Final = "lmstudio"
    OPENAI: Final = "openai"
    GENERIC: Final = "generic"


TimingsKind = Literal["llamacpp", "vllm", "sglang", "generic"]
"""Which ``telemetry.extractors`` kind reads a backend's usage and timings."""

JsonSchemaField = Literal[
    "response_format", "json_object_schema", "json_schema", "structured_outputs"
]
"""A chat-request key that can carry a JSON Schema for the answer:

* ``response_format``: OpenAI's ``{"type": "json_schema", "json_schema": {"name", "schema",
  "strict"}}``;
* ``json_object_schema``: ``response_format: {"type": "json_object", "schema": schema}``,
  llama-cpp-python's only form (its ``type`` is ``text`` or ``json_object``; ``json_schema``
  fails validation, answered with a 500);
* ``json_schema``: llama.cpp's top-level key, the schema alone;
* ``structured_outputs``: vLLM's ``{"json": schema}`` (vLLM ≥ 0.10; ``guided_json`` before,
  which later versions ignore with a warning)."""


EmbeddingEncoding = Literal["base64", "float"]
"""An ``encoding_format`` of ``/v1/embeddings``: ``base64`` (little-endian float32 bytes, about
a third of the float list's size and far cheaper to read) or ``float`` (a JSON list)."""


@value_class(frozen=True)
class BackendProfile:
    """One backend's row of ``PROFILES``: see the module docstring."""

    name: str
    """The backend this row describes; also the ``backend`` recorded on errors and timings."""

    # --- Chat Completions requests ---------------------------------------------------------

    reasoning_fields: tuple[str, ...] = ("reasoning_content", "reasoning")
    """Delta/message keys carrying reasoning, in order of preference. vLLM ≥ Jan 2026 sends
    ``reasoning``; llama.cpp and SGLang ``reasoning_content``; vLLM Nov 2025 to Jan 2026 sent both
    with the same text, so only the first present one is read (no double count)."""

    stop_sequence_fields: tuple[str, ...] = ("stop_reason", "matched_stop")
    """Choice keys naming the stop string or token that ended generation (vLLM ``stop_reason``,
    SGLang ``matched_stop``), unified as ``additional_properties["stop_sequence"]``."""

    request_stream_usage: bool = True
    """Send ``stream_options.include_usage`` when streaming. Default on: every server here only
    reports usage in a stream when asked. It is never sent without ``stream: true`` (vLLM: 400)."""

    merge_system_messages: bool = False
    """Merge every system message into one leading message. Strict chat templates (Qwen and
    Llama under vLLM) answer 400 "System message must be at the beginning" otherwise."""

    max_tokens_field: str = "max_tokens"
    """Body key for ``ChatOptions.max_output_tokens``. All three servers accept ``max_tokens``;
    OpenAI's reasoning models require ``max_completion_tokens``."""

    replay_reasoning: bool = False
    """Send earlier assistant reasoning back as ``reasoning_content`` (DeepSeek-style APIs want
    it; most chat templates drop or mis-render it)."""

    json_schema_fields: tuple[JsonSchemaField, ...] = ("response_format",)
    """Where a ``json_schema`` response format (``ChatResponseFormat.for_type``) goes. Every
    server here honours ``response_format``, streamed or not, and constrains decoding to it:
    llama-server compiles it to a grammar (checked live in
    ``tests/integration/test_llamacpp_structured_output.py``), vLLM 0.33 turns it into
    ``structured_outputs.json`` (``structured_outputs_from_response_format``, which also lets it
    win over a ``structured_outputs`` sent beside it), SGLang 0.5 into the sampling
    ``json_schema``; both rigs check the schema arrives there. So every row keeps the default
    and sends the schema once; a server that knows only its native key gets a row naming it."""

    # --- Request options: reasoning, constraints, what servers ignore ---------------------
    # (each read by ``capabilities.reasoning_mapping``, ``capabilities.constraint_mapping`` or
    # ``providers.chat_completions.option_enforcement``; the docs' options page prints them)

    template_kwargs: bool = False
    """The server passes ``chat_template_kwargs`` to the chat template, where the families'
    thinking switches live (``enable_thinking``, ``thinking``). Default off: a server that drops
    the key would turn "thinking off" into a silent no-op, so only rows known to pass it on
    get it, and the rest refuse a switch that needs it. llama.cpp, vLLM and SGLang merge it
    over their server defaults (on chat and on Responses); llama-cpp-python ignores it."""

    effort_field: str | None = None
    """Top-level body key taking a reasoning effort word (``reasoning_effort``), for the
    families that read one (gpt-oss, OpenAI's reasoning models). ``None``: no such key.
    vLLM 0.34, SGLang 0.5 and llama.cpp (since PR #26045, July 2026) all pass it to the template
    as ``reasoning_effort``; llama-cpp-python's request model has no such field and drops it."""

    include_reasoning_field: str | None = None
    """Body key that, set ``false``, makes the server leave reasoning out of the answer
    (vLLM's ``include_reasoning``: ``message.reasoning`` is None; the model still thinks).
    Sent for ``ReasoningOutput.NONE``, which the client also enforces on the answer. ``None``:
    no such key (SGLang's ``separate_reasoning: false`` moves it into the text instead)."""

    enforces_json_schema: bool = False
    """The server constrains decoding to a JSON Schema it is sent (a grammar engine: llama.cpp,
    vLLM, SGLang; OpenAI with ``strict``). Either way the answer is checked afterwards; this
    says whether the honours table calls that ``honoured`` or ``enforced here``."""

    constraint_keys: tuple[tuple[str, str], ...] = ()
    """Constraint form → dotted body key (``structured_outputs.regex`` is ``{"structured_outputs":
    {"regex": ...}}``). Forms: ``regex``, ``choice``, ``grammar:gbnf``, ``grammar:ebnf``,
    ``grammar:lark``. A form not listed is written another way where one exists (a choice as a
    regex alternation or a GBNF rule) and refused otherwise. Default: none."""

    stop_in_reasoning: bool = True
    """The server matches stop strings on the raw output, reasoning included, so a stop string
    can end the answer inside the thinking and leak ``</think>`` into the text (vLLM #14170,
    SGLang #85). Where true and the model may think, stop sequences are applied to the answer's
    text here instead of sent. Default true, the cautious reading of a server we do not know."""

    honours_single_tool_call: bool = False
    """``parallel_tool_calls: false`` yields at most one call (vLLM since PR #26233). Either way
    the client keeps only the first call when ``allow_multiple_tool_calls=False``; this says
    whether that is the server's doing (``honoured``) or the client's (``enforced here``)."""

    droppable_keys: tuple[str, ...] = ("stream_options",)
    """Optional body keys the client adds on its own: a 400/422 naming one of them is answered
    by sending once more without it, and the client leaves it out from then on (Mistral's API
    answers 422 ``extra_forbidden`` to ``stream_options``)."""

    # --- Responses API requests ------------------------------------------------------------

    responses_constraints: bool = False
    """The Responses API takes the row's ``constraint_keys`` too (vLLM's ``ResponsesRequest``
    has ``structured_outputs``); otherwise a regex, choice or grammar is refused there (SGLang's
    has no ``regex`` / ``ebnf``)."""

    replays_function_calls: bool = True
    """Does ``previous_response_id`` bring back the previous response's ``function_call``
    items? Default true (OpenAI; SGLang's captured ``continue-previous-response-id`` prompt
    replays the whole assistant turn). vLLM 0.33 rebuilds the stored history from ``message``
    items only, so the model sees a tool result with no call before it
    (``transcripts/vllm/captured--qwen3-hermes-store--responses--continue-previous-response-id``,
    ``engine_prompt``); with false, the client sends those calls again itself."""

    # --- Discovery (capabilities) ----------------------------------------------------------

    probes: tuple[str, ...] = ()
    """Discovery probes (``capabilities.models.Source`` names, run by ``capabilities.probes``)
    after detection, besides ``/v1/models`` which every backend gets. Default: none — an unknown
    server is asked nothing it might not understand."""

    model_field_ignored: bool = False
    """The server ignores the request's ``model`` (llama.cpp single-model mode answers with the
    loaded model whatever is sent, docs/wire.md §5), so a configured id that is not served is not
    an error there. Default ``False``: vLLM answers 404, SGLang misreads ``a:b`` as a LoRA
    adapter, Ollama and LM Studio load whatever the name says."""

    # --- Embeddings (``providers.embeddings``) ----------------------------------------------

    embedding_encoding: EmbeddingEncoding = "float"
    """The ``encoding_format`` asked for. Answers are read by their shape whatever was asked,
    so this only chooses the cheaper form where the server is known to honour it: llama.cpp
    (PR #10967, Dec 2024), vLLM, SGLang (0.5.23's ``serving_embedding.py`` writes little-endian
    float32 for it), Ollama and OpenAI answer ``base64``. Default ``float``, which every server
    accepts: old vLLM refused ``base64`` with a 400, LM Studio ignores the field and sends
    floats anyway."""

    embedding_batch_limit: int | None = None
    """Most inputs one ``/v1/embeddings`` request may carry (OpenAI: 2048); longer lists are
    split and reassembled in order. ``None``: no count limit is known, and the client's own
    default bounds each answer. (llama.cpp limits each *input* to ``--ubatch-size`` tokens,
    which no split can fix: ``EmbeddingInputTooLargeError``.)"""

    # --- Telemetry -------------------------------------------------------------------------

    timings: TimingsKind = "generic"
    """Which extractor reads the server's usage and timings (``telemetry.extractor_for``).
    Default ``generic``: standard ``usage`` plus a llama.cpp-style ``timings`` object if one is
    there, checked by name and type."""


PROFILES: dict[str, BackendProfile] = {
    row.name: row
    for row in (
        BackendProfile(
            Backend.LLAMACPP,
            template_kwargs=True,
            effort_field="reasoning_effort",
            enforces_json_schema=True,
            # No regex key (an unknown key is ignored); a choice becomes a GBNF alternation.
            constraint_keys=(("grammar:gbnf", "grammar"),),
            honours_single_tool_call=True,
            probes=("props",),
            model_field_ignored=True,
            embedding_encoding="base64",
            timings="llamacpp",
        ),
        # llama-cpp-python's FastAPI server: no /props, /version or /health, one loaded model
        # answers for any requested id, usage never in a stream (docs/wire.md §7).
        BackendProfile(
            Backend.LLAMA_CPP_PYTHON,
            json_schema_fields=("json_object_schema",),
            enforces_json_schema=True,
            constraint_keys=(("grammar:gbnf", "grammar"),),
            model_field_ignored=True,
        ),
        BackendProfile(
            Backend.VLLM,
            merge_system_messages=True,
            template_kwargs=True,
            effort_field="reasoning_effort",
            include_reasoning_field="include_reasoning",
            enforces_json_schema=True,
            # xgrammar (the default) reads GBNF-style EBNF and recognises Lark; outlines answers
            # 400 to any grammar, which is loud, not silent.
            constraint_keys=(
                ("regex", "structured_outputs.regex"),
                ("choice", "structured_outputs.choice"),
                ("grammar:gbnf", "structured_outputs.grammar"),
                ("grammar:ebnf", "structured_outputs.grammar"),
                ("grammar:lark", "structured_outputs.grammar"),
            ),
            responses_constraints=True,
            honours_single_tool_call=True,
            replays_function_calls=False,
            probes=("version",),
            embedding_encoding="base64",
            timings="vllm",
        ),
        # /server_info is SGLang's only version source (docs/wire.md §1.3).
        BackendProfile(
            Backend.SGLANG,
            template_kwargs=True,
            effort_field="reasoning_effort",
            enforces_json_schema=True,
            # No choice key (written as a regex alternation) and no top-level json_schema on
            # chat (response_format carries it).
            constraint_keys=(("regex", "regex"), ("grammar:ebnf", "ebnf")),
            probes=("model_info", "server_info"),
            timings="sglang",
            embedding_encoding="base64",
        ),
        BackendProfile(
            Backend.OLLAMA,
            probes=("api_version", "api_show", "api_ps"),
            embedding_encoding="base64",
        ),
        BackendProfile(Backend.LMSTUDIO, probes=("api_v0_models",)),
        BackendProfile(
            Backend.OPENAI,
            max_tokens_field="max_completion_tokens",
            effort_field="reasoning_effort",
            enforces_json_schema=True,  # with strict: true
            stop_in_reasoning=False,  # reasoning is never returned as text
            honours_single_tool_call=True,
            embedding_encoding="base64",
            embedding_batch_limit=2048,
        ),
        BackendProfile(Backend.GENERIC),
    )
}
"""One row per ``Backend`` constant, keyed by name."""


def profile_for(backend: str | BackendProfile | None) -> BackendProfile:
    """The row for a backend name; unknown names fall back to the tolerant generic row."""
    if isinstance(backend, BackendProfile):
        return backend
    return PROFILES.get((backend or Backend.GENERIC).lower(), PROFILES[Backend.GENERIC])
