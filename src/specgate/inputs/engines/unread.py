"""Launchers of engines specgate does not read, named as such (DESIGN §13).

A serving config that launches Text Generation Inference (``text-generation-launcher
--speculate 2``), LMDeploy (``lmdeploy serve api_server … --speculative-algorithm …``),
MLX-LM (``mlx_lm.server --draft-model …``), Ollama and the like configures speculation
specgate cannot judge: "no speculative decoding configured" would be wrong (it may well
speculate). When no configuration of an engine specgate reads is found, the file is
searched for such a launcher: a command whose program (its file name, or ``python -m
MODULE``) is one of a launcher's, a command or mapping naming one of its container
images (``image:``, ``repository:``, a ``docker run`` word). The input error then names
the engine, where it is launched, and the speculative flags it sets there.

The launchers are data (``specgate/data/unread-launchers.json``: programs, modules,
images, speculative flags, the source each was read from), read by the generic code
here. Nothing of the file runs; the search is the document search of
:mod:`specgate.inputs.pointer` (bounded depth), commands split as a shell would.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import PurePosixPath

from specgate.core.data import read_data
from specgate.core.errors import InputError
from specgate.inputs.cmdline import split_commands
from specgate.inputs.pointer import Found, Verdict, resolve_pointer, search
from specgate.load.document import Document, NodePath

#: Words before the program that do not name it (``exec python3 -m mlx_lm.server``).
_WRAPPERS = frozenset({"exec", "sudo", "nohup", "env", "time", "command", "uv", "run"})
_PYTHONS = ("python", "python3")


@dataclass(frozen=True)
class Launcher:
    """One engine specgate does not read: how its launch is recognised."""

    engine: str
    programs: frozenset[str]
    modules: frozenset[str]
    images: tuple[str, ...]
    speculative: tuple[str, ...]


class UnreadEngine(InputError):
    """The serving config launches an engine specgate does not read. ``speculates``:
    the launch sets one of that engine's speculative flags (else a deployment whose
    speculation is off agrees with it, as with a config that configures nothing)."""

    def __init__(self, reason: str, file: str, line: int | None, *, speculates: bool) -> None:
        super().__init__(reason, file, line)
        self.speculates = speculates


@cache
def launchers() -> tuple[Launcher, ...]:
    """The launchers of ``unread-launchers.json``, in file order."""
    data = json.loads(read_data("unread-launchers.json"))
    return tuple(
        Launcher(
            entry["engine"],
            frozenset(entry["programs"]),
            frozenset(entry["modules"]),
            tuple(entry["images"]),
            tuple(entry["speculative"]),
        )
        for entry in data["launchers"]
    )


def unread_launcher(
    doc: Document, text: str | None, pointer: str | None, shown: str
) -> UnreadEngine | None:
    """The input error naming the first launcher of an unread engine in ``doc`` (below
    ``pointer`` when given): "serving config launches Text Generation Inference (TGI)
    (text-generation-launcher at /command), which specgate does not read …", at the
    launch's line; None when there is none."""
    base: NodePath = ()
    node = doc.data
    if pointer is not None:
        try:
            base, node = resolve_pointer(doc.data, pointer, file=shown)
        except InputError:
            return None
    found = search(node, _detect, base=base)
    if not found:
        return None
    first = found[0]
    launcher = next(x for x in launchers() if x.engine == first.verdict.engine)
    words = _words(first.value)
    setting = [flag for flag in launcher.speculative if _sets(words, flag)]
    where = f" at {first.pointer}" if first.pointer else ""
    unchecked = f"; its {', '.join(setting)} not checked" if setting else ""
    return UnreadEngine(
        f"serving config launches {launcher.engine}{where}, which specgate does not read "
        "(it reads vLLM, SGLang, TensorRT-LLM, transformers and llama.cpp "
        f"configurations){unchecked}",
        shown,
        _line(doc, first),
        speculates=bool(setting),
    )


def _line(doc: Document, found: Found) -> int | None:
    """The line of the launch: the command's own line in a text file, else the
    node's (a scalar's first line)."""
    if found.path == () and isinstance(doc.data, str):
        for command in split_commands(doc.data):
            if _detect_words(command.argv) is not None:
                return 1 + (command.lines[0] if command.lines else 0)
        return None
    return doc.locate(found.path).line


def _detect(node: object) -> Sequence[Verdict]:
    if isinstance(node, Mapping):
        for key in ("image", "repository"):
            value = node.get(key)
            if isinstance(value, str) and (launcher := _by_image(value)) is not None:
                return [Verdict(launcher.engine, "config")]
        return []
    for words in _commands(node):
        launcher = _detect_words(words)
        if launcher is not None:
            return [Verdict(launcher.engine, "config")]
    return []


def launched_by(argv: Sequence[str]) -> Launcher | None:
    """The unread engine whose program (or container image) ``argv`` runs (``lmdeploy serve …``,
    ``python -m mlx_lm.server …``), else None: such a command is no configuration of
    an engine specgate reads, even where its flags are spelled alike (LMDeploy's
    ``--speculative-algorithm`` is SGLang's spelling too); a ``docker run`` of one of its
    images likewise."""
    return _detect_words(argv)


def _detect_words(words: Sequence[str]) -> Launcher | None:
    return _by_program(words) or next((x for w in words if (x := _by_image(w)) is not None), None)


def _commands(node: object) -> list[tuple[str, ...]]:
    """The argv of each command a string or an argv list holds (none when it cannot
    be split)."""
    if isinstance(node, list) and node and all(isinstance(x, str) for x in node):
        return [tuple(node)]
    if not isinstance(node, str) or not node.strip():
        return []
    try:
        return [c.argv for c in split_commands(node)]
    except InputError:
        return []


def _words(node: object) -> tuple[str, ...]:
    if isinstance(node, Mapping):
        out: list[str] = []
        for key, value in node.items():
            out.append(str(key))
            out.extend(w for argv in _commands(value) for w in argv)
            if isinstance(value, list):
                out.extend(str(v) for v in value)
        return tuple(out)
    return tuple(w for argv in _commands(node) for w in argv)


def _sets(words: Sequence[str], flag: str) -> bool:
    """Whether ``words`` set ``flag`` (``--flag``, ``--flag=v``, ``NAME=v`` for a variable)."""
    return any(w == flag or w.startswith(flag + "=") for w in words)


def _by_program(argv: Sequence[str]) -> Launcher | None:
    words = list(argv)
    while words and (words[0] in _WRAPPERS or "=" in words[0]):
        words.pop(0)
    if not words:
        return None
    program = PurePosixPath(words[0]).name
    module = None
    if program.startswith(_PYTHONS) and len(words) > 2 and words[1] == "-m":
        module = words[2]
    for launcher in launchers():
        if program in launcher.programs or (module is not None and module in launcher.modules):
            return launcher
    return None


def _by_image(word: str) -> Launcher | None:
    name = word.split("@", 1)[0]
    if ":" in PurePosixPath(name).name:
        name = name.rsplit(":", 1)[0]
    for launcher in launchers():
        if name in launcher.images or any(
            name.endswith("/" + image) for image in launcher.images
        ):
            return launcher
    return None

