"""specgate.core.names: the ASCII shortcut gives the key and verdict the Unicode path gives."""

from __future__ import annotations

import unicodedata

from specgate.core.names import name_key, name_problem


def _unicode_key(name: str) -> str:
    # name_key's definition (its docstring), applied without the ASCII shortcut
    visible = "".join(c for c in name if unicodedata.category(c) != "Cf")
    spaced = " ".join(unicodedata.normalize("NFKC", visible).split())
    return unicodedata.normalize("NFKC", spaced.casefold())


ASCII = [chr(i) for i in range(128)]


def test_no_ascii_character_is_a_format_character() -> None:
    assert [c for c in ASCII if unicodedata.category(c) == "Cf"] == []


def test_ascii_keys_match_the_unicode_definition() -> None:
    # every ASCII character alone, between letters and doubled (whitespace runs,
    # the separators \x1c-\x1f that str.split also splits on, case)
    names = [*ASCII, *(f"D{c}1" for c in ASCII), *(f" a{c}{c}B " for c in ASCII)]
    names += ["Chat-Llama 70B", "  d1  ", "D1", "mixed\tCASE\nname"]
    assert [name_key(n) for n in names] == [_unicode_key(n) for n in names]
    assert name_key("  Chat\t LLAMA ") == "chat llama"


def test_non_ascii_names_still_take_the_unicode_path() -> None:
    assert name_key("d\u200b1") == name_key("D1") == "d1"  # zero-width space dropped
    assert name_key("\uff24\ufb01") == "dfi"  # full-width D, the fi ligature
    assert name_problem("d\u200b1") is not None
    assert name_problem("d1") is None
    assert name_problem(" d1") == "starts or ends with whitespace"
