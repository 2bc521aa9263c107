"""Container runners' command lines: ``docker run``, ``podman run``, ``nerdctl run``,
``docker compose run`` — the runner's own options skipped, the IMAGE (or SERVICE) and
the command found.

Shapes: :func:`read_runner` takes argv words (already split as the shell does, see
:mod:`specgate.inputs.cmdline`) and returns a :class:`RunnerLaunch`, or None when the
words do not start a runner.

The options are data (``specgate/data/container-runners.json``), recorded from each
runner's spf13/pflag definitions at a tag by ``scripts/record_runner_options.py``.
Parsing follows pflag (``flag.go``, ``parseArgs`` / ``parseLongArg`` /
``parseSingleShortArg``) with ``SetInterspersed(false)`` as every one of these runners
sets it: options end at ``--`` or at the first word that does not start with ``-``
(or is ``-``); that word is the IMAGE (SERVICE), every later word the command.
``--opt=value`` and ``--opt value`` take a value; a switch takes none (``--rm=false``
is one word); shorthands combine (``-it``), and a shorthand that takes a value takes the
rest of its word (``-p8000:8000``, ``-e=A=1``) or the next word. pflag has no
abbreviations. An option the runner does not define, or one missing its value, is an
error the runner refuses: the launch is unsettled, never guessed.

Global options come before the subcommand (``docker --context x -H tcp://h run``,
``podman --remote --connection c run``, ``nerdctl --namespace k8s.io run``, ``docker
compose -f serve.yaml --project-directory d run``): each program's own table (the data's
``globals``, recorded from its root command) is read up to the next command word, which
must be the runner's next program word (``run``, ``container``, ``compose``), as
docker/cli ``HandleGlobalFlags`` parses with ``SetInterspersed(false)``. A global the
root registers on ``PersistentFlags()`` is also taken after ``run`` (cobra merges it into
every subcommand's flags; the subcommand's own option of the same name wins), so
``podman run --log-level debug IMAGE`` skips it too.

``--entrypoint`` is read as each runner reads it (the data's ``entrypoint.reads``):
Docker one word (``--entrypoint=`` clears it), Podman a JSON array or one word, nerdctl
one word per option, Compose split as shellwords.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from specgate.core.data import read_data


@dataclass(frozen=True)
class _Option:
    takes_value: bool
    optional_value: bool


@dataclass(frozen=True)
class Runner:
    """One runner of ``container-runners.json`` (or a program's global options)."""

    name: str
    programs: tuple[tuple[str, ...], ...]
    positional: str
    entrypoint_reads: str
    source: str
    longs: Mapping[str, _Option]
    shorts: Mapping[str, str]
    #: the long names that are cobra ``PersistentFlags`` (globals only)
    persistent: frozenset[str] = frozenset()


@dataclass(frozen=True)
class RunnerLaunch:
    """A runner's command line, read.

    Attributes:
        runner: ``docker run``, ``podman run``, ``nerdctl run``, ``docker compose run``
            (``podman-compose run``: :mod:`specgate.inputs.podman_compose`).
        target: the IMAGE (SERVICE for compose) word; None when unsettled before it.
        target_index: its index in the words.
        command: the words after it; None when there are none (the image's CMD, or the
            service's ``command:``, then applies).
        entrypoint: the ``--entrypoint`` override as words; None when not given.
        options: every option read, ``(long name, value or None)``, in order.
        option_words: per option, the index of the word holding its value (its own
            word for a switch or ``--opt=value``).
        globals: the program's options before the subcommand, ``(long name, value or
            None)`` in order (``docker compose -f F run``: ``("file", "F")``).
        unsettled: why the words cannot be read as the runner reads them, else None.
        source: the runner's option source, ``repo:files@tag``.
    """

    runner: str
    target: str | None
    target_index: int | None
    command: tuple[str, ...] | None
    entrypoint: tuple[str, ...] | None
    options: tuple[tuple[str, str | None], ...]
    unsettled: str | None
    source: str
    option_words: tuple[int, ...] = ()
    globals: tuple[tuple[str, str | None], ...] = ()


def _table(item: Mapping[str, Any], name: str) -> Runner:
    longs: dict[str, _Option] = {}
    shorts: dict[str, str] = {}
    persistent: set[str] = set()
    for option, spec in item["options"].items():
        value = spec["value"]
        longs[option] = _Option(value is not False, value == "optional")
        if spec["short"]:
            shorts[spec["short"]] = option
        if spec.get("persistent"):
            persistent.add(option)
    source = item["source"]
    return Runner(
        name,
        tuple(tuple(words) for words in item.get("programs", ())),
        str(item.get("positional", "")),
        str(item.get("entrypoint", {}).get("reads", "")),
        f"{source['repo']}:{','.join(source['files'])}@{source['tag']}",
        longs,
        shorts,
        frozenset(persistent),
    )


@cache
def global_tables() -> Mapping[str, Runner]:
    """Each program word's global options (``docker``, ``podman``, ``nerdctl``,
    ``compose`` / ``docker-compose``), from the data's ``globals``."""
    data = json.loads(read_data("container-runners.json"))
    out: dict[str, Runner] = {}
    for item in data["globals"]:
        table = _table(item, item["program"])
        for word in item["words"]:
            out[word] = table
    return out


@cache
def subcommand_table(command: str) -> Runner:
    """The options of the subcommand ``command`` (``"compose up"``) from the data's
    ``subcommands``, with the persistent globals of its program's root (cobra)."""
    data = json.loads(read_data("container-runners.json"))
    item = next(i for i in data["subcommands"] if i["command"] == command)
    root = global_tables()[command.split(maxsplit=1)[0]]
    return _with_persistent(_table(item, command), [root])


def read_interspersed(
    table: Runner, words: Sequence[str], start: int
) -> tuple[list[tuple[str, str | None]], list[int]] | None:
    """``words[start:]`` read as pflag reads a command's arguments with interspersed
    options (cobra's default): the options read and the indexes of the positional
    words (all words after ``--`` are positional); None when the program refuses one."""
    read: list[tuple[str, str | None, int]] = []
    positional: list[int] = []
    i = start
    try:
        while i < len(words):
            word = words[i]
            if word == "--":
                positional.extend(range(i + 1, len(words)))
                break
            if not word.startswith("-") or word == "-":
                positional.append(i)
                i += 1
                continue
            i = _option(table, words, i, read)
    except _Refused:
        return None
    return [(name, value) for name, value, _ in read], positional


@cache
def runners() -> tuple[Runner, ...]:
    """The runners of ``container-runners.json``, in file order."""
    data = json.loads(read_data("container-runners.json"))
    return tuple(_table(item, item["runner"]) for item in data["runners"])


def _with_persistent(runner: Runner, roots: Sequence[Runner]) -> Runner:
    """``runner``'s options with the persistent globals of ``roots`` it does not define
    itself (cobra: a subcommand's own flag wins over an inherited one)."""
    longs = dict(runner.longs)
    shorts = dict(runner.shorts)
    for root in roots:
        for name in root.persistent:
            if name in longs:
                continue
            longs[name] = root.longs[name]
            short = next((c for c, n in root.shorts.items() if n == name), None)
            if short is not None and short not in shorts:
                shorts[short] = name
    if longs == runner.longs:
        return runner
    return Runner(runner.name, runner.programs, runner.positional, runner.entrypoint_reads,
                  runner.source, longs, shorts)


def _program(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def read_runner(words: Sequence[str]) -> RunnerLaunch | None:
    """``words`` read as a container runner's command line, or None when they do not
    start with one (module docstring for the rules). The program may be a path
    (``/usr/bin/docker``)."""
    if not words:
        return None
    for runner in runners():
        for program in runner.programs:
            if _program(words[0]) != program[0]:
                continue
            found = _program_words(runner, program, words)
            if found is not None:
                return found
    return None


def _program_words(
    runner: Runner, program: Sequence[str], words: Sequence[str]
) -> RunnerLaunch | None:
    """The launch when ``words`` run ``program`` (its words, each program word's global
    options between them), else None."""
    read: list[tuple[str, str | None, int]] = []
    roots: list[Runner] = []
    i = 1
    for k, expected in enumerate(program[1:], 1):
        table = global_tables().get(program[k - 1])
        if table is not None:
            roots.append(table)
            try:
                i = options_until_word(table, words, i, read)
            except _Refused as refused:
                # the program refuses a global: a runner launch only when the rest of
                # its words follow somewhere (else another subcommand, not read)
                if not _follows(program[k:], words[i:]):
                    return None
                return _launch(runner, [], str(refused))
        if i >= len(words) or words[i] != expected:
            return None
        i += 1
    merged = _with_persistent(runner, roots)
    globals_read = tuple((name, value) for name, value, _ in read)
    launch = _parse(merged, words, i)
    return replace(launch, runner=runner.name, source=runner.source, globals=globals_read)


def read_globals(
    program: Sequence[str], words: Sequence[str]
) -> tuple[tuple[tuple[str, str | None], ...], int] | None:
    """The global options in ``words`` of ``program``'s words (``("docker", "compose",
    "up")``: each program word's globals between them, read by its own table as for a
    runner) and the index of its last word; None when the words do not run it (a
    global the program refuses, another subcommand)."""
    if not words or _program(words[0]) != program[0]:
        return None
    read: list[tuple[str, str | None, int]] = []
    i = 1
    for k, expected in enumerate(program[1:], 1):
        table = global_tables().get(program[k - 1])
        if table is not None:
            try:
                i = options_until_word(table, words, i, read)
            except _Refused:
                return None
        if i >= len(words) or words[i] != expected:
            return None
        i += 1
    return tuple((name, value) for name, value, _ in read), i - 1


def _follows(rest: Sequence[str], words: Sequence[str]) -> bool:
    n = len(rest)
    return any(tuple(words[j:j + n]) == tuple(rest) for j in range(len(words) - n + 1))


def options_until_word(
    table: Runner, words: Sequence[str], i: int, read: list[tuple[str, str | None, int]]
) -> int:
    """Read ``table``'s options from ``i`` up to the first word that is none (pflag
    with ``SetInterspersed(false)``); the index of that word.

    Raises:
        ValueError: the program refuses an option (undefined, or missing its value).
    """
    while i < len(words):
        word = words[i]
        if not word.startswith("-") or word in {"-", "--"}:
            break
        i = _option(table, words, i, read)
    return i


class _Refused(ValueError):
    pass


def _parse(runner: Runner, words: Sequence[str], start: int) -> RunnerLaunch:
    read: list[tuple[str, str | None, int]] = []
    i = start
    try:
        while i < len(words):
            word = words[i]
            if word == "--":
                i += 1
                break
            if not word.startswith("-") or word == "-":
                break
            i = _option(runner, words, i, read)
    except _Refused as refused:
        return _launch(runner, read, str(refused))
    if i >= len(words):
        return _launch(runner, read, f"{runner.name} names no {runner.positional}")
    options = [(name, value) for name, value, _ in read]
    entrypoint, unsettled = _entrypoint(runner, options)
    command = tuple(words[i + 1:]) or None
    return _launch(runner, read, unsettled, target=words[i], index=i, command=command,
                   entrypoint=entrypoint)


def _launch(
    runner: Runner,
    read: Sequence[tuple[str, str | None, int]],
    unsettled: str | None,
    *,
    target: str | None = None,
    index: int | None = None,
    command: tuple[str, ...] | None = None,
    entrypoint: tuple[str, ...] | None = None,
) -> RunnerLaunch:
    return RunnerLaunch(
        runner.name, target, index, command, entrypoint,
        tuple((name, value) for name, value, _ in read), unsettled, runner.source,
        tuple(at for _, _, at in read),
    )


def _option(runner: Runner, words: Sequence[str], i: int,
            options: list[tuple[str, str | None, int]]) -> int:
    """Read the option word at ``i`` (pflag parseLongArg / parseShortArg); the index of
    the next word."""
    word = words[i]
    if word.startswith("--"):
        name, eq, value = word[2:].partition("=")
        if not name or name.startswith("-"):
            raise _Refused(f"{runner.name} refuses {word!r} (bad flag syntax)")
        option = runner.longs.get(name)
        if option is None:
            raise _Refused(f"{runner.name} has no option --{name}")
        if eq:
            options.append((name, value, i))
            return i + 1
        if not option.takes_value or option.optional_value:
            options.append((name, None, i))
            return i + 1
        if i + 1 >= len(words):
            raise _Refused(f"{runner.name} --{name} needs a value")
        options.append((name, words[i + 1], i + 1))
        return i + 2
    shorts = word[1:]
    while shorts:
        char = shorts[0]
        if char not in runner.shorts:
            raise _Refused(f"{runner.name} has no option -{char}")
        name = runner.shorts[char]
        option = runner.longs[name]
        if len(shorts) > 2 and shorts[1] == "=":
            options.append((name, shorts[2:], i))
            return i + 1
        if not option.takes_value or option.optional_value:
            options.append((name, None, i))
            shorts = shorts[1:]
            continue
        if len(shorts) > 1:
            options.append((name, shorts[1:], i))
            return i + 1
        if i + 1 >= len(words):
            raise _Refused(f"{runner.name} -{char} needs a value")
        options.append((name, words[i + 1], i + 1))
        return i + 2
    return i + 1


def _entrypoint(
    runner: Runner, options: Sequence[tuple[str, str | None]]
) -> tuple[tuple[str, ...] | None, str | None]:
    values = [value or "" for name, value in options if name == "entrypoint"]
    if not values:
        return None, None
    reads = runner.entrypoint_reads
    if reads == "each-word":
        if values == [""]:
            return None, f"{runner.name} --entrypoint '' is not read"
        return tuple(values), None
    value = values[-1]
    if reads == "word":
        return ((value,) if value else ()), None
    if reads == "json-or-word":
        try:
            parsed = json.loads(value)
        except ValueError:
            parsed = None
        if isinstance(parsed, list) and all(isinstance(item, str) for item in parsed):
            return tuple(parsed), None
        if not value:
            return None, f"{runner.name} --entrypoint '' is not read"
        return (value,), None
    if any(char in value for char in "$`\\"):
        # go-shellwords and POSIX sh part ways on these: not guessed.
        return None, f"{runner.name} --entrypoint {value!r} is not split here"
    try:
        return tuple(shlex.split(value)), None
    except ValueError:
        return None, f"{runner.name} --entrypoint {value!r} cannot be split into words"
