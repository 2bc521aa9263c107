"""Positional words an engine's parser refuses (docs/engines.md#containers).

An engine program takes a fixed number of positional words: ``vllm serve`` one
(``model_tag``), llama.cpp's programs and TGI's launcher none. The number is data, the
``positionals`` table of the engine's knowledge file (each with the parser read at a
commit or run at a version); a command that gives more stops at start, before any
speculative setting is used. The usual cause is a container command that repeats its
image's ENTRYPOINT: ``docker run vllm/vllm-openai vllm serve MODEL`` runs ``vllm serve
vllm serve MODEL``, which vLLM's argparse refuses ("unrecognized arguments: serve
MODEL"); Compose ``command:`` and Kubernetes ``args:`` alike.

Only the leading words are counted: those after the table's words and before the
command's first word that starts with ``-``. They are positional whatever each flag's
arity, so the count never rests on a flag table; a positional after the options is not
counted, and a word that may stand for several or none (an elision such as ``...`` in
published prose, a word the shell would still expand) leaves the count unjudged (never a
finding that could be wrong).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import cache
from pathlib import PurePosixPath

from specgate.core.vocabulary import ENGINE_NAMES
from specgate.inputs.knowledge import knowledge, parse_version
from specgate.inputs.types import EngineConfig, EngineIssue
from specgate.load.document import Span

_TABLE = "positionals"
_FIELD = "setting:positional"
#: How each engine's parser words the refusal of a positional word (the table's note
#: cites the parser): argparse lists every extra word, llama.cpp's common_params_parse_ex
#: and clap name the first.
_SAYS = {
    "vllm": "error: unrecognized arguments: {all}",
    "llamacpp": "error: invalid argument: {first}",
    "tgi": "error: unexpected argument '{first}' found",
}
#: At most this many leading words are looked at (a command's program stands early).
_LEADING = 64


@cache
def positional_programs() -> frozenset[str]:
    """The program words of every engine's ``positionals`` table (``vllm``,
    ``llama-server``, ``text-generation-launcher``)."""
    out: set[str] = set()
    for engine in ENGINE_NAMES:
        data = knowledge(engine)
        if data.has_table(_TABLE):
            out.update(key.split()[0] for key in data.table(_TABLE))
    return frozenset(out)


def _leading(argv: Sequence[str]) -> list[str]:
    """The words before the first one starting with ``-`` (at most :data:`_LEADING`)."""
    out: list[str] = []
    for word in argv[:_LEADING]:
        if word.startswith("-"):
            break
        out.append(word)
    return out


def _open(word: str) -> bool:
    """A word that may stand for other words, or for none: an elision of prose (``...``,
    ``…``, ``<model>``, ``[options]``) or text a shell would still expand (``$ARGS``)."""
    return (
        not word.strip(".…") or word[:1] in "<[{" or any(c in word for c in "$`*?")
    )


def extra_positionals(engine: str, argv: Sequence[str]) -> tuple[str, int, int] | None:
    """(the table's words as matched, the index of the first positional word the engine
    refuses, how many it takes) for ``argv``, else None (module doc)."""
    data = knowledge(engine)
    if not data.has_table(_TABLE):
        return None
    leading = _leading(argv)
    names = [PurePosixPath(word).name for word in leading]
    for key, count in data.table(_TABLE).items():
        words = key.split()
        for start in range(len(names) - len(words) + 1):
            if names[start : start + len(words)] != words:
                continue
            takes = _recorded_count(engine, int(count))
            first = start + len(words) + takes
            if first >= len(leading) or any(
                _open(word) for word in leading[start + len(words) :]
            ):
                return None  # the program's first mention decides
            return key, first, takes
    return None


def trailing_positionals(
    engine: str, argv: Sequence[str], version: str | None
) -> tuple[str, list[int], int] | None:
    """(the table's words as matched, the indices of the positional words after the
    options that the engine refuses, how many positional words it takes) when the
    leading words fill the command's positionals exactly and words after its options
    are left over (:mod:`.trailing`), else None."""
    data = knowledge(engine)
    if not data.has_table(_TABLE):
        return None
    leading = _leading(argv)
    if len(leading) >= len(argv) or len(leading) >= _LEADING:
        return None
    names = [PurePosixPath(word).name for word in leading]
    for key, count in data.table(_TABLE).items():
        words = key.split()
        for start in range(len(names) - len(words) + 1):
            if names[start : start + len(words)] != words:
                continue
            takes = _recorded_count(engine, int(count))
            given = leading[start + len(words) :]
            if len(given) != takes or any(_open(word) for word in given):
                return None
            from specgate.inputs.engines.trailing import trailing_extras

            extras = trailing_extras(engine, argv, len(leading), version)
            return (key, extras, takes) if extras else None
    return None


def _recorded_count(engine: str, stated: int) -> int:
    """How many positional words the command takes: by the newest recorded parser that
    kept its positionals (scripts/record_engine_parsers.py: ``vllm serve``'s
    ``model_tag``, ``nargs="?"``), else ``stated``, the table's."""
    from specgate.inputs.parsers import recorded_parser

    for version in reversed(knowledge(engine).parser_versions):
        count = recorded_parser(engine, version).positional_words()
        if count is not None:
            return count
    return stated


