"""``oaicompat probe`` and ``check`` never print a password that ``base_url`` carries (issue 20:
"A password in ``base_url`` appears in … ``oaicompat probe``/``check``")."""

from __future__ import annotations

import pytest

from providers.replay.server import ReplayServer
from tests.unit.providers.cli.test_cli import _main, llama

__all__ = ["llama"]  # the fixture, shared with the CLI's unit tests


@pytest.mark.parametrize("command", ["probe", "check"])
@pytest.mark.parametrize("as_json", [True, False])
async def test_probe_and_check_never_print_the_password_in_base_url(
    llama: ReplayServer, capsys: pytest.CaptureFixture[str], command: str, as_json: bool
) -> None:
    """The password authenticates (as Basic) but is never printed, answered or not."""
    with_password = llama.base_url.replace("http://", "http://user:hunter2pw@")
    flags = ["--json"] if as_json else []
    await _main(command, "--base-url", with_password, *flags)
    await _main(command, "--base-url", "http://user:hunter2pw@127.0.0.1:9", *flags)
    printed = capsys.readouterr()
    assert "hunter2pw" not in printed.out + printed.err
    assert "127.0.0.1" in printed.out + printed.err
