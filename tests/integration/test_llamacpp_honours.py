"""``oaicompat check``'s honours section against a real llama-server (the tiny random model).

llama.cpp enforces grammars with any model, so a choice the table says is taken must come back
in the set, probed; the model cannot reason or call tools on purpose, so those probes must say
they could not tell, never that the server failed.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from providers.backends import PROFILES, Backend
from providers.cli import main
from providers.cli.check_honours import HONOURS_PROBES, HonoursContext

VERDICTS = ("honoured", "enforced here", "refused", "not honoured")
SHOWN = (*VERDICTS, "honoured, checked here")  # as the text report prints them


def _report(server: Any, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    argv = ["check", "--base-url", server.base_url, "--json", "--max-tokens", "8"]
    assert main(argv) == 0
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return report


def test_the_honours_section_agrees_with_the_table(
    plain_server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    report = _report(plain_server, capsys)
    assert report["backend"] == "llamacpp"
    context = HonoursContext(PROFILES[Backend.LLAMACPP], report["family"])
    rows = {row["option"]: row for row in report["honours"]}
    assert list(rows) == [name for name, _ in HONOURS_PROBES]
    for option, row in rows.items():
        table = context.table_row(option)
        assert row["verdict"] in VERDICTS
        assert row["wire"] == table.wire
        if table.verdict == "refused":
            assert (row["verdict"], row["provenance"]) == ("refused", "table")
        elif row["provenance"] == "table":  # a probe that could not tell says so
            assert row["note"].startswith("not probed: "), row
    choice, table = rows["response_format=choice"], context.table_row("response_format=choice")
    if table.verdict in ("honoured", "enforced here"):
        assert (choice["verdict"], choice["provenance"]) == (table.verdict, "probed")
        assert choice["note"] in ("answered 'yes'", "answered 'no'")


def test_the_honours_table_is_printed(
    plain_server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", "--base-url", plain_server.base_url, "--max-tokens", "8"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith("options (model family"))
    end = lines.index("services:")
    section = [re.split(r"\s{2,}", line.strip()) for line in lines[start + 1 : end]]
    assert [cells[0] for cells in section] == [name for name, _ in HONOURS_PROBES]
    # a chat server: it tokenizes, and says how to start it for embeddings and rerank
    embeddings, rerank, tokenize = lines[end + 1 :]
    assert embeddings.startswith("  embeddings: no (") and "--embeddings" in embeddings
    assert rerank.startswith("  rerank: no (") and "--reranking" in rerank
    assert tokenize == "  tokenize: yes (source llamacpp:/apply-template+/tokenize)"
    assert all(cells[1] in SHOWN and cells[2] in ("probed", "table") for cells in section)
    with capsys.disabled():
        print("\n" + "\n".join(lines[start:]))
