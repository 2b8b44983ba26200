"""pydantic-ai's ``tool_choice`` setting as the tools a request declares and its ``tool_mode``.

pydantic-ai resolves the user's ``tool_choice`` (``"none"``, ``"required"``, a list of names, a
``ToolOrOutput``) against the run's function and output tools itself, into ``auto``, ``none``,
``required`` or one of those with a subset of names; each model then writes that its own way.
This one does as ``OpenAIChatModel`` does over a server without ``allowed_tools``: a subset is
sent by declaring only those tools, and a required choice of exactly one tool names it.
Without this, the setting was dropped without a word.
"""

from __future__ import annotations

from providers.abstractions import ChatToolMode, ToolDeclaration
from providers.integrations._extras import missing_extra

try:
    from pydantic_ai.models import ModelRequestParameters
    from pydantic_ai.models._tool_choice import resolve_tool_choice
    from pydantic_ai.settings import ModelSettings
except ModuleNotFoundError as error:
    raise missing_extra(error, "providers.integrations.pydantic_ai", "pydantic-ai") from error

__all__ = ["tool_selection"]

_MODES = {"auto": None, "none": ChatToolMode.NONE, "required": ChatToolMode.REQUIRED}
"""``auto`` is left unsent, as before: it is every server's default with tools."""


def tool_selection(
    settings: ModelSettings | None, parameters: ModelRequestParameters
) -> tuple[list[ToolDeclaration], ChatToolMode | None]:
    """The tools to declare (function tools the model may see, then output tools) and the tool
    mode. ``resolve_tool_choice`` (pydantic-ai's, from the pinned version's module) raises
    pydantic-ai's ``UserError`` for a choice the run cannot honour, before anything is sent."""
    resolved = resolve_tool_choice(settings, parameters)
    mode, names = resolved if isinstance(resolved, tuple) else (resolved, None)
    tools = [
        ToolDeclaration(tool.name, tool.description, tool.parameters_json_schema)
        for name, tool in parameters.declared_tool_defs.items()
        if names is None or name in names
    ]
    if not tools:
        return [], None
    if mode == "required" and names is not None and len(tools) == 1:
        return tools, ChatToolMode.require(tools[0].name)
    return tools, _MODES[mode]
