"""Agreement with the servers' own parsers, on vectors taken from their tests.

``conformance_vectors.json`` holds facts from vLLM's and SGLang's parser tests (inputs and the
outputs those tests expect; the ``id`` names the test). Each vector is run through
``TextToolCallParser`` (``kind: tools``) or ``ReasoningParser`` (``kind: reasoning``) and compared
the way the servers' conventions differ (docs/formats.md §0): ``None`` equals ``""``, text is
compared stripped, arguments as parsed JSON (or as raw text, when the server returned text that
is not JSON). Every call counts, those carrying an ``error`` included: they are surfaced.

``python -m tests.unit.providers.text_tool_calls.conformance`` prints the agreement per format; with
``PYTHONPATH`` pointing at another checkout it measures that one.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from providers.abstractions.contents import FunctionCallContent, TextContent, TextReasoningContent
from providers.reasoning import ReasoningParser
from providers.text_tool_calls import TextToolCallParser

VECTORS = Path(__file__).with_name("conformance_vectors.json")


def load() -> list[dict[str, Any]]:
    vectors: list[dict[str, Any]] = json.loads(VECTORS.read_text(encoding="utf-8"))
    return vectors


def _same_text(got: str | None, expected: str | None) -> bool:
    return (got or "").strip() == (expected or "").strip()


def _same_arguments(call: FunctionCallContent, expected: Any) -> bool:
    if isinstance(expected, Mapping):
        return call.arguments == expected
    return call.raw_arguments.strip() == str(expected).strip()


def run(vector: Mapping[str, Any]) -> tuple[str | None, str | None, list[FunctionCallContent]]:
    """(content, reasoning, calls) our parsers give for one vector."""
    if vector["kind"] == "reasoning":
        parser = ReasoningParser(vector["format"], vector.get("starts_in_reasoning"))
        contents = parser.parse(vector["text"]).contents
    else:
        tools = TextToolCallParser(vector["format"], vector.get("tools"))
        contents = tools.parse(vector["text"]).contents
    content = "".join(c.text for c in contents if isinstance(c, TextContent))
    reasoning = "".join(c.text for c in contents if isinstance(c, TextReasoningContent))
    calls = [c for c in contents if isinstance(c, FunctionCallContent)]
    return content, reasoning, calls


def disagreement(vector: Mapping[str, Any]) -> str | None:
    """Why our parsers disagree with the vector, or ``None``."""
    try:
        content, reasoning, calls = run(vector)
    except Exception as exc:
        return f"raised {exc!r}"
    if "content" in vector and not _same_text(content, vector["content"]):
        return f"content {content!r} != {vector.get('content')!r}"
    if "reasoning" in vector and not _same_text(reasoning, vector["reasoning"]):
        return f"reasoning {reasoning!r} != {vector['reasoning']!r}"
    if vector["kind"] == "tools":
        expected = vector["calls"]
        got = [(c.name, c.arguments, c.raw_arguments) for c in calls]
        if len(calls) != len(expected) or not all(
            call.name == want["name"] and _same_arguments(call, want["arguments"])
            for call, want in zip(calls, expected, strict=True)
        ):
            return f"calls {got!r} != {expected!r}"
    return None


def group(vector: Mapping[str, Any]) -> str:
    return f"{vector['format']} ({vector['kind']})"


def report() -> dict[str, tuple[int, int]]:
    """Per format: (agreeing, total)."""
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for vector in load():
        entry = totals[group(vector)]
        entry[0] += disagreement(vector) is None
        entry[1] += 1
    return {name: (ok, total) for name, (ok, total) in sorted(totals.items())}


if __name__ == "__main__":
    results = report()
    for name, (ok, total) in results.items():
        print(f"{name:28} {ok:3}/{total:<3} {100 * ok / total:5.1f}%")
    agreed = sum(ok for ok, _ in results.values())
    total = sum(t for _, t in results.values())
    print(f"{'overall':28} {agreed:3}/{total:<3} {100 * agreed / total:5.1f}%")
