"""The served (target) model an engine configuration names (the config digest's
``target_model``, docs/change-gate.md#config-digest: "the engine config's model, else model.name").

Where each engine takes it from is data: the ``target_model`` table of the engine's
knowledge file (``specgate/data/engines/*.json``), in order of precedence, each entry
``option`` (a normalised flag or key: ``model``, ``model_path``, ``hf_repo``),
``positional`` (the word directly after that program or subcommand word:
``sglang serve MODEL``) or ``interspersed`` (the first positional word after that
program or subcommand word, wherever it stands among the options, as argparse and
click parse it: ``vllm serve --port 8000 MODEL``, ``trtllm-serve --tp_size 2 MODEL``).

The named word must be among the leading words of the command (before its first
flag). An interspersed positional is found by walking the options with the engine's
``cli_arity`` table (flag → ``none`` for a switch, ``many`` for a flag taking every
following word, as argparse ``nargs="+"`` does); any other flag takes one value
(``--flag value``; ``--flag=value`` takes none), a word starting with ``-`` is never
a value, and after ``--`` the next word is positional (argparse's rule). A flag the
table does not know is read as taking a value, so an unknown switch directly before
the model hides it (``None``) rather than a value being taken for the model. A bare
speculative block names no target (its ``model`` is the draft). Nothing is guessed:
no entry found ⇒ ``None``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import PurePosixPath

from specgate.core.errors import InputError
from specgate.inputs.engines._source import (
    Opt,
    Options,
    _node,
    commands_of,
    is_argv,
    looks_like_command,
)
from specgate.inputs.knowledge import knowledge
from specgate.inputs.parsers import NEGATIVE_NUMBER
from specgate.inputs.types import EngineConfig
from specgate.load.document import Document, NodePath, Span

_TABLE = "target_model"
_ARITY = "cli_arity"
_INTERSPERSED = "interspersed"
_ENTRYPOINTS = "image_entrypoints"


def entries(engine: str) -> Mapping[str, str]:
    """The engine's ``target_model`` table (spelling → ``option`` | ``positional`` |
    ``interspersed``),
    in order of precedence; empty when the engine names no target (transformers)."""
    data = knowledge(engine)
    return data.table(_TABLE) if data.has_table(_TABLE) else {}


def arity(engine: str) -> Mapping[str, str]:
    """The engine's ``cli_arity`` table keyed by bare flag name (``enforce-eager``):
    ``none`` | ``many``; empty when the engine has none."""
    data = knowledge(engine)
    if not data.has_table(_ARITY):
        return {}
    return {_bare(flag): how for flag, how in data.table(_ARITY).items()}


def _bare(word: str) -> str:
    """``--max_batch_size`` → ``max-batch-size`` (leading dashes off, ``_`` as ``-``)."""
    return word.lstrip("-").replace("_", "-")


def _is_option(word: str) -> bool:
    """A word the parser reads as an option: starts with ``-``, is not ``-`` alone
    and is not shaped like a negative number (argparse's ``_negative_number_matcher``,
    ``python/cpython:Lib/argparse.py`` at v3.11.7: ``-5`` and ``-.5``, not ``-1e3``)."""
    if not word.startswith("-") or word == "-":
        return False
    return NEGATIVE_NUMBER.match(word) is None


def interspersed_model(argv: Sequence[str], start: int, flags: Mapping[str, str]) -> int | None:
    """The index of the first positional word of ``argv[start:]``, options skipped
    with their values per ``flags`` (bare name → ``none`` | ``many``); None when
    every word is an option or a value. Linear in ``len(argv)``."""
    i = start
    while i < len(argv):
        word = argv[i]
        if word == "--":
            return i + 1 if i + 1 < len(argv) else None
        if not _is_option(word):
            return i
        if " " in word and not (word.startswith("--") and " " not in word.partition("=")[0]):
            # argparse reads a word holding a space as an option or an argument by the
            # parser's options; --NAME=VALUE (a JSON value) is read as the option
            return None
        i += 1
        if "=" in word:
            continue
        bare = _bare(word)
        how = flags.get(bare)
        if how is None and bare.startswith("no-") and flags.get(bare[3:]) == "none":
            how = "none"  # argparse BooleanOptionalAction's --no-FLAG
        if how == "none":
            continue
        if how == "many":
            while i < len(argv) and not _is_option(argv[i]) and argv[i] != "--":
                i += 1
            continue
        if i < len(argv) and not _is_option(argv[i]) and argv[i] != "--":
            i += 1
    return None


def positional_model(
    argv: Sequence[str],
    spans: Sequence[Span],
    table: Mapping[str, str],
    flags: Mapping[str, str] | None = None,
) -> Opt | None:
    """The model word of ``argv`` that follows a ``positional`` entry's word
    (``serve`` in ``sglang serve MODEL``) or, for an ``interspersed`` entry, the
    first positional word after it among the options (``vllm serve --port 8000
    MODEL``; ``flags`` is the engine's :func:`arity`), with its span; ``None`` when
    there is none.

    The named word must be among the command's leading words (up to its first flag;
    ``python -m module`` is skipped over), so a flag's value is never taken for it."""
    names = {name for name, how in table.items() if how in ("positional", _INTERSPERSED)}
    if not names:
        return None
    leading = _leading(argv)
    for index in leading:
        name = PurePosixPath(argv[index]).name
        if name not in names:
            continue
        nxt: int | None = index + 1
        if table[name] == _INTERSPERSED:
            nxt = interspersed_model(argv, index + 1, flags or {})
        elif nxt not in leading:
            continue
        if nxt is None or nxt >= len(argv):
            continue
        word = argv[nxt]
        if word in names or not word.strip():
            continue  # trtllm-serve serve MODEL: the subcommand, not the model
        span = spans[nxt] if nxt < len(spans) else Span(1, 1)
        return Opt(word, span, spelled=argv[index])
    return None


