"""The served (target) model an engine configuration names (the config digest's
``target_model``, DESIGN.md §9.5: "the engine config's model, else model.name").

Where each engine takes it from is data: the ``target_model`` table of the engine's
knowledge file (``specgate/data/engines/*.json``), in order of precedence, each entry
either ``option`` (a normalised flag or key: ``model``, ``model_path``, ``hf_repo``)
or ``positional`` (the word directly after that program or subcommand word:
``vllm serve MODEL``, ``sglang serve MODEL``, ``trtllm-serve [serve] MODEL``).

A positional is read only where it cannot be anything else: among the leading words
of the command (before its first flag), directly after the named word. A bare
speculative block names no target (its ``model`` is the draft). Nothing is guessed:
no entry found ⇒ ``None``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import PurePosixPath

from specgate.document import Document, NodePath, Span
from specgate.errors import InputError
from specgate.inputs.engines._source import (
    Opt,
    Options,
    _node,
    commands_of,
    is_argv,
    looks_like_command,
)
from specgate.inputs.knowledge import knowledge
from specgate.inputs.types import EngineConfig

_TABLE = "target_model"


def entries(engine: str) -> Mapping[str, str]:
    """The engine's ``target_model`` table (spelling → ``option`` | ``positional``),
    in order of precedence; empty when the engine names no target (transformers)."""
    data = knowledge(engine)
    return data.table(_TABLE) if data.has_table(_TABLE) else {}


def positional_model(
    argv: Sequence[str], spans: Sequence[Span], table: Mapping[str, str]
) -> Opt | None:
    """The model word of ``argv`` that follows a ``positional`` entry's word
    (``serve`` in ``vllm serve MODEL``), with its span; ``None`` when there is none.

    Only the command's leading words count (up to its first flag; ``python -m
    module`` is skipped over), so a flag's value is never taken for the model."""
    names = {name for name, how in table.items() if how == "positional"}
    if not names:
        return None
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
    for position, index in enumerate(leading[:-1]):
        nxt = leading[position + 1]
        if nxt != index + 1 or PurePosixPath(argv[index]).name not in names:
            continue
        word = argv[nxt]
        if word in names or not word.strip():
            continue  # trtllm-serve serve MODEL: the subcommand, not the model
        span = spans[nxt] if nxt < len(spans) else Span(1, 1)
        return Opt(word, span, spelled=argv[index])
    return None


def sibling_positional(
    doc: Document, path: NodePath, text: str | None, table: Mapping[str, str]
) -> Opt | None:
    """The positional model of a command string or argv list held directly by the
    mapping that holds the configuration at ``path``, or by one of its ancestors
    (nearest first): ``trtllm-serve MODEL --config …`` beside the YAML block. One
    distinct model at the nearest level that has any, else ``None``."""
    if not any(how == "positional" for how in table.values()):
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
                opt = positional_model(source.command.argv, source.spans, table)
                if opt is not None:
                    found.setdefault(str(opt.value), opt)
        if len(found) == 1:
            return next(iter(found.values()))
        if found:
            return None  # several commands name different models: never guess
    return None


def with_target_model(config: EngineConfig, own: Options, positional: Opt | None) -> EngineConfig:
    """``config`` with ``target_model`` (and its span) from the first entry of the
    engine's table that is present: ``own`` are the engine's own serve-level options
    (none for a bare speculative block), ``positional`` the command's model word."""
    for name, how in entries(config.engine).items():
        opt = positional if how == "positional" else own.get(name)
        if opt is None or not isinstance(opt.value, str) or not opt.value.strip():
            continue
        return replace(
            config,
            target_model=opt.value.strip(),
            spans={**config.spans, "target_model": opt.span},
        )
    return config
