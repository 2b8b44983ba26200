"""``OaicompatAgentsModel`` and the transports as a user meets them: built from a configuration
file (the role positional, as in every adapter), closed with what they own, and, without their
extra, an import error that says what to install.
"""

from __future__ import annotations

import inspect
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.integrations.frameworks import require
from tests.integrations.openai_matrix import MatrixServer, recorded

agents = require("agents")
agents.set_tracing_disabled(True)


def _import_without(module: str, blocked: str) -> str:
    """The error importing ``module`` gives when ``blocked`` cannot be imported."""
    script = textwrap.dedent(
        f"""
        import sys
        sys.modules[{blocked!r}] = None
        try:
            import {module}
        except ModuleNotFoundError as error:
            print(type(error).__name__, error.name, str(error), sep="|")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    return done.stdout.strip()


@pytest.mark.parametrize(
    ("module", "blocked", "extra"),
    [
        ("providers.integrations.openai_agents", "agents", "openai-agents"),
        ("providers.integrations.openai_agents", "openai", "openai-agents"),
        ("providers.integrations.openai_httpx2", "httpx2", "openai"),
    ],
)
def test_a_missing_extra_names_the_install_command(module: str, blocked: str, extra: str) -> None:
    kind, _, message = _import_without(module, blocked).split("|", 2)
    assert kind == "ModuleNotFoundError"
    assert f"pip install 'oaicompat[{extra}]'" in message
    assert module in message


def test_the_transports_need_no_framework() -> None:
    """``providers.integrations.openai`` is httpx only (a core dependency)."""
    assert _import_without("providers.integrations.openai", "openai") == ""


def _write_config(path: Path, base_url: str) -> Path:
    path.write_text(
        "backends:\n"
        f'  replay: {{base_url: "{base_url}/v1", model_id: served, backend: vllm}}\n'
        "roles: {main: replay, other: replay}\n"
    )
    return path


@pytest.mark.parametrize(
    "target",
    [
        "providers.integrations.openai_agents:OaicompatAgentsModel",
        "providers.integrations.openai:OaicompatTransport",
        "providers.integrations.openai:OaicompatSyncTransport",
        "providers.integrations.openai_httpx2:OaicompatHttpx2Transport",
    ],
)
def test_from_config_takes_path_and_role_positionally(target: str) -> None:
    module, _, name = target.partition(":")
    cls = getattr(__import__(module, fromlist=[name]), name)
    parameters = list(inspect.signature(cls.from_config).parameters.values())
    assert [(p.name, p.kind, p.default) for p in parameters[:3]] == [
        ("path", inspect.Parameter.POSITIONAL_OR_KEYWORD, "oaicompat.yaml"),
        ("role", inspect.Parameter.POSITIONAL_OR_KEYWORD, "main"),
        ("telemetry", inspect.Parameter.KEYWORD_ONLY, False),
    ]


async def test_a_model_from_config_answers_and_closes_its_pipeline(tmp_path: Path) -> None:
    from providers.integrations.openai_agents import OaicompatAgentsModel

    async with MatrixServer([recorded("vllm/captured--plain--nonstream-text")]) as server:
        config = _write_config(tmp_path / "oaicompat.yaml", server.base_url)
        model = OaicompatAgentsModel.from_config(config, "other")
        agent = agents.Agent(name="plain", model=model)
        result = await agents.Runner.run(agent, "Hello?")
        await model.close()
    assert model.model == "served"  # the configured model id names it in traces
    assert result.final_output == recorded_text("vllm/captured--plain--nonstream-text")
    assert server.bodies[0]["model"] == "served"
    assert model.openai_client.is_closed()


def recorded_text(transcript: str) -> str:
    from tests.integrations.exchanges import BY_ID

    text: str = BY_ID[transcript].expected["text"]
    return text


@pytest.mark.parametrize("owns", [True, False])
async def test_closing_the_model_closes_the_pipeline_it_owns(owns: bool) -> None:
    from providers import DelegatingChatClient, create_chat_client
    from providers.integrations.openai_agents import OaicompatAgentsModel

    closed: list[bool] = []

    class Recording(DelegatingChatClient):
        async def aclose(self) -> None:
            closed.append(True)
            await super().aclose()

    pipeline = Recording(create_chat_client("http://127.0.0.1:9/v1", backend="vllm"))
    async with OaicompatAgentsModel(pipeline, owns_client=owns) as model:
        assert model.model == "oaicompat"  # no configured model id
    assert closed == ([True] if owns else [])
