"""Any OpenAI chat message or usage object of the shapes the library models comes back from
``from_openai`` → ``to_openai()`` as the same JSON; a stream of updates written as chunks reads
back to the same response (issue #22 part 1)."""

from __future__ import annotations

import base64
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from providers import (
    ChatFinishReason,
    ChatMessage,
    ChatResponse,
    ChatResponseUpdate,
    FunctionCallContent,
    TextContent,
    TextReasoningContent,
    UsageContent,
    UsageDetails,
)
from providers.chat_completions.normalize import ChunkNormalizer

SETTINGS = settings(max_examples=300, deadline=None)

_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)
_WORD = st.text("abcxyz_", min_size=1, max_size=6)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_WORD, inner, max_size=3),
    max_leaves=6,
)
_EXTRA_KEYS = st.dictionaries(st.sampled_from(["refusal", "prefix", "x_custom", "audio"]), _JSON)

_TEXT_PART = st.builds(lambda t: {"type": "text", "text": t}, _TEXT) | st.builds(
    lambda t, e: {"type": "text", "text": t, "cache_control": e}, _TEXT, _JSON
)
_IMAGE_PART = st.one_of(
    st.builds(
        lambda path: {"type": "image_url", "image_url": {"url": f"https://x.test/{path}.png"}},
        _WORD,
    ),
    st.builds(
        lambda data, detail: {
            "type": "image_url",
            "image_url": {
                "url": f"data:image/png;base64,{base64.b64encode(data).decode()}",
                "detail": detail,
            },
        },
        st.binary(max_size=12),
        st.sampled_from(["low", "high", "auto"]),
    ),
)
_AUDIO_PART = st.builds(
    lambda data, fmt: {
        "type": "input_audio",
        "input_audio": {"data": base64.b64encode(data).decode(), "format": fmt},
    },
    st.binary(max_size=12),
    st.sampled_from(["wav", "mp3"]),
)
_OTHER_PART = st.builds(lambda e: {"type": "file", "file": e}, _JSON)
_CONTENT = st.one_of(
    _TEXT,
    st.none(),
    st.lists(st.one_of(_TEXT_PART, _IMAGE_PART, _AUDIO_PART, _OTHER_PART), max_size=4),
)
_ARGUMENTS = st.dictionaries(_WORD, _JSON, min_size=1, max_size=3).map(
    lambda a: json.dumps(a, ensure_ascii=False)
)
_CALL = st.builds(
    lambda i, name, args: {
        "id": f"call_{i}",
        "type": "function",
        "function": {"name": name, "arguments": args},
    },
    st.integers(0, 99),
    _WORD,
    _ARGUMENTS,
)


@st.composite
def openai_messages(draw: st.DrawFn) -> dict[str, Any]:
    role = draw(st.sampled_from(["user", "system", "assistant", "developer", "tool"]))
    message: dict[str, Any] = {"role": role}
    if role == "tool":
        message["tool_call_id"] = draw(_WORD)
        message["content"] = draw(_TEXT)
    elif draw(st.booleans()) or role != "assistant":
        message["content"] = draw(_CONTENT)
    if role == "assistant":
        if draw(st.booleans()):
            message["tool_calls"] = draw(st.lists(_CALL, min_size=1, max_size=3))
        if draw(st.booleans()):
            message["reasoning_content"] = draw(_TEXT)
    if draw(st.booleans()):
        message["name"] = draw(_WORD)
    message.update(draw(_EXTRA_KEYS))
    return message


def as_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


@SETTINGS
@given(message=openai_messages())
def test_a_message_comes_back_as_it_was(message: dict[str, Any]) -> None:
    read = ChatMessage.from_openai(message)
    assert as_json(read.to_openai()) == as_json(message)
    # Read again from what was written: the same message.
    assert ChatMessage.from_openai(read.to_openai()) == read


_COUNT = st.none() | st.integers(0, 10**6)


def parseable(details: UsageDetails) -> bool:
    """Details a usage object can give: some count reported, and a total whenever both of its
    parts are (``parse_usage`` adds them up when the server leaves it out)."""
    prompt, completion = details.input_token_count, details.output_token_count
    if details.total_token_count is None:
        return (prompt is None) != (completion is None)
    return True


@SETTINGS
@given(
    details=st.builds(
        UsageDetails,
        _COUNT,
        _COUNT,
        _COUNT,
        _COUNT,
        _COUNT,
        st.none()
        | st.dictionaries(
            st.sampled_from(
                [
                    "prompt_tokens_details.audio_tokens",
                    "completion_tokens_details.audio_tokens",
                    "x_server.count",
                    "x_top",
                ]
            ),
            st.integers(0, 99),
            min_size=1,
        ),
    ).filter(parseable)
)
def test_usage_comes_back_as_it_was(details: UsageDetails) -> None:
    assert UsageDetails.from_openai(details.to_openai()) == details


# A delta holds at most one reasoning and one text, the reasoning first, as the normaliser
# makes them; a chunk has no way to say another order.
_UPDATE = st.builds(
    lambda reasoning, text, index: ChatResponseUpdate(
        [
            *([TextReasoningContent(reasoning)] if reasoning else []),
            *([TextContent(text)] if text else []),
        ],
        choice_index=index,
    ),
    _TEXT,
    _TEXT,
    st.integers(0, 2),
)


@SETTINGS
@given(
    updates=st.lists(_UPDATE, max_size=12),
    calls=st.lists(_CALL, max_size=3),
    usage=st.none() | st.builds(UsageDetails, st.integers(0, 99), st.integers(0, 99)),
)
def test_updates_written_as_chunks_read_back_to_the_same_response(
    updates: list[ChatResponseUpdate], calls: list[dict[str, Any]], usage: UsageDetails | None
) -> None:
    stream = list(updates)
    if calls:
        made = [
            FunctionCallContent.from_json(
                c["id"], c["function"]["name"], c["function"]["arguments"]
            )
            for c in calls
        ]
        stream.append(ChatResponseUpdate(list(made), finish_reason=ChatFinishReason.TOOL_CALLS))
    if usage is not None:
        usage = UsageDetails(
            usage.input_token_count,
            usage.output_token_count,
            usage.input_token_count + usage.output_token_count,  # type: ignore[operator]
        )
        stream.append(ChatResponseUpdate([UsageContent(usage)]))
    normalizer = ChunkNormalizer()
    read: list[ChatResponseUpdate] = []
    for update in stream:
        read.extend(normalizer.feed(json.loads(json.dumps(update.to_openai_chunk()))))
    read.extend(normalizer.finish())
    assert ChatResponse.from_updates(read) == ChatResponse.from_updates(stream)