def _leading(argv: Sequence[str]) -> list[int]:
    """The indexes of the command's leading words, up to its first flag (``python -m
    MODULE`` skipped over)."""
    leading: list[int] = []
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "-m" and i + 1 < len(argv):  # python -m MODULE
            i += 2
            continue
        if word.startswith("-"):
            break
        leading.append(i)
        i += 1
    return leading


def names_program(argv: Sequence[str], table: Mapping[str, str]) -> bool:
    """Whether a leading word of ``argv`` is a program or subcommand word of the
    engine's ``target_model`` table (``serve`` of ``vllm serve``): the command then
    names its model (or none) itself, and no ENTRYPOINT runs before it a second time."""
    names = {name for name, how in table.items() if how in ("positional", _INTERSPERSED)}
    return any(PurePosixPath(argv[i]).name in names for i in _leading(argv))


def sibling_positional(
    doc: Document,
    path: NodePath,
    text: str | None,
    table: Mapping[str, str],
    flags: Mapping[str, str] | None = None,
) -> Opt | None:
    """The positional model of a command string or argv list held directly by the
    mapping that holds the configuration at ``path``, or by one of its ancestors
    (nearest first): ``trtllm-serve MODEL --config …`` beside the YAML block. One
    distinct model at the nearest level that has any, else ``None``."""
    if not any(how in ("positional", _INTERSPERSED) for how in table.values()):
        return None
    for depth in range(len(path), -1, -1):
        parent = _node(doc.data, path[:depth])
        if not isinstance(parent, Mapping):
            continue
        found: dict[str, Opt] = {}
        for key, value in parent.items():
            here = (*path[:depth], str(key))
            if here == path[: depth + 1] or not (is_argv(value) or looks_like_command(value)):
                continue
            try:
                sources = commands_of(value, doc, here, text)
            except InputError:
                continue
            for source in sources:
                opt = positional_model(source.command.argv, source.spans, table, flags)
                if opt is not None:
                    found.setdefault(str(opt.value), opt)
        if len(found) == 1:
            return next(iter(found.values()))
        if found:
            return None  # several commands name different models: never guess
    return None


#: Keys whose words run before the configuration's words, by the key holding it:
#: Kubernetes ``command`` before ``args``, Compose ``entrypoint`` before ``command``.
_RUN_BEFORE = {"args": "command", "command": "entrypoint"}


