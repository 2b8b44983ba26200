"""Issue 32 item 11: a top-level chunk field of the wrong type is dropped, never passed on.

``"model": [1, 2]`` became ``ChatResponse.model_id == [1, 2]`` and reached an OpenAI SDK's
``chunk.model`` as a list; an object ``id`` became its repr. The fields are typed ``str | None``
(``created``: ``int | None``): a value of another type is dropped (``None``), the rest of the
chunk, its text, and the raw chunk are kept. Checked on every way an update is made: the full
path, the stream's common-chunk template (the wrong value arriving after it was learnt) and a
whole completion.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from providers import create_chat_client
from tests.integrations.frameworks import require
from tests.integrations.test_openai_transport import openai_client

WRONG = [[1, 2], {"a": 1}, 5, 1.5, True]


def chunk(text: str, **top: Any) -> dict[str, Any]:
    return {
        "id": "c",
        "model": "m",
        "created": 1,
        **top,
        "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}],
    }


def body(field: str, wrong: Any, stream: bool) -> bytes:
    if not stream:
        message = {"role": "assistant", "content": "Hello"}
        choice = {"index": 0, "message": message, "finish_reason": "stop"}
        return json.dumps({"id": "c", "model": "m", field: wrong, "choices": [choice]}).encode()
    # Four ordinary chunks first: the stream's templates are learnt before the wrong value.
    chunks = [chunk(t) for t in ("He", "l", "l", "o")] + [chunk("!", **{field: wrong})]
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return ("".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n").encode()


def pipeline(data: bytes, stream: bool) -> Any:
    kind = "text/event-stream" if stream else "application/json"

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": kind}, content=data)

    http = httpx.AsyncClient(transport=httpx.MockTransport(answer))
    return create_chat_client("http://llm.test/v1", "m", http_client=http, telemetry=False)


@pytest.mark.parametrize(
    ("field", "wrong"),
    [("model", wrong) for wrong in WRONG] + [("id", wrong) for wrong in WRONG if wrong != 5],
    ids=repr,
)
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_a_field_of_the_wrong_type_is_dropped(field: str, wrong: Any, stream: bool) -> None:
    """(A number as ``id`` is still an opaque id: ``"5"``, ``test_normalize``.)"""
    client = pipeline(body(field, wrong, stream), stream)
    async with client:
        if stream:
            updates = [u async for u in client.get_streaming_response("hi")]
            values = [(u.response_id, u.model_id) for u in updates]
            text = "".join(u.text for u in updates)
        else:
            response = await client.get_response("hi")
            values = [(response.response_id, response.model_id)]
            text = response.text
    assert all(type(v) is str or v is None for pair in values for v in pair), values
    assert (None, "m") in values or ("c", None) in values
    assert text == ("Hello!" if stream else "Hello")


@pytest.mark.parametrize("flavour", ["httpx", "httpx2"])
async def test_the_sdk_reads_a_string_model_whatever_the_server_sent(flavour: str) -> None:
    require("openai")
    client = openai_client(pipeline(body("model", [1, 2], True), True), flavour)
    try:
        stream = await client.chat.completions.create(
            model="x", messages=[{"role": "user", "content": "hi"}], stream=True
        )
        models = [chunk.model async for chunk in stream]
    finally:
        await client.close()
    assert models and all(type(model) is str for model in models)
