"""Deployment names as the change gate compares them (docs/change-gate.md#pairing-deployments).

A deployment is matched with itself at the base revision by name. Two spellings that a
reader cannot tell apart in a diff, or that differ only in case or spacing, name one
deployment: a rename from ``d1`` to ``D1``, ``"d1 "`` or ``"d\\u200b1"`` (a zero-width
space) must not make it "new" and escape the comparison (review hostile-r4 defect 4).
"""

from __future__ import annotations


def name_key(name: str) -> str:
    """The form two names are compared in: format characters (Unicode category Cf:
    zero-width spaces and joiners, bidi controls U+202A–U+202E and U+2066–U+2069, the
    byte-order mark) removed, then NFKC normalisation (UAX #15: ``ﬁ`` → ``fi``,
    full-width ``Ｄ`` → ``D``), whitespace runs collapsed to one space and trimmed,
    case folded (``str.casefold``, Unicode's full case folding), and NFKC again (folding
    can leave a string unnormalised)."""
    if name.isascii():
        # No ASCII character is a format character, NFKC leaves ASCII as it is and
        # folds ASCII case as str.lower does: the same key without unicodedata.
        return " ".join(name.split()).lower()
    import unicodedata

    visible = "".join(c for c in name if unicodedata.category(c) != "Cf")
    spaced = " ".join(unicodedata.normalize("NFKC", visible).split())
    return unicodedata.normalize("NFKC", spaced.casefold())


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a deployment name (schema rule SG001), else ``None``: a
    format character (Unicode category Cf), which does not show in a diff or a terminal,
    or whitespace at either end."""
    if not name.isascii():  # no ASCII character is a format character
        import unicodedata

        for c in name:
            if unicodedata.category(c) == "Cf":
                return (
                    f"holds the invisible character U+{ord(c):04X} "
                    f"({unicodedata.name(c, 'format character')}); names must be visible"
                )
    if name != name.strip():
        return "starts or ends with whitespace"
    return None