def launch_prefix(
    doc: Document, path: NodePath, text: str | None, engine: str
) -> tuple[tuple[str, ...], tuple[Span, ...]]:
    """The words a container runs before the argv list or command string at ``path``
    (with their spans): the sibling ``command`` of Kubernetes ``args``, the sibling
    ``entrypoint`` of a Compose ``command``, else the ENTRYPOINT of the sibling
    ``image`` when the engine's ``image_entrypoints`` table knows it (vLLM's
    ``vllm/vllm-openai``: ``vllm serve``). Empty when none applies.

    Sources: Kubernetes Container ``command``/``args`` (args are appended to
    command); Compose ``entrypoint``/``command`` (command is appended to entrypoint).
    """
    if not path or not isinstance(path[-1], str) or path[-1] not in _RUN_BEFORE:
        return (), ()
    parent = _node(doc.data, path[:-1])
    if not isinstance(parent, Mapping):
        return (), ()
    before = _RUN_BEFORE[path[-1]]
    if before in parent:
        where = (*path[:-1], before)
        words = parent[before]
        if isinstance(words, list) and all(isinstance(w, str) for w in words):
            spans = tuple(doc.locate((*where, i)) for i in range(len(words)))
            return tuple(words), spans
        if isinstance(words, str):
            try:
                sources = commands_of(words, doc, where, text)
            except InputError:
                return (), ()
            if len(sources) == 1:
                return sources[0].command.argv, sources[0].spans
        return (), ()
    image = parent.get("image")
    entrypoint = _entrypoint(image, engine) if isinstance(image, str) else None
    if entrypoint is None:
        return (), ()
    span = doc.locate((*path[:-1], "image"))
    return entrypoint, tuple(span for _ in entrypoint)


def _entrypoint(image: str, engine: str) -> tuple[str, ...] | None:
    """The ENTRYPOINT words of ``image`` per the engine's ``image_entrypoints`` table."""
    data = knowledge(engine)
    if not data.has_table(_ENTRYPOINTS):
        return None
    name = _image_name(image)
    for known, entrypoint in data.table(_ENTRYPOINTS).items():
        if name == known or name.endswith("/" + known):
            return tuple(entrypoint.split())
    return None


def in_container(
    argv: Sequence[str], spans: Sequence[Span], engine: str
) -> tuple[tuple[str, ...], tuple[Span, ...]]:
    """``docker run [opts] IMAGE [args]`` (or ``podman run``): the container's argv —
    the image's ENTRYPOINT (engine data) followed by the words after the image — when
    a word of ``argv`` is an image the engine's ``image_entrypoints`` table knows;
    else empty (also when ``--entrypoint`` replaces it). The image word is the first
    such word (docker's own options before it take values we do not model, so the
    image is found by its name)."""
    for index, word in enumerate(argv):
        if word == "--entrypoint" or word.startswith("--entrypoint="):
            return (), ()  # the image's ENTRYPOINT is replaced: nothing known
        if ":" not in word and "/" not in word:
            continue
        entrypoint = _entrypoint(word, engine)
        if entrypoint is None:
            continue
        span = spans[index] if index < len(spans) else Span(1, 1)
        return (*entrypoint, *argv[index + 1 :]), (
            *(span for _ in entrypoint),
            *spans[index + 1 :],
        )
    return (), ()


def _image_name(image: str) -> str:
    """``docker.io/vllm/vllm-openai:v0.11.0@sha256:…`` → ``docker.io/vllm/vllm-openai``."""
    name = image.strip().split("@", 1)[0]
    slash = name.rfind("/")
    colon = name.rfind(":")
    return name[:colon] if colon > slash else name


def with_target_model(config: EngineConfig, own: Options, positional: Opt | None) -> EngineConfig:
    """``config`` with ``target_model`` (and its span) from the first entry of the
    engine's table that is present: ``own`` are the engine's own serve-level options
    (none for a bare speculative block), ``positional`` the command's model word."""
    for name, how in entries(config.engine).items():
        opt = positional if how in ("positional", _INTERSPERSED) else own.get(name)
        if opt is None or not isinstance(opt.value, str) or not opt.value.strip():
            continue
        return replace(
            config,
            target_model=opt.value.strip(),
            spans={**config.spans, "target_model": opt.span},
        )
    return config
