"""Words of an engine's command that the launcher's text does not settle.

A shell script, a Compose ``command`` or a Kubernetes ``args`` list may hold words
whose value is known only when it runs: ``"$@"`` (the script's arguments),
``"${ARGS[@]}"`` of an array never assigned, ``$EXTRA`` from the environment or
from a ``. ./extra.env`` specgate does not read, ``$(…)``, a Compose ``${VAR}``
that neither ``.env`` nor a default fills in. Any of them may hold flags: one
standing after the engine's speculative flags may replace them (argparse: the last
occurrence wins), so the draft length D and the method read from the literal words
may not be what the engine runs (hostile review r4 defect 2: ``--speculative-config
'{…3}' "$@"`` after ``set -- --speculative-config '{…12}'`` runs 12).

Judgement (:func:`unsettled_words`): such a word after the first speculative flag of
the command, or in a command that states none, is an unsettled value at its line
(:class:`~specgate.core.errors.UnsettledValue`: the reading may miss the flag the
engine runs, so D and the method are not read from the command; the deployment is
judged on the claims file's values, with SG313 when the word is set from outside the
repository, SG314 when the repository sets it in a way not followed:
docs/engines.md#unsettled-values); one before every speculative flag is a note
naming it (the literal flags after it win for what they set), and so is one in the
value place of a flag (``--port "$PORT"``: a single word there is the flag's value,
argparse never reads it as a flag) unless the shell splits it and a file specgate
does not read fills it (``--port $X`` after ``. ./x.env``: ``X="8000
--speculative-config …"`` adds a flag; a value from the environment the launcher runs
in is the deployment's, not the pull request's).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from specgate.core.errors import InputError, LimitReached, RefusedValue, UnsettledValue
from specgate.inputs.cmdline import FlagSpec
from specgate.inputs.engines._source import CommandSource, commands_of, norm_key
from specgate.load.document import Document, Span

#: Normalised flag names that set the speculative method or the draft length, or
#: hand the whole configuration to a file (vLLM ``--config``, TensorRT-LLM
#: ``--extra_llm_api_options``); the same prefixes
#: :data:`specgate.inputs.engines.launch.SPECULATIVE_PREFIXES` merges fragments by.
SPECULATIVE_PREFIXES = ("speculative", "spec_", "draft", "model_draft", "num_speculative")
_CONFIG_FILES = frozenset({"config", "extra_llm_api_options"})
#: Normalised flags whose value is a JSON object of speculative keys.
_JSON_FLAGS = frozenset({"speculative_config", "sc"})


def _speculative(name: str) -> bool:
    key = norm_key(name)
    return key.startswith(SPECULATIVE_PREFIXES) or key in _CONFIG_FILES


def _takes_value(spec: FlagSpec, word: str) -> bool:
    """Whether the engine's recorded parser (of the version in force: ``spec``'s) reads
    ``word`` as a flag taking a value (False when unknown: then the next word may be
    anything)."""
    if spec.engine_parser is None or not word.startswith("--") or "=" in word:
        return False
    parser = spec.engine_parser()
    answer, options = parser.read(word)
    # an ambiguous word is refused, but as any of its flags it would take the next word
    return answer in ("flag", "ambiguous") and all(parser.options[o] for o in options)


def unsettled_words(source: CommandSource, spec: FlagSpec) -> list[str]:
    """Notes for the unsettled words of ``source`` that cannot change D or the method.

    Args:
        source: the engine's command, with ``command.unresolved`` (per word index, what
            it is and whether the shell splits it).
        spec: the engine's flags at the version in force (its recorded parser tells
            which flags take a value).

    Returns:
        one note per harmless unsettled word (its description and line).

    Raises:
        UnsettledValue: an unsettled word after the first speculative flag, or in a
            command with none (at the word's line; its origin from the hit).
    """
    unresolved = source.command.unresolved
    if not unresolved:
        return []
    argv = source.command.argv
    flags = source.flags(spec)
    anchors = sorted(f.index for name, f in flags.items() if _speculative(name))
    values = {
        f.index + 1
        for name, f in flags.items()
        if f.value is not None and "=" not in argv[f.index]
    }
    # the words that are a JSON configuration's value (vLLM `--speculative-config`/`-sc`)
    json_values = {
        f.index + 1
        for name, f in flags.items()
        if f.value is not None and "=" not in argv[f.index]
        and (norm_key(name) in _JSON_FLAGS or norm_key(argv[f.index]) in _JSON_FLAGS)
    }
    notes: list[str] = []
    pending: tuple[int, Span | None, int | None] | None = None
    for index in sorted(unresolved):
        what, splits, from_file = unresolved[index]
        # a word that left none (``${EXTRA:-}``) stands before the next, or ends it
        at = min(index, len(source.spans) - 1)
        line = source.spans[at].line if at >= 0 else None
        place = hit_span(source, index, unresolved[index])
        where = f" (line {line})" if line is not None else ""
        previous = argv[index - 1] if 0 < index <= len(argv) else ""
        # a flag's value: one word is the value, never a flag; a value the shell splits
        # may hold more words, harmless only from the environment (not the pull request)
        # ... unless it is the value of a speculative flag that the pull request sets
        # in a way not followed (`--speculative-config "$SPEC"` after `declare SPEC=…`)
        value_place = (
            (not splits or not from_file)
            and (index in values or _takes_value(spec, previous))
            and not (from_file and _speculative(previous.partition("=")[0]))
        )
        # ... but never harmless in a speculative flag's own value: text from outside
        # spliced into JSON (`'{"model": "'"$DRAFT"'", …}'`) may close the string and
        # add keys (`DRAFT='x", "method": "ngram", "y": "'`: json.loads keeps the later
        # key), so the whole value is unsettled, after any word that stops the reading
        # sooner (docs/engines.md#unsettled-values)
        if value_place and index in json_values:
            pending = pending or (index, place, line)
            continue
        # split words the pull request fills may end in a flag that takes the next
        # word, a speculative flag, as its value (`$ARGS` holding `--speculative-config`)
        swallows = (
            splits
            and from_file
            and index + 1 < len(argv)
            and _speculative(argv[index + 1].partition("=")[0])
        )
        if not swallows and (value_place or (anchors and index < anchors[0])):
            why = "a flag's value" if value_place else "before the speculative flags, which win"
            notes.append(f"{what}{where}: specgate cannot see what it holds ({why})")
            continue
        if anchors:
            shown = argv[anchors[0]]
            position = (
                f"it stands after {shown} (word {anchors[0] + 1}), and the last of a "
                "repeated flag wins, so it may replace D or the method"
            )
        else:
            position = "the command states no speculative flag, so it may add them"
        raise unsettled_value(
            f"{what}: {position}; specgate cannot see what it adds. State the engine's "
            "flags literally in the command (or after this word)",
            source.file,
            place.line if place else line,
            unresolved[index],
            place.column if place else None,
            set_where=set_at(source, index, unresolved[index]),
        )
    if pending is not None:
        index, place, line = pending
        raise unsettled_value(
            f"{unresolved[index][0]}: it is in the JSON value of {argv[index - 1]}, and text "
            "from outside spliced into JSON may set any of its keys; specgate cannot see "
            "what it holds. Write the value literally",
            source.file,
            place.line if place else line,
            unresolved[index],
            place.column if place else None,
            set_where=set_at(source, index, unresolved[index]),
        )
    return notes


def hit_span(source: CommandSource, index: int, hit: tuple[str, bool, bool]) -> Span | None:
    """Where the expansion ``hit`` names (as written, between its first backquotes)
    stands in the file: in word ``index`` of ``source``'s command, which keeps an
    expansion it does not settle as written, traced back through the file's quoting
    (:attr:`CommandSource.char_spans`); None when it cannot be traced (then the
    word's line is told)."""
    what = hit[0]
    shown = what[1 : what.index("`", 1)] if what.startswith("`") and "`" in what[1:] else ""
    shown = shown.removesuffix("…")
    argv = source.command.argv
    if not shown or index >= len(argv):
        return None
    at = argv[index].find(shown)
    chars = source.char_spans(index) if at >= 0 and source.char_spans is not None else None
    if chars is not None and at < len(chars):
        return chars[at]
    # the word holds the value the script gave the name (`N=$(cat f)` then `…:$N}`):
    # the expansion stands as written in the file (docs/engines.md#unsettled-values)
    written = source.written(index) if source.written is not None else None
    at = written[0].find(shown) if written is not None else -1
    return written[1][at] if written is not None and 0 <= at < len(written[1]) else None


#: A hit for a name the script set from text not evaluated (:mod:`specgate.inputs.cmdline`
#: ``_assignment``): the expansion, the line of the assignment in the script, the text.
_SET_RE = re.compile(r"`(\$\{?[A-Za-z_][A-Za-z0-9_]*\}?)`: [A-Za-z_][A-Za-z0-9_]* is set on line "
                     r"([0-9]{1,9}) of the script from (`[^`]*`)")


def set_at(source: CommandSource, index: int, hit: tuple[str, bool, bool]) -> str:
    """Where the name ``hit`` expands got its value, for the message, when the script
    set it from text not evaluated (``N=$(cat f)``): "`$(cat f)` at FILE:LINE" for a
    whole-file script, whose lines are the file's; "" otherwise."""
    found = _SET_RE.match(hit[0])
    if found is None or source.written is None or source.written(index) is None:
        return ""
    return f"set from {found.group(3)[:60]} at {source.file}:{found.group(2)}"


def unsettled_value(
    reason: str,
    file: str,
    line: int | None,
    hit: tuple[str, bool, bool],
    column: int | None = None,
    *,
    set_where: str = "",
) -> UnsettledValue:
    """The :class:`UnsettledValue` of a shell or Compose hit ``(what, splits,
    from_file)``: from a file or the script's own text (``$(…)``, a sourced file not
    read, an array or index not followed) is the repository's; a name no text sets
    (the environment, ``$@``, a Compose ``${VAR}`` no ``.env`` fills) is outside."""
    what, _, from_file = hit
    shown = what[1 : what.index("`", 1)] if what.startswith("`") and "`" in what[1:] else what
    origin = "repository" if from_file else "outside"
    named = _OPERAND_RE.match(shown)
    if named is not None and origin == "outside":
        # `${1:-4}`, `${D:?msg}`: the parameter outside is what the finding names
        where = f"{file}:{line}" if line is not None else file
        return UnsettledValue(
            reason, file, line, origin=origin, what="$" + named.group(1), column=column,
            source=f"`{shown[:60]}` at {where}",
        )
    return UnsettledValue(
        reason, file, line, origin=origin, what=shown, column=column, source=set_where
    )


#: A parameter expansion with an operator (POSIX 2.6.2): its parameter.
_OPERAND_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*|[0-9]+):?[-=+?]")


def unsettled_flag_value(source: CommandSource, exc: InputError) -> InputError:
    """When reading ``source``'s speculative flags failed (``exc``: JSON that is not
    JSON, a number that is no number) and a speculative flag or its value holds a word
    the launcher does not settle (``--speculative-config "{…$D}"``), the
    :class:`UnsettledValue` of that word: the failure is the unsettled text's, not
    the file's. Otherwise ``exc``."""
    if isinstance(exc, LimitReached):
        return exc
    argv = source.command.argv
    for index in sorted(source.command.unresolved):
        word = argv[index] if index < len(argv) else ""
        previous = argv[index - 1] if 0 < index <= len(argv) else ""
        if not (
            _speculative(word.lstrip("-").partition("=")[0])
            or _speculative(previous.lstrip("-").partition("=")[0])
        ):
            continue
        at = min(index, len(source.spans) - 1)
        line = source.spans[at].line if at >= 0 else exc.line
        hit = source.command.unresolved[index]
        place = hit_span(source, index, hit)
        return unsettled_value(
            f"{hit[0]}: it is in a speculative flag, so D or the method is not read "
            f"({exc.reason})",
            source.file,
            place.line if place else line,
            hit,
            place.column if place else None,
            set_where=set_at(source, index, hit),
        )
    literal = _literal_reference(source)
    if literal is not None and isinstance(exc, RefusedValue) and not _SERVICE_LINK.search(
        literal[1]
    ):
        # the engine is given the text `$(NAME)` and refuses it: its refusal (SG307,
        # judged at the version in force, docs/engines.md#refused-values), not a value
        # specgate cannot follow
        return RefusedValue(
            exc.reason, exc.file, exc.line, what=exc.what, column=exc.column,
            severity=exc.severity, value=exc.value, missing=exc.missing,
            details="; ".join(part for part in (
                f"`$({literal[1]})` reaches the engine as written: Kubernetes leaves a "
                "$(NAME) the container does not set unchanged (kubernetes/kubernetes "
                "third_party/forked/golang/expansion/expand.go@02604f7d), a shell does "
                "not expand it in single quotes", exc.details,
            ) if part),
        )
    if literal is not None:
        index, name = literal
        at = min(index, len(source.spans) - 1)
        hit = (
            f"`$({name})`: the engine receives this text as written (Kubernetes passes a "
            "$(NAME) the container does not set unchanged, a shell does not expand it "
            f"in single quotes), so {argv[index - 1]} is not what it names",
            False,
            True,
        )
        place = hit_span(source, index, hit)
        return unsettled_value(
            f"{hit[0]} ({exc.reason})",
            source.file,
            place.line if place else (source.spans[at].line if at >= 0 else exc.line),
            hit,
            place.column if place else None,
        )
    return exc


_REFERENCE_RE = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")
#: The names a cluster's services may give every container (Kubernetes, "Container
#: Environment": ``FOO_SERVICE_HOST``, ``FOO_SERVICE_PORT``, and the Docker-links
#: ``FOO_PORT``, ``FOO_PORT_6379_TCP`` …, unless ``enableServiceLinks: false``): such
#: a ``$(NAME)`` may be set outside the manifest, so its text is not settled.
_SERVICE_LINK = re.compile(r"_(?:SERVICE_HOST|SERVICE_PORT(?:_\w+)?|PORT(?:_\w+)?)$")


def _literal_reference(source: CommandSource) -> tuple[int, str] | None:
    """The index of a speculative flag's value word that holds ``$(NAME)`` as
    literal text (every expansion the launcher does not settle is a hit of
    ``unresolved``, so what is left is what the engine reads), and NAME; else None."""
    argv = source.command.argv
    for index in range(1, len(argv)):
        flag = argv[index - 1].lstrip("-").partition("=")[0]
        found = _REFERENCE_RE.search(argv[index])
        if found is not None and _speculative(flag):
            return index, found.group(1)
    return None


def _whole_text_commands(
    doc: Document, text: str | None, pointer: str | None
) -> list[CommandSource]:
    """The commands of a whole text file (``pointer`` None); none for a part of a file,
    a structured file, or a text no shell splits."""
    if pointer is not None or not isinstance(doc.data, str):
        return []
    try:
        return commands_of(doc.data, doc, (), text)
    except InputError:
        return []


def unsettled_launcher(
    doc: Document,
    text: str | None,
    pointer: str | None,
    shown: str,
    names_engine: Callable[[Sequence[str]], Sequence[object]],
) -> InputError | None:
    """For a text with no speculative configuration (``pointer`` None: the whole
    file): the input error for the first command that names an engine
    (``names_engine``: the engines it names) and holds a split word the text
    does not settle (``$SPEC_FLAGS`` set only in an ``if``: it may add the engine's
    speculative flags), else None."""
    for source in _whole_text_commands(doc, text, pointer):
        hits = source.command.unresolved
        split = [index for index in sorted(hits) if hits[index][1]]
        if not split or not names_engine(source.command.argv):
            continue
        index = split[0]
        at = min(index, len(source.spans) - 1)
        line = source.spans[at].line if at >= 0 else None
        place = hit_span(source, index, hits[index])
        return unsettled_value(
            f"{hits[index][0]}: the command states no speculative flag, so it may add them; "
            "specgate cannot see what it adds. State the engine's flags literally in the "
            "command (or after this word)",
            shown,
            place.line if place else line,
            hits[index],
            place.column if place else None,
            set_where=set_at(source, index, hits[index]),
        )
    return None


#: The runners whose IMAGE word names what the container runs (``docker compose run``
#: names a service instead: :mod:`.compose_run`).
_IMAGE_RUNNERS = ("docker run", "podman run", "nerdctl run")


def image_from_outside(
    source: CommandSource,
    then: str = "The words after it are read as the claims file's engine",
    shown: str | None = None,
) -> UnsettledValue | None:
    """For a ``docker run`` (``podman run``, ``nerdctl run``) command whose IMAGE word
    is a variable no text specgate reads sets (``docker run $IMAGE …``, IMAGE from the
    environment the script runs in): the deployment's value (SG313) at that word,
    naming it; the image, so the engine release the container runs, is set outside the
    repository and its version is not pinned (docs/engines.md#containers). None for
    any other command, and for an image the repository sets in a way not followed
    (its own readings say so). ``then``: what specgate does about it; ``shown``: the
    file as the finding names it (default: the command's)."""
    from specgate.inputs.runners import read_runner

    launch = read_runner(source.command.argv)
    if launch is None or launch.runner not in _IMAGE_RUNNERS or launch.target_index is None:
        return None
    index = launch.target_index
    hit = source.command.unresolved.get(index)
    if hit is None or hit[2]:
        return None
    at = min(index, len(source.spans) - 1)
    line = source.spans[at].line if at >= 0 else None
    place = hit_span(source, index, hit)
    return unsettled_value(
        f"{hit[0]}: it is the image the container runs, so which engine release runs "
        "(and what its image's ENTRYPOINT and CMD add) is the deployment's; the version "
        f"is not pinned. {then}",
        shown or source.file,
        place.line if place else line,
        hit,
        place.column if place else None,
    )


def unsettled_image_launcher(
    doc: Document, text: str | None, pointer: str | None, shown: str
) -> UnsettledValue | None:
    """For a text with no speculative configuration (``pointer`` None: the whole
    file): the first container runner command whose image is set outside the
    repository (:func:`image_from_outside`): the image's own command may configure
    speculation, so the deployment is judged on the claims file; else None."""
    sources = _whole_text_commands(doc, text, pointer)
    then = "Its own command may configure speculation, so the claims file's values are used"
    for source in sources:
        found = image_from_outside(source, then, shown)
        if found is not None:
            return found
    return None