def refused_positionals(
    config: EngineConfig, argv: Sequence[str], spans: Sequence[Span]
) -> EngineConfig:
    """``config`` with SG307 at the first positional word its engine refuses (module
    doc), when ``argv`` gives one."""
    if any(i.field == _FIELD for i in config.issues):
        return config
    found = extra_positionals(config.engine, argv)
    if found is None:
        return _refused_trailing(config, argv, spans)
    key, first, count = found
    extra = _leading(argv)[first:]
    data = knowledge(config.engine)
    said = _SAYS.get(config.engine, "{first}").format(all=" ".join(extra), first=extra[0])
    takes = "no positional word" if count == 0 else (
        "one positional word" if count == 1 else f"{count} positional words"
    )
    repeated = ""
    program = PurePosixPath(key.split()[0]).name
    positional = _leading(argv)[first - count : first]
    again = [i for i, w in enumerate([*positional, *extra]) if PurePosixPath(w).name == program]
    if again:  # the finding sits at the repeated program word
        first = first - count + again[0]
        repeated = (
            f"; the command repeats `{key}`: in a container whose image's ENTRYPOINT is "
            f"already `{key}` the words run twice, so write the command without them"
        )
    at = data.display_name + (
        f" {config.version}"
        if config.version is not None and config.version_source != "assumed-newest"
        else ""
    )
    message = (
        f"{at} refuses to start: `{key}` takes {takes}, but {len(extra)} more "
        f"{'follows' if len(extra) == 1 else 'follow'} it ({' '.join(extra)[:200]}); "
        f"its parser stops with '{said[:240]}'{repeated}"
    )
    span = spans[first] if first < len(spans) else (spans[0] if spans else Span(1, 1))
    return _with_issue(config, message, span)


def _refused_trailing(
    config: EngineConfig, argv: Sequence[str], spans: Sequence[Span]
) -> EngineConfig:
    """``config`` with SG307 at the first word after the options that the engine
    refuses (:func:`trailing_positionals`), when there is one."""
    version = config.version if config.version_source != "assumed-newest" else None
    found = trailing_positionals(config.engine, argv, version)
    if found is None:
        return config
    key, extras, count = found
    words = [argv[i] for i in extras]
    data = knowledge(config.engine)
    said = _SAYS.get(config.engine, "{first}").format(all=" ".join(words), first=words[0])
    takes = "no positional word" if count == 0 else (
        "one positional word" if count == 1 else f"{count} positional words"
    )
    message = (
        f"{data.display_name} {config.version} refuses to start: `{key}` takes {takes}, "
        f"given before its options, and no option takes the "
        f"{'word' if len(words) == 1 else f'{len(words)} words'} after them "
        f"({' '.join(words)[:200]}); its parser stops with '{said[:240]}' (a `#` in a "
        "Compose string command or YAML block scalar is text, not a comment)"
    )
    first = extras[0]
    span = spans[first] if first < len(spans) else (spans[0] if spans else Span(1, 1))
    return _with_issue(config, message, span)


def _with_issue(config: EngineConfig, message: str, span: Span) -> EngineConfig:
    data = knowledge(config.engine)
    details = f"source {data.table_source(_TABLE)}"
    version = parse_version(config.version) if config.version is not None else None
    older = version is not None and version < data.oldest_read
    if older:  # what a release before the data refuses is not checked: a warn there
        details += (
            f"; {data.display_name} {config.version} is older than the releases specgate's "
            "engine data was read from, so this warns there"
        )
    issue = EngineIssue(
        "SG307", message, _FIELD, severity="warn" if older else None, details=details
    )
    return replace(
        config, issues=(*config.issues, issue), spans={**config.spans, _FIELD: span}
    )
