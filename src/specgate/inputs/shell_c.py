"""``sh -c 'SCRIPT' NAME ARGS…``: the commands of a script a shell is given as a word, as
that shell runs them (POSIX ``sh``, "-c": the first operand is the command string, the
next ``$0``, the rest the positional parameters).

The script word is a word of an outer command that the outer text may not settle
(``bash -c "vllm serve m --speculative-config '$(cat spec.json)'"``: the outer shell runs
the substitution before the inner one reads the quotes). Such a word is kept as written,
and the inner shell would read it otherwise (inside the inner single quotes the text is
literal), so every word of the script's commands is then unsettled, with the outer word's
account (docs/engines.md#unsettled-values); never a value read from text the outer shell
replaces.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import PurePosixPath

from specgate.inputs.cmdline import Command, split_commands

_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ash", "ksh"})
_SCRIPT_FLAG = re.compile(r"^-[a-z]*c$")


def shell_script_index(command: Command) -> int | None:
    """The index of the script word of ``sh -c 'SCRIPT'`` (``bash -lc`` …), or None."""
    argv = command.argv
    shell = PurePosixPath(argv[0]).name in _SHELLS if argv else False
    if len(argv) >= 3 and shell and _SCRIPT_FLAG.fullmatch(argv[1]):
        return 2
    return None


def script_commands(
    command: Command, script: int, variables: Mapping[str, str]
) -> list[Command]:
    """The commands of ``command``'s script word (at ``script``), run with ``variables``
    (a container's environment) and the words after ``$0`` as its arguments; every
    word unsettled where the outer text leaves the script or its arguments unsettled.

    Raises:
        InputError: a script no shell could split; LimitReached: a bound reached.
    """
    inner = split_commands(
        command.argv[script],
        arguments=command.argv[script + 2 :],
        variables=tuple(variables.items()),
        script=True,
    )
    hit = next((command.unresolved[i] for i in sorted(command.unresolved) if i >= script), None)
    if hit is None:
        return inner
    return [
        Command(c.argv, c.env, c.lines, c.columns, c.env_at,
                dict.fromkeys(range(len(c.argv) + 1), hit))
        for c in inner
    ]
