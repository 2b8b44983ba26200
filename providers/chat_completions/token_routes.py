"""Where each backend counts a chat's tokens: one row per backend, read as data.

From each server's source:

* vLLM (``vllm/entrypoints/serve/tokenize/protocol.py``): ``POST /tokenize`` (at the server's
  root) takes a chat's ``messages`` and ``tools`` (``TokenizeChatRequest``; the generation prompt
  added by default) and answers ``{count, max_model_len, tokens}``: exact, with the context
  window.
* llama.cpp (``tools/server``): ``POST /apply-template`` renders a chat body exactly as
  ``/v1/chat/completions`` would (``{prompt}``), and ``POST /tokenize`` cuts ``content`` into
  ``{tokens}``; the chat path adds and parses special tokens, so the count asks for both.
* SGLang 0.5.23 (``serving_tokenize.py``, ``TokenizeRequest`` in ``protocol.py``): ``POST
  /tokenize`` takes a chat's ``messages`` and ``tools`` too and renders them "as for a chat
  completion" when ``add_generation_prompt`` is left out (sent, it is refused without a Jinja
  template), answering ``{tokens, count, max_model_len}``: exact. Its ``max_model_len`` is the
  tokenizer's ``model_max_length`` when that is a sane number (often a placeholder larger than
  the server's context), so it is not read as the window.

Any other backend has no tokenizer route we know: its count is an estimate, marked as such.
"""

from __future__ import annotations

from typing import Literal

from providers.abstractions.records import value_class
from providers.backends import Backend

__all__ = ["CHAT_KEYS", "TOKENIZE_ROUTES", "TokenizeForm", "TokenizeRoute", "tokenize_route_for"]

TokenizeForm = Literal["chat", "template"]
"""``chat``: the chat's messages go to ``path``; ``template``: they go to ``template_path``,
whose ``prompt`` goes to ``path`` as text."""


@value_class(frozen=True)
class TokenizeRoute:
    """How one backend counts a chat's tokens."""

    form: TokenizeForm
    path: str
    """Below the server's root (``Endpoint.server_path``)."""
    template_path: str | None = None
    text_field: str = "prompt"
    """The key of the rendered prompt (``template``)."""
    constant_fields: tuple[tuple[str, object], ...] = ()
    """Keys every tokenize request carries."""
    reports_context: bool = False
    """The answer's ``max_model_len`` is the server's context window."""
    exact: bool = True


CHAT_KEYS = ("model", "messages", "tools", "chat_template_kwargs")
"""What a tokenize or template request takes of the chat body: what the template renders."""

TOKENIZE_ROUTES: dict[str, TokenizeRoute] = {
    Backend.VLLM: TokenizeRoute(
        "chat",
        "/tokenize",
        constant_fields=(("add_generation_prompt", True),),
        reports_context=True,
    ),
    Backend.LLAMACPP: TokenizeRoute(
        "template",
        "/tokenize",
        template_path="/apply-template",
        text_field="content",
        constant_fields=(("add_special", True), ("parse_special", True)),
    ),
    Backend.SGLANG: TokenizeRoute("chat", "/tokenize"),
}
"""One row per backend with a tokenizer route; any other backend's count is an estimate."""


def tokenize_route_for(backend: str | None) -> TokenizeRoute | None:
    """The row for a backend name; ``None`` where the server has no tokenizer route."""
    return TOKENIZE_ROUTES.get((backend or "").lower())
