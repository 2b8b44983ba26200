"""``docs/options.md`` is the honours table rendered: regenerated here, it must equal the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from capabilities.option_verdicts import OptionVerdict
from providers.cli import honours
from providers.cli.honours import PAGE, REGENERATE, main, render_options_page, verdict_text


def test_docs_options_page_is_up_to_date() -> None:
    expected = render_options_page()
    current = PAGE.read_text(encoding="utf-8") if PAGE.is_file() else ""
    assert current == expected, (
        f"{PAGE.relative_to(PAGE.parents[1])} is out of date with the request builders: "
        f"run `PYTHONPATH=. {REGENERATE}` and commit the result"
    )


def test_families_with_the_same_verdict_share_a_line() -> None:
    rows = [
        OptionVerdict("stop_sequences", "vllm", "honoured", 'stop=["END"]', "(none given)"),
        OptionVerdict("stop_sequences", "vllm", "refused", "", "qwq", "never | stops"),
        OptionVerdict("stop_sequences", "vllm", "honoured", 'stop=["END"]', "qwen3"),
        OptionVerdict("stop_sequences", "sglang", "enforced here", "", None, "cut here"),
    ]
    page = render_options_page(rows)
    assert '| vllm | (none given), qwen3 | `stop=["END"]` | honoured |  |' in page
    assert "| vllm | qwq | — | refused | never \\| stops |" in page
    assert "| sglang | any | — | enforced here | cut here |" in page
    assert "## `reasoning.effort=none`" not in page  # no rows, no section


def test_sent_and_enforced_is_both() -> None:
    both = OptionVerdict("o", "b", "enforced here", "parallel_tool_calls=false")
    assert verdict_text(both) == "honoured, checked here"
    assert verdict_text(OptionVerdict("o", "b", "enforced here")) == "enforced here"


def test_the_page_intro_names_the_verdicts_and_the_policy() -> None:
    page = render_options_page([])
    for words in ("**honoured**", "**enforced here**", "**refused**", "unsupported_options"):
        assert words in page
    assert REGENERATE in page


def test_main_writes_the_page_or_prints_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "options.md"
    monkeypatch.setattr(honours, "PAGE", target)
    assert main(["--write"]) == 0
    assert target.read_text(encoding="utf-8") == render_options_page()
    assert main([]) == 0
    assert capsys.readouterr().out == target.read_text(encoding="utf-8")
