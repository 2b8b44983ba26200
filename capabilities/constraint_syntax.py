"""A list of choices written as a regular expression or a GBNF grammar, for servers that take
one of those and no list (SGLang has ``regex`` but no choice form; llama.cpp and
llama-cpp-python only ``grammar``).

Both must derive exactly the options and nothing else, whatever the options hold: quotes,
backslashes, newlines, metacharacters, non-ASCII text. The property tests feed arbitrary strings
through both and check the result against Python's ``re`` and a reader of GBNF literals written
from llama.cpp's grammar parser rules.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["gbnf_alternation", "gbnf_literal", "regex_alternation", "regex_literal"]

# Characters with a meaning in a regular expression outside a class, in every dialect the
# servers use (Python re, xgrammar's and outlines' regex readers): escaped with a backslash.
_REGEX_META = frozenset(r"\.^$|?*+()[]{}")
# The escapes every regex dialect reads the same way.
_REGEX_NAMED = {"\n": r"\n", "\r": r"\r", "\t": r"\t", "\f": r"\f", "\v": r"\v"}
# GBNF literal escapes llama.cpp's parser knows (``parse_char``), besides \x, \u and \U.
_GBNF_NAMED = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def regex_literal(text: str) -> str:
    """``text`` as a regular expression matching exactly it. Metacharacters are escaped with a
    backslash, control characters written as ``\\n`` or ``\\xHH``; every other character
    (non-ASCII included) stands for itself, which every dialect reads alike (``re.escape``
    also escapes space, ``#``, ``-`` and a raw newline, escapes other engines may not read)."""
    out: list[str] = []
    for char in text:
        if char in _REGEX_META:
            out.append("\\" + char)
        elif char in _REGEX_NAMED:
            out.append(_REGEX_NAMED[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\x{ord(char):02x}")
        else:
            out.append(char)
    return "".join(out)


def regex_alternation(options: Sequence[str]) -> str:
    """A regular expression whose full matches are exactly ``options``: a non-capturing group
    of their literals (longest first, so an engine that takes the first matching branch
    without backtracking, as some do, still reaches the longer option)."""
    ordered = sorted(dict.fromkeys(options), key=len, reverse=True)
    return "(?:" + "|".join(regex_literal(option) for option in ordered) + ")"


def gbnf_literal(text: str) -> str:
    """``text`` as a GBNF string literal (``"..."``) deriving exactly it.

    llama.cpp reads a literal as code points: ``"`` and ``\\`` are escaped with a backslash,
    newline, carriage return and tab by name, other characters below U+0020, DEL and every
    non-ASCII character as ``\\uHHHH`` (``\\UHHHHHHHH`` beyond the BMP), so the grammar text is
    plain ASCII whatever the options hold and no UTF-8 decoding on the server can differ."""
    out = ['"']
    for char in text:
        code = ord(char)
        if char in _GBNF_NAMED:
            out.append(_GBNF_NAMED[char])
        elif 0x20 <= code < 0x7F:
            out.append(char)
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04X}")
        else:
            out.append(f"\\U{code:08X}")
    out.append('"')
    return "".join(out)


def gbnf_alternation(options: Sequence[str]) -> str:
    """A GBNF grammar whose ``root`` derives exactly ``options``."""
    return "root ::= " + " | ".join(gbnf_literal(option) for option in dict.fromkeys(options))
