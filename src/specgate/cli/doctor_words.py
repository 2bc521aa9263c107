"""What ``specgate doctor`` shows names the doctor's flags, not claims-file keys.

The rules word their findings and next actions for a claims file
(``hardware.weight_bytes``, ``speculation.draft_depth_ratio``); the doctor user sets
``--weight-bytes`` and ``--draft-depth-ratio``. :func:`flag_for` maps a claims key to
the doctor option that sets it, read from the doctor's own argparse definitions: the
option whose ``dest`` is the key's last two parts joined (``evidence.next.accept_length``
→ ``next_accept_length`` → ``--next-accept-length``; ``model.size`` → ``--model-size``)
or, for a ``section.key`` key, its last part (``hardware.weight_bytes`` →
``--weight-bytes``); an option named otherwise carries its key where it is defined
(:func:`names_key`: ``--claimed-speedup`` sets ``claims.speedup``). A key no option sets
(``model.hf_config``) is named as it is.
"""

from __future__ import annotations

import argparse
import re
from functools import cache
from typing import Any

#: The attribute of a doctor option whose name is not its claims key's.
_CLAIMS_KEY = "specgate_claims_key"

#: A claims key as the rules write it: a section, then dotted names.
_KEY = re.compile(
    r"\b(?:speculation|evidence|workload|model|hardware|claims|policy)(?:\.[a-z_]+)+"
    r"(?P<tail>: true\b| is not true\b|: )?"
)


def names_key(action: argparse.Action, key: str) -> argparse.Action:
    """Mark doctor option ``action`` as the one that sets claims key ``key`` (for an
    option whose name is not the key's)."""
    setattr(action, _CLAIMS_KEY, key)
    return action


@cache
def _options() -> tuple[dict[str, argparse.Action], dict[str, argparse.Action]]:
    """The doctor's options by ``dest`` and by the claims key they are marked with."""
    from specgate.cli.parser import build_parser

    parser = build_parser("doctor")
    doctor = next(
        action.choices["doctor"]
        for action in parser._actions
        if isinstance(action, argparse._SubParsersAction)
    )
    options = [a for a in doctor._actions if a.option_strings]
    by_dest = {a.dest: a for a in options if not hasattr(a, _CLAIMS_KEY)}
    marked = {getattr(a, _CLAIMS_KEY): a for a in options if hasattr(a, _CLAIMS_KEY)}
    return by_dest, marked


def option_for(key: str) -> argparse.Action | None:
    """The doctor option that sets claims key ``key``, else ``None``."""
    by_dest, marked = _options()
    if key in marked:
        return marked[key]
    parts = key.split(".")
    candidates = ["_".join(parts[-2:])] + ([parts[-1]] if len(parts) == 2 else [])
    return next((by_dest[name] for name in candidates if name in by_dest), None)


def flag_for(key: str) -> str | None:
    """``--flag`` for claims key ``key`` (the option's long name), else ``None``."""
    option = option_for(key)
    if option is None:
        return None
    return next(o for o in option.option_strings if o.startswith("--"))


def reword(text: str) -> str:
    """``text`` with every claims key a doctor option sets named by that option:
    ``key: value`` is ``--flag value``; for an on/off option ``key: true`` is the flag
    and ``key is not true`` is "not given" (``key: false`` stays: no flag sets it)."""

    def one(match: re.Match[str]) -> str:
        tail = match["tail"] or ""
        option = option_for(match.group(0)[: len(match.group(0)) - len(tail)])
        if option is None:
            return match.group(0)
        flag = next(o for o in option.option_strings if o.startswith("--"))
        if isinstance(option, argparse._StoreTrueAction):
            if tail == ": ":  # key: false, say: an on/off flag cannot set it
                return match.group(0)
            return {": true": flag, " is not true": f"{flag} is not given"}.get(tail, flag)
        return f"{flag} " if tail == ": " else flag + tail.replace(": true", " true")

    return _KEY.sub(one, text)


def reword_all(value: Any) -> Any:
    """``value`` (a JSON report) with :func:`reword` applied to every string in it but a
    ``path`` (the node a finding sits on, a location rather than advice)."""
    if isinstance(value, str):
        return reword(value)
    if isinstance(value, list):
        return [reword_all(item) for item in value]
    if isinstance(value, dict):
        return {k: v if k == "path" else reword_all(v) for k, v in value.items()}
    return value
