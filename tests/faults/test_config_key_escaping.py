"""Issue 32 item 15: a configuration file's keys and names reach ``ConfigurationError`` text
with their control characters written out.

YAML's double quotes spell any character (``"gpu\\e]0;owned\\a"`` is ESC … BEL), so a file
from anywhere can name a backend, a role or a tag with a terminal escape in it. The CLI escapes
what it prints (``terminal_safe``), but a library user logs ``str(error)`` themselves: the
message must already be inert, as it is for a value quoted with ``repr``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from providers.abstractions.errors import ConfigurationError
from providers.config import load_config

RAW_CONTROLS = ("\x1b", "\x07", "\x9b", "\x00", "\x7f", "\r")
NAME = r"gpu\e]0;owned\a\x9b\0\x7f\r\nforged: line"
"""YAML escapes for ESC ] 0 ; … BEL, a C1 CSI, NUL, DEL, CR and LF: a window title, and a
second line that would pass for another problem."""


def _error(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigurationError) as info:
        config = load_config(path, env={})
        config.backend_name("missing")  # the lookup's "known:" list names every backend
    return str(info.value)


CASES = {
    "unknown-key-under-a-backend": (
        f'backends:\n  "{NAME}":\n    base_url: http://h\n    model_id: m\n    bogus: 1\n'
    ),
    "a-role-whose-name-is-hostile": (
        f'backends:\n  ok:\n    base_url: http://h\n    model_id: m\nroles:\n  "{NAME}": nope\n'
    ),
    "invalid-value-under-a-hostile-backend": (
        f'backends:\n  "{NAME}":\n    base_url: http://h\n    model_id: m\n'
        "    retry: {max_attempts: -1}\n"
    ),
    "the-known-names-of-a-lookup": (
        f'backends:\n  "{NAME}":\n    base_url: http://h\n    model_id: m\n'
    ),
    "a-tag-spelled-with-percent-escapes": "backends: !<tag:x%1b%07> {}\n",
}


@pytest.mark.parametrize("text", CASES.values(), ids=CASES.keys())
def test_a_hostile_key_reaches_the_error_text_escaped(tmp_path: Path, text: str) -> None:
    path = tmp_path / "oaicompat.yaml"
    message = _error(path, text)
    for control in RAW_CONTROLS:
        assert control not in message, f"{control!r} reached the error text: {message!r}"
    # a line is a problem, and each names its place: the file cannot forge one
    lines = message.split("\n")
    assert all(line.startswith(str(path)) for line in lines) or len(lines) == 1, message
    assert "\\x1b" in message  # written out, not dropped: the reader sees what the file says
