"""``ChatOaicompat`` carries what ``ChatOpenAI`` carries (issue 34), checked on the wire.

Each test sends through a loopback server that records what it received, so the claim is about
the request a server sees: headers as headers (never body keys), ``extra_body`` merged at the
top level (never a literal ``"extra_body"`` key), reasoning settings mapped, functions accepted
as tools wherever tools are, and LangChain's ``thread_id`` as the session key.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from providers import (
    ChatClient,
    ChatInput,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    ConfigurationError,
    DelegatingChatClient,
    ReasoningEffort,
    ReasoningOptions,
    ReasoningOutput,
    create_chat_client,
)
from providers.layers.session_affinity import SessionAffinity
from providers.replay.server import ReceivedRequest, RecordedReply, ReplayServer
from tests.integrations.frameworks import require
from tests.integrations.replay_turns import QUESTION, TRANSCRIPTS
from tests.integrations.servers import InThread
from tests.integrations.test_langchain import write_config

langchain_core = require("langchain_core")
agents = require("langchain.agents")

from providers.integrations.langchain import ChatOaicompat  # noqa: E402

WHOLE = (TRANSCRIPTS / "vllm" / "captured--plain--nonstream-text.raw").read_bytes()
STREAM = (TRANSCRIPTS / "vllm" / "captured--plain--stream-text.sse").read_bytes()
ANSWER = "It is sunny in Paris."
NO_THINKING = {"chat_template_kwargs": {"enable_thinking": False}}


def answer(request: ReceivedRequest) -> RecordedReply:
    if json.loads(request.body).get("stream"):
        return RecordedReply(200, STREAM, {"Content-Type": "text/event-stream"})
    return RecordedReply(200, WHOLE, {"Content-Type": "application/json"})


def pipeline(server: ReplayServer, **kwargs: Any) -> ChatClient:
    url = f"{server.base_url}/v1"
    return create_chat_client(url, "Qwen/Qwen3-0.6B", backend="vllm", telemetry=False, **kwargs)


def bodies(server: ReplayServer) -> list[dict[str, Any]]:
    return [json.loads(request.body) for request in server.requests]


class Recording(DelegatingChatClient):
    """Keeps the options of each request (what the pipeline was asked, before any mapping)."""

    def __init__(self, inner: ChatClient) -> None:
        super().__init__(inner)
        self.options: list[ChatOptions | None] = []

    async def get_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> ChatResponse:
        self.options.append(options)
        return await super().get_response(messages, options)

    def get_streaming_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        self.options.append(options)
        return super().get_streaming_response(messages, options)


# --- item 2: per-request headers ---------------------------------------------------------------


async def test_headers_are_sent_as_headers_and_never_in_the_body() -> None:
    async with ReplayServer(answer) as server:
        model = ChatOaicompat(
            client=pipeline(server),
            default_headers={"X-App": "field", "X-Both": "field"},
            model_kwargs={"extra_headers": {"X-Kwargs": "model-kwargs"}},
        )
        await model.ainvoke(QUESTION)
        await model.bind(extra_headers={"X-Both": "bound"}).ainvoke(QUESTION)
        chunks = [c async for c in model.astream(QUESTION, extra_headers={"X-Call": "call"})]
        await model.aclose()
    assert "".join(c.text for c in chunks) == ANSWER
    first, bound, streamed = (request.headers for request in server.requests)
    assert (first["x-app"], first["x-both"]) == ("field", "field")
    assert first["x-kwargs"] == "model-kwargs"
    assert (bound["x-app"], bound["x-both"]) == ("field", "bound")
    assert (streamed["x-app"], streamed["x-call"]) == ("field", "call")
    for request in server.requests:
        text = request.body.decode()
        assert "headers" not in text and "field" not in text and "bound" not in text


def test_default_headers_stay_out_of_repr_and_dumps() -> None:
    model = ChatOaicompat(client=None, default_headers={"Authorization": "Bearer sk-secret"})
    assert "sk-secret" not in repr(model)
    assert "sk-secret" not in str(model.model_dump())
    with pytest.raises(TypeError, match="default_headers") as caught:
        ChatOaicompat(client=None, default_headers="Bearer sk-secret")
    assert "sk-secret" not in str(caught.value)


# --- item 3: extra_body ------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["field", "model_kwargs", "bind", "call", "astream"])
async def test_extra_body_is_merged_into_the_body(where: str) -> None:
    async with ReplayServer(answer) as server:
        client = pipeline(server)
        if where == "field":
            model = ChatOaicompat(client=client, extra_body=NO_THINKING)
        elif where == "model_kwargs":
            model = ChatOaicompat(client=client, model_kwargs={"extra_body": NO_THINKING})
        else:
            model = ChatOaicompat(client=client)
        if where == "bind":
            await model.bind(extra_body=NO_THINKING).ainvoke(QUESTION)
        elif where == "call":
            await model.ainvoke(QUESTION, extra_body=NO_THINKING)
        elif where == "astream":
            [c async for c in model.astream(QUESTION, extra_body=NO_THINKING)]
        else:
            await model.ainvoke(QUESTION)
        await model.aclose()
    (body,) = bodies(server)
    assert "extra_body" not in body
    assert body["chat_template_kwargs"] == {"enable_thinking": False}


async def test_extra_body_keys_follow_the_option_rules_and_replace_as_chatopenai_does() -> None:
    async with ReplayServer(answer) as server:
        model = ChatOaicompat(
            client=pipeline(server),
            model_kwargs={"temperature": 0.1, "max_tokens": 50},
            extra_body={"top_k": 3, "temperature": 0.7},
        )
        await model.ainvoke(QUESTION)
        await model.ainvoke(QUESTION, extra_body={"max_tokens": 9, "repetition_penalty": 1.1})
        with pytest.raises(ConfigurationError, match="stream"):
            await model.ainvoke(QUESTION, extra_body={"stream": True})
        with pytest.raises(TypeError, match="extra_body"):
            await model.ainvoke(QUESTION, extra_body="top_k=3")
        await model.aclose()
    first, second = bodies(server)
    # Over the other keys, as the OpenAI SDK merges it; typed keys stay typed (max_tokens).
    assert (first["temperature"], first["top_k"], first["max_tokens"]) == (0.7, 3, 50)
    # A call's extra_body replaces the model's whole, as ChatOpenAI's payload does.
    assert "top_k" not in second and second["temperature"] == 0.1
    assert (second["max_tokens"], second["repetition_penalty"]) == (9, 1.1)


# --- reasoning ---------------------------------------------------------------------------------


async def test_reasoning_settings_are_reasoning_options() -> None:
    async with ReplayServer(answer) as server:
        recording = Recording(pipeline(server))
        model = ChatOaicompat(client=recording, reasoning_effort="none")
        await model.ainvoke(QUESTION)
        await model.ainvoke(QUESTION, reasoning_effort="high")
        summary = ChatOaicompat(client=recording, reasoning={"effort": "low", "summary": "auto"})
        await summary.ainvoke(QUESTION)
        with pytest.raises(ConfigurationError, match="disagree"):
            await summary.ainvoke(QUESTION, reasoning_effort="high")
        with pytest.raises(ConfigurationError, match="generate_summary"):
            await model.ainvoke(QUESTION, reasoning={"generate_summary": "auto"})
        await model.aclose()
    reasonings = [options.reasoning if options else None for options in recording.options]
    assert reasonings == [
        ReasoningOptions(effort=ReasoningEffort.NONE),
        ReasoningOptions(effort=ReasoningEffort.HIGH),
        ReasoningOptions(effort=ReasoningEffort.LOW, output=ReasoningOutput.SUMMARY),
    ]
    # Mapped for the family (Qwen3 on vLLM): the template's switch, not an OpenAI key.
    off, high, _ = bodies(server)
    assert off["chat_template_kwargs"] == {"enable_thinking": False}
    assert high["chat_template_kwargs"] == {"enable_thinking": True}
    assert "reasoning" not in off and "reasoning_effort" not in off


# --- constructor keywords ----------------------------------------------------------------------


async def test_chatopenai_request_fields_are_sent_and_other_keywords_refused() -> None:
    """Keywords a ``ChatOpenAI`` user brings (not ``ChatOaicompat``'s declared fields, so
    given as ``**`` here as a switching user's untyped code would)."""
    carried: dict[str, Any] = {"temperature": 0.2, "max_tokens": 12, "seed": 4}
    async with ReplayServer(answer) as server:
        model = ChatOaicompat(client=pipeline(server), **carried)
        await model.ainvoke(QUESTION)
        await model.aclose()
    (body,) = bodies(server)
    assert (body["temperature"], body["max_tokens"], body["seed"]) == (0.2, 12, 4)
    with pytest.raises(TypeError, match="api_key") as caught:
        secret: dict[str, Any] = {"api_key": "sk-secret"}
        ChatOaicompat(client=None, **secret)
    assert "sk-secret" not in str(caught.value)
    with pytest.raises(TypeError, match="both"):
        ChatOaicompat(client=None, model_kwargs={"temperature": 0.3}, **carried)


# --- item 9: functions as tools ----------------------------------------------------------------


def get_time(city: str) -> str:
    """The local time in a city."""
    return "noon"


def tool_names(body: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in body["tools"]]


async def test_a_function_is_a_tool_wherever_tools_are_accepted() -> None:
    async with ReplayServer(answer) as server:
        model = ChatOaicompat(client=pipeline(server))
        await model.bind_tools([get_time]).ainvoke(QUESTION)
        await model.bind(tools=[get_time]).ainvoke(QUESTION)
        await model.ainvoke(QUESTION, tools=[get_time], tool_choice="any")
        [c async for c in model.astream(QUESTION, tools=[get_time])]
        in_kwargs = ChatOaicompat(client=model.client, model_kwargs={"tools": [get_time]})
        await in_kwargs.ainvoke(QUESTION)
        with pytest.raises(TypeError, match="bind_tools"):
            await model.ainvoke(QUESTION, tools=[42])
        await model.aclose()
    sent = bodies(server)
    assert len(sent) == 5
    for body in sent:
        assert tool_names(body) == ["get_time"]
        assert body["tools"][0]["function"]["parameters"]["properties"] == {
            "city": {"type": "string"}
        }
    assert sent[2]["tool_choice"] == "required"


# --- item 7: thread_id -------------------------------------------------------------------------


def thread(name: str) -> Any:
    return {"configurable": {"thread_id": name}}


async def test_thread_id_is_the_conversation_id_on_every_entry_point() -> None:
    async with ReplayServer(answer) as server:
        recording = Recording(pipeline(server))
        model = ChatOaicompat(client=recording)
        await model.ainvoke(QUESTION, config=thread("a"))
        [c async for c in model.astream(QUESTION, config=thread("b"))]
        await model.bind_tools([get_time]).ainvoke(QUESTION, config=thread("c"))
        await model.ainvoke(QUESTION, config=thread("d"), conversation_id="given")
        await model.ainvoke(QUESTION)
        await model.aclose()
    ids = [options.conversation_id if options else None for options in recording.options]
    assert ids == ["a", "b", "c", "given", None]


def test_thread_id_reaches_the_sync_methods() -> None:
    with InThread(ReplayServer(answer)) as server:
        recording = Recording(pipeline(server))
        model = ChatOaicompat(client=recording, owns_client=True)
        model.invoke(QUESTION, config=thread("s1"))
        list(model.stream(QUESTION, config=thread("s2")))
        model.close()
    ids = [options.conversation_id if options else None for options in recording.options]
    assert ids == ["s1", "s2"]


async def test_two_agent_threads_that_open_alike_get_their_own_session_keys() -> None:
    async with ReplayServer(answer) as server:
        model = ChatOaicompat(client=pipeline(server, session_affinity=SessionAffinity()))
        agent = agents.create_agent(model, [get_time])
        request = {"messages": [{"role": "user", "content": QUESTION}]}
        for name in ("thread-1", "thread-2"):
            state = await agent.ainvoke(request, config=thread(name))
            assert state["messages"][-1].content == ANSWER
        async for _ in agent.astream(request, config=thread("thread-3"), stream_mode="messages"):
            pass
        await model.aclose()
    keys = [request.headers["x-session-id"] for request in server.requests]
    assert keys == ["thread-1", "thread-2", "thread-3"]


# --- items 10 and 11 ---------------------------------------------------------------------------


async def test_from_config_takes_the_role_positionally(tmp_path: Path) -> None:
    async with ReplayServer(answer) as server:
        path = write_config(tmp_path / "oaicompat.yaml", server.base_url)
        model = ChatOaicompat.from_config(path, "main", streaming=True)
        assert (await model.ainvoke(QUESTION)).content == ANSWER
        await model.aclose()


def test_without_langchain_the_import_names_the_extra() -> None:
    code = (
        "import sys\n"
        "sys.modules['langchain_core'] = None\n"
        "try:\n"
        "    import providers.integrations.langchain\n"
        "except ModuleNotFoundError as error:\n"
        "    print(error.name, '|', error)\n"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=root,
        env={"PYTHONPATH": str(root)},
        timeout=60,
        check=True,
    )
    assert done.stdout.startswith("langchain_core")
    assert "pip install 'oaicompat[langchain]'" in done.stdout


def test_from_config_refuses_an_unknown_field_before_building_the_pipeline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[str] = []
    monkeypatch.setattr(
        "providers.integrations.langchain.client_for", lambda *args, **kw: built.append("x")
    )
    path = write_config(tmp_path / "oaicompat.yaml", "http://127.0.0.1:9")
    with pytest.raises(TypeError, match="base_url"):
        ChatOaicompat.from_config(path, "main", base_url="http://elsewhere")
    assert built == []


async def test_header_values_never_reach_langchains_callbacks() -> None:
    from langchain_core.callbacks import AsyncCallbackHandler

    class Seen(AsyncCallbackHandler):
        def __init__(self) -> None:
            self.given: list[str] = []

        async def on_chat_model_start(self, serialized: Any, messages: Any, **kw: Any) -> None:
            self.given.append(repr((serialized, kw)))

    seen = Seen()
    async with ReplayServer(answer) as server:
        model = ChatOaicompat(
            client=pipeline(server),
            model_kwargs={"extra_headers": {"Authorization": "Bearer sk-kwargs"}},
        )
        await model.ainvoke(
            QUESTION,
            config={"callbacks": [seen]},
            extra_headers={"X-Api-Key": "sk-call"},
        )
        await model.aclose()
    (request,) = server.requests
    assert (request.headers["authorization"], request.headers["x-api-key"]) == (
        "Bearer sk-kwargs",
        "sk-call",
    )
    (given,) = seen.given
    assert "X-Api-Key" in given
    assert "sk-call" not in given and "sk-kwargs" not in given
    assert "sk-kwargs" not in repr(model)
