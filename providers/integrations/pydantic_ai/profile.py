"""What pydantic-ai may ask of an oaicompat backend: its ``ModelProfile``, from the backend's row.

pydantic-ai checks a model's profile before it sends anything: ``NativeOutput`` is refused
("Native structured output is not supported by this model") unless the profile says
``supports_json_schema_output``, and the unified ``thinking`` setting is dropped without a word
unless it says ``supports_thinking``. A model without a pydantic-ai provider gets the defaults,
which say no to both; this profile says what the backend's row (``providers.backends``) knows.

* ``supports_json_schema_output``: the row's ``enforces_json_schema`` (llama.cpp, vLLM, SGLang,
  llama-cpp-python and OpenAI constrain decoding to the schema; an unknown server is not
  trusted to, so ``NativeOutput`` stays refused there and ``ToolOutput`` or ``PromptedOutput``
  serve). oaicompat checks the answer against the schema either way.
* ``supports_thinking``: always. The setting becomes ``ChatOptions.reasoning``, which the
  request builder maps per backend and model family, or refuses before sending
  (``capabilities.reasoning_mapping``): a setting the server cannot honour is an error, never
  a silent no-op.
* ``thinking_always_enabled``: the model's family (``capabilities.reasoning_families``, from the
  model id) has no off switch (gpt-oss, QwQ, R1). pydantic-ai's ``thinking=False`` then means
  "as little as the model allows", so it is sent as the lowest effort instead of refused.
"""

from __future__ import annotations

from capabilities.reasoning_families import reasoning_family_for
from providers.backends import profile_for
from providers.integrations._extras import missing_extra

try:
    from pydantic_ai.profiles import ModelProfile
except ModuleNotFoundError as error:
    raise missing_extra(error, "providers.integrations.pydantic_ai", "pydantic-ai") from error

__all__ = ["backend_profile"]


def backend_profile(backend: str | None, model_id: str | None) -> ModelProfile:
    """The profile of ``model_id`` served by ``backend`` (a row name; unknown: the generic row;
    a model id naming no known family: thinking can be switched off)."""
    row = profile_for(backend)
    family = reasoning_family_for(model_id)
    return ModelProfile(
        supports_json_schema_output=row.enforces_json_schema,
        supports_thinking=True,
        thinking_always_enabled=family is not None and family.mode in ("always", "levels"),
    )
