"""The shape every engine reader works on: options with the spans they came from.

A configuration (a YAML/JSON mapping, a JSON string inside a scalar, an argv list or a
command-line string) becomes :class:`Options`: normalised key (``snake_case``, no
leading dashes) → :class:`Opt` (value and 1-based span in the referenced file); nested
mappings and JSON strings keep their keys in ``Opt.sub``.

Spans: mapping values use :meth:`Document.locate`; argv list items their own
position; words of a command-line string the exact line when it can be computed
(a whole text file; a literal ``|`` block or, by locating the word in the source
text, any scalar) and otherwise the scalar's start. Keys and values inside a JSON
string (a mapping value, an argv item, a command-line word) point at their own
line and column in the file when the source text is known (:mod:`._scalar` maps
each character back through YAML and shell quoting), else at the string's start.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import PurePosixPath

from specgate.core.errors import InputError, LimitReached, RefusedValue, UnsettledValue
from specgate.inputs.cmdline import (
    Command,
    Flag,
    FlagSpec,
    canonical_flag,
    parse_flags,
    split_commands,
)
from specgate.inputs.engines._scalar import (
    LineIndex,
    SpanSequence,
    json_locator,
    line_index,
    scalar_offsets,
    word_offsets,
    written_word,
)
from specgate.inputs.engines.expanded import DEPENDENT_RE, Piece, expanded_chars, pieces, whole
from specgate.inputs.go_shellwords import compose_words
from specgate.inputs.pointer import parse_embedded_yaml, parse_json_scalar
from specgate.inputs.shell_c import script_commands, shell_script_index
from specgate.load.compose_env import is_compose
from specgate.load.document import Document, NodePath, Span, SpanIn


@dataclass(frozen=True)
class Opt:
    """One option: its value (command-line values are strings, switches ``True``),
    where it stands, its keys when it is a mapping or JSON object, and how the
    user spelled its name (``--speculative-config``, ``speculative-config:``)."""

    value: object
    span: Span
    sub: Mapping[str, Opt] | None = None
    spelled: str | None = None
    #: Where the flag's own word stands (a command's flag), when it is not ``span``:
    #: a finding about the flag itself (SG310: removed, not yet added) sits there.
    name_span: Span | None = None


Options = dict[str, "Opt"]


class _Unsettled:
    """The value of an option the launcher sets but leaves unsettled (a Python keyword
    from the environment, kept aside key by key: :mod:`.keywise`): present, never
    compared (the data checks read it as set, its value unknown)."""

    def __repr__(self) -> str:
        return "(not settled)"

    __str__ = __repr__


UNSETTLED = _Unsettled()


#: Key prefix of the words the engine's parser refuses as ambiguous
#: (``refused:speculative_draft``): kept in the options so that a reader infers nothing
#: from the absence of a flag the word may stand for (:func:`refused_could_be`).
REFUSED = "refused:"


def refused_could_be(opts: Mapping[str, Opt], key: str) -> bool:
    """Whether a word the engine refuses as ambiguous could be the flag of ``key``
    (normalised: ``speculative_draft_model_path``), whose absence is then not known."""
    return any(k.startswith(REFUSED) and key.startswith(k[len(REFUSED):]) for k in opts)


def norm_key(key: object) -> str:
    """``--speculative-num-steps`` / ``speculative-num-steps`` → ``speculative_num_steps``."""
    return str(key).lstrip("-").replace("-", "_")


class Source:
    """A document with its source text: spans for node paths, including paths that
    continue into a JSON string held by a scalar (``/speculative-config/method``)."""

    def __init__(self, doc: Document, text: str | None = None) -> None:
        self.doc = doc
        self.text = text
        self._lines = line_index(self.text) if self.text is not None else None
        self._json: dict[NodePath, Callable[[NodePath], Span] | None] = {}
        self._scalars: dict[NodePath, Sequence[Span] | None] = {}

    def locate(self, path: NodePath) -> Span:
        """:meth:`Document.locate`, except that a key or value inside a JSON string
        points at its exact line and column in the file."""
        if path in self.doc.positions or self._lines is None or self.doc.origin(path):
            return self.doc.locate(path)  # another file's node: not in this text
        for cut in range(len(path) - 1, -1, -1):
            if path[:cut] in self.doc.positions:
                locate = self._json_in(path[:cut])
                return locate(path[cut:]) if locate is not None else self.doc.locate(path)
        return self.doc.locate(path)

    def chars(self, path: NodePath) -> Sequence[Span] | None:
        """Per character of the string scalar at ``path``, its span in the file."""
        if path not in self._scalars:
            self._scalars[path] = self._chars(path)
        return self._scalars[path]

    def _chars(self, path: NodePath) -> Sequence[Span] | None:
        position = self.doc.positions.get(path)
        value = _node(self.doc.data, path)
        if self._lines is None or position is None or not isinstance(value, str):
            return None
        if self.doc.origin(path) is not None:
            return None  # a node another Compose file sets: its characters are not in text
        start = self._lines.offset(position.value)
        if start is None:
            return None
        # a value Compose interpolated: its characters traced to the text as written
        # (a `${D}`'s value at the `$`, docs/reports.md)
        raw, back = self.doc.written.get(path, (value, ()))
        offsets = scalar_offsets(self._lines.text, start, raw)
        if offsets is None:
            return None
        if raw != value:
            return self._traced(path, value, raw, back, offsets)
        return SpanSequence(self._lines, offsets)

    def _traced(
        self, path: NodePath, value: str, raw: str, back: tuple[int, ...], offsets: list[int]
    ) -> Sequence[Span] | None:
        """The spans of an interpolated value's characters: a ``${VAR}``'s value at its
        ``$``, naming the ``.env`` lines that set it (``via``) as the value's own span
        does; the text kept as written at itself."""
        assert self._lines is not None
        if len(back) != len(value) or any(b >= len(offsets) for b in back):
            return None
        via = self.doc.via.get(path) if self.doc.via else None
        out: list[Span] = []
        for i, b in enumerate(back):
            span = self._lines.span(offsets[b])
            kept = raw[b] == value[i] and (i == 0 or back[i - 1] != b)
            out.append(span if kept or via is None else SpanIn(span.line, span.column, None, via))
        return tuple(out)

    def _json_in(self, path: NodePath) -> Callable[[NodePath], Span] | None:
        if path not in self._json:
            value = _node(self.doc.data, path)
            locate = None
            if isinstance(value, str) and parse_json_scalar(value) is not None:
                locate = json_locator(value, self.chars(path), self.doc.locate(path))
            elif isinstance(value, str) and parse_embedded_yaml(value) is not None:
                # YAML text in a string (a ConfigMap's extra.yaml: |): its own lines
                locate = json_locator(value, self.chars(path), self.doc.locate(path), yaml=True)
            self._json[path] = locate
        return self._json[path]


def _node(data: object, path: NodePath) -> object:
    """The node at ``path`` in ``data``, None when there is none."""
    node = data
    for element in path:
        inside = (isinstance(node, Mapping) and element in node) or (
            isinstance(node, list) and isinstance(element, int) and element < len(node)
        )
        if not inside:
            return None
        node = node[element]  # type: ignore[index]
    return node


def from_mapping(doc: Document | Source, path: NodePath, data: Mapping[object, object]) -> Options:
    """Options of a mapping at ``path`` (JSON strings in values become ``sub``, their
    keys located inside the string when the source text is known)."""
    source = doc if isinstance(doc, Source) else Source(doc)
    out: Options = {}
    for key, value in data.items():
        child = (*path, str(key))
        out[norm_key(key)] = _opt(source, child, value, str(key))
    return out


def _opt(source: Source, path: NodePath, value: object, spelled: str) -> Opt:
    span = source.locate(path)
    if isinstance(value, Mapping):
        return Opt(value, span, from_mapping(source, path, value), spelled)
    inner = parse_json_scalar(value)
    if isinstance(inner, dict):
        return Opt(value, span, from_mapping(source, path, inner), spelled)
    return Opt(value, span, spelled=spelled)


def from_json_text(
    text: str, span: Span, chars: Sequence[Span] | None = None
) -> Mapping[str, Opt] | None:
    """Keys of a JSON object held in a command-line word: each at its own line and
    column when ``chars`` (the span of every character of ``text``) is known, else
    all at the word's span."""
    inner = parse_json_scalar(text)
    if not isinstance(inner, dict):
        return None
    return _json_opts(inner, json_locator(text, chars, span), ())


def _json_opts(
    data: Mapping[str, object], locate: Callable[[NodePath], Span], path: NodePath
) -> Mapping[str, Opt]:
    out: dict[str, Opt] = {}
    for key, value in data.items():
        child = (*path, key)
        sub = _json_opts(value, locate, child) if isinstance(value, dict) else None
        out[norm_key(key)] = Opt(value, locate(child), sub)
    return out


@dataclass(frozen=True)
class CommandSource:
    """A command found in the document, with a way to place its words."""

    command: Command
    spans: tuple[Span, ...]
    file: str
    char_spans: Callable[[int], Sequence[Span] | None] | None = None
    #: Where each variable of ``command.env`` was set (its ``NAME=value`` word),
    #: computed when asked (only the configuration's own command needs it).
    env_spans: Callable[[], Mapping[str, Span]] = dict
    #: Per word index, the word as written (unquoted, unexpanded: ``$N`` where the
    #: command holds N's value) with the span of each character; None when unknown.
    written: Callable[[int], tuple[str, Sequence[Span]] | None] | None = None

    def flags(self, spec: FlagSpec) -> dict[str, Flag]:
        """Parse the command's flags (abbreviations resolved per ``spec``)."""
        first = self.spans[0].line if self.spans else None
        lines = [s.line - first for s in self.spans] if first is not None else None
        return parse_flags(self.command.argv, spec, file=self.file, lines=lines, line=first)

    def options(self, spec: FlagSpec) -> Options:
        """Options of the flags ``spec`` knows: value word's span, JSON values in ``sub``;
        and, under :data:`REFUSED`, each word the engine's recorded parser refuses as an
        abbreviation of several flags (read as none of them).

        Raises:
            RefusedValue: a flag that takes a value given none, at the flag's word
                (``missing``; judged by the engine at the version in force,
                docs/engines.md#refused-values).
        """
        out: Options = {}
        flags = self.flags(spec)
        if spec.engine_parser is not None:
            taken = {flag.index for flag in flags.values()}
            for index, word in enumerate(self.command.argv[:4096]):
                if word == "--":
                    break
                name = word.partition("=")[0]
                if index in taken or not name.startswith("--") or "." in name:
                    continue
                if spec.engine_parser().read(name)[0] == "ambiguous":
                    span = self.spans[index] if index < len(self.spans) else Span(1, 1)
                    key = REFUSED + norm_key(canonical_flag(name, spec))
                    out[key] = Opt(True, span, None, name)
        for name, flag in flags.items():
            inline = flag.value is None or "=" in self.command.argv[flag.index]
            value_index = flag.index if inline else flag.index + 1
            span = self.spans[value_index] if value_index < len(self.spans) else Span(1, 1)
            if flag.repeated:  # the engine's parser refuses a second occurrence
                raise RefusedValue(
                    f"{flag.spelled} is given more than once, which its parser (clap) "
                    "refuses ('cannot be used multiple times')", self.file, span.line,
                    what=norm_key(name), column=span.column, value=flag.spelled, missing=True,
                    form="repeated",
                )
            if flag.missing:  # the engine's parser refuses it: SG307 at the flag's word
                given = "is given none" if flag.followed_by is None else (
                    f"is followed by {flag.followed_by!r}, which its parser "
                    + ("takes as a dotted argument (-KEY.SUB)" if flag.dotted
                       else f"({'argparse' if spec.argparse_values else 'clap'}) reads as an "
                       "option") + ", not as the value"
                )
                raise RefusedValue(
                    f"{flag.spelled} expects a value and {given}", self.file, span.line,
                    what=norm_key(name), column=span.column, value=flag.spelled, missing=True,
                    form="dotted" if flag.dotted else "option" if flag.followed_by else "",
                )
            value: object = True if flag.value is None else flag.value
            sub = None
            if flag.value is not None:
                sub = from_json_text(flag.value, span, self._value_chars(flag, value_index))
            named = self.spans[flag.index] if flag.index < len(self.spans) else None
            out[norm_key(name)] = Opt(value, span, sub, flag.spelled, named)
        return out

    def _value_chars(self, flag: Flag, index: int) -> Sequence[Span] | None:
        """The span of every character of ``flag``'s value, when known."""
        if self.char_spans is None or index >= len(self.command.argv) or flag.value is None:
            return None
        chars = self.char_spans(index)
        if chars is None:
            return None
        word = self.command.argv[index]
        skip = len(word) - len(flag.value) if index == flag.index else 0
        return chars[skip:] if word[skip:] == flag.value else None


@dataclass
class Placement:
    """Where a string scalar's text stands in the file, to place words inside it."""

    doc: Document
    path: NodePath
    text: str | None = None
    _layout: tuple[str, bool, Sequence[Span] | None, LineIndex | None] | None = None
    _frame: tuple[Span, int, bool, int] | None = None
    _cursor: int | None = None
    _index: LineIndex | None = None

    def spans(self, command: Command, *, resume: bool = True) -> tuple[Span, ...]:
        """Per word of ``command``, its span in the file. Commands are placed in the
        order they stand in the scalar: with ``resume``, the search for a command's
        words starts where the previous command's ended (each character is searched
        once per scalar, not once per command)."""
        if self.path == () and isinstance(self.doc.data, str):
            return tuple(
                Span(1 + line, column)
                for line, column in zip(command.lines, command.columns, strict=True)
            )
        source = self.text
        if source is None or self.doc.origin(self.path) is not None:
            # (another Compose file's value: its words are not in this text)
            base = self.doc.locate(self.path)
            return tuple(base for _ in command.argv)
        base, start, literal, indent = self._framed(source)
        index = self._source_lines(source)
        out: list[Span] = []
        cursor = self._cursor if resume and self._cursor is not None else start
        for word, line, column in zip(command.argv, command.lines, command.columns, strict=True):
            if literal:
                out.append(Span(base.line + 1 + line, column + indent))
                continue
            # a word more than 3 lines past the previous one is not taken: search no
            # further than that (the 4th line break after the cursor)
            line_index = bisect.bisect_right(index.starts, cursor) - 1
            limit = (
                index.starts[line_index + 4] - 1 + len(word)
                if line_index + 4 < len(index.starts)
                else len(source)
            )
            found = source.find(word, cursor, limit) if word else -1
            traced = self._traced_word(line, column) if found < 0 else None
            if traced is not None:  # a word a Compose ${VAR} made: at the `$`
                out.append(traced)
                continue
            if found < 0:
                at = out[-1] if out else base
                # not written here: a word a Compose ${VAR} made, at the word before it,
                # naming the .env lines that set the string's variables
                via = self.doc.via.get(self.path) if self.doc.via else None
                out.append(at if via is None else SpanIn(at.line, at.column, at.file, via))
                continue
            cursor = found + len(word)
            out.append(index.span(found))
        if resume:
            self._cursor = cursor
        return tuple(out)

    def _source_lines(self, source: str) -> LineIndex:
        """The file's line index (offsets ↔ spans by binary search); built once."""
        if self._index is None:
            self._index = line_index(source)
        return self._index

    def _framed(self, source: str) -> tuple[Span, int, bool, int]:
        """The scalar's span, its offset in ``source``, whether it is a literal
        ``|`` block and the indent of its first content line; computed once."""
        if self._frame is None:
            base = self.doc.locate(self.path)
            start = _offset(source, base)
            literal = start < len(source) and source[start] == "|"
            self._frame = (base, start, literal, _indent(source, base.line + 1))
        return self._frame

    def _traced_word(self, line: int, column: int) -> Span | None:
        """Where the word at ``line``/``column`` of an interpolated scalar starts in
        the file (its characters traced through :attr:`Document.written`), else None."""
        if self.path not in self.doc.written:
            return None
        _shell, _whole, layer, lines = self._scalar()
        at = lines.offset(Span(line + 1, column)) if lines is not None else None
        return layer[at] if layer is not None and at is not None and at < len(layer) else None

    def char_spans(self, command: Command) -> Callable[[int], Sequence[Span] | None]:
        """Per word index of ``command``, the span of each of its characters (None
        when the word cannot be traced back through the scalar's and the shell's
        quoting). The scalar's line index and character layer are built once per
        placement, when first asked (a script of thousands of commands used to
        index its whole text once per command)."""

        def chars(index: int) -> Sequence[Span] | None:
            shell, whole, layer, lines = self._scalar()
            if lines is None or not (whole or layer is not None):
                return None
            start = lines.offset(Span(command.lines[index] + 1, command.columns[index]))
            if start is None:
                return None
            offsets = word_offsets(shell, start, command.argv[index])
            if offsets is None:
                return None
            if layer is not None:
                return tuple(layer[o] for o in offsets)
            return tuple(lines.span(o) for o in offsets)

        return chars

    def written(self, command: Command) -> Callable[[int], tuple[str, Sequence[Span]] | None]:
        """Per word index of ``command``, the word as written in the whole text file
        (:func:`written_word`) and the span of each character; None elsewhere (a
        scalar inside a structured file) or when it cannot be decoded."""

        def word(index: int) -> tuple[str, Sequence[Span]] | None:
            shell, whole, _layer, lines = self._scalar()
            if lines is None or not whole or index >= len(command.lines):
                return None
            start = lines.offset(Span(command.lines[index] + 1, command.columns[index]))
            found = written_word(shell, start) if start is not None else None
            if found is None:
                return None
            return "".join(c for c, _ in found), tuple(lines.span(o) for _, o in found)

        return word

    def _scalar(self) -> tuple[str, bool, Sequence[Span] | None, LineIndex | None]:
        """The scalar's text, whether it is the whole file, the span of each of its
        characters in the file (None for the whole file or when unknown) and its
        line index; computed once."""
        if self._layout is None:
            node = _node(self.doc.data, self.path)
            shell = node if isinstance(node, str) else ""
            whole = self.path == () and isinstance(node, str)
            layer = None if whole else Source(self.doc, self.text).chars(self.path)
            lines = LineIndex(shell) if isinstance(node, str) else None
            self._layout = (shell, whole, layer, lines)
        return self._layout


def _offset(text: str, span: Span) -> int:
    """The offset of ``span`` in ``text`` (by the shared line index: no scan)."""
    starts = line_index(text).starts
    if not 1 <= span.line <= len(starts):
        raise ValueError(f"line {span.line} is past the end of the text")
    return starts[span.line - 1] + span.column - 1


def _indent(text: str, line: int) -> int:
    """Spaces before the first character of 1-based ``line`` (0 past the end)."""
    starts = line_index(text).starts
    if not 1 <= line <= len(starts):
        return 0
    end = starts[line] - 1 if line < len(starts) else len(text)
    row = text[starts[line - 1] : end]
    return len(row) - len(row.lstrip(" "))


def commands_of(
    node: object,
    doc: Document,
    path: NodePath,
    text: str | None,
    env: Mapping[str, EnvValue] | None = None,
    *,
    script_args: tuple[str, ...] | None = None,
) -> list[CommandSource]:
    """The commands an argv list or a command-line string holds. ``env``: the
    variables a container sets for it (None: set, but not to a value written here),
    seen by an ``sh -c`` script and, in a Kubernetes list, as ``$(NAME)``.
    ``script_args``: the string is the SCRIPT of an ``sh -c`` the container runs, with
    these arguments (:mod:`.service_shell`): split as that shell runs it, with ``env``.

    Raises:
        InputError: a command-line string that cannot be split (unbalanced quotes).
    """
    if isinstance(node, list):
        return [_list_command(node, doc, path, text, env)]
    if isinstance(node, str):
        base = doc.locate(path)
        # a shell script's own text is split as bash and dash run it
        shell_text = not path and doc.file.lower().endswith(_SCRIPT_SUFFIXES)
        commands = split_commands(
            node, file=doc.file, line=base.line, script=shell_text or script_args is not None,
            arguments=script_args,
            variables=tuple((k, v) for k, v in (env or {}).items() if isinstance(v, str))
            if script_args is not None else (),
        )
        commands = compose_words(node, doc, path, commands) or commands
        placement = Placement(doc, path, text)
        out: list[CommandSource] = []
        if path in doc.unsettled:
            # a Compose ${VAR} no file sets, somewhere in the string: after every word
            hit = (
                f"`{doc.unsettled[path]}`: set by no .env (the environment docker "
                "compose runs in may set it)",
                True,
                False,
            )
            commands = [replace(c, unresolved={**c.unresolved, len(c.argv): hit}) for c in commands]
        for c in commands:
            spans = placement.spans(c)
            script = shell_script_index(c)
            inner_commands: list[Command] = []
            if script is not None:
                try:
                    inner_commands = script_commands(  # sh -c SCRIPT NAME ARGS…
                        c, script, {k: v for k, v in (env or {}).items() if isinstance(v, str)}
                    )
                except LimitReached as exc:  # a bound reached is never a fallback
                    line = base.line + c.lines[script] if c.lines else base.line
                    raise LimitReached(exc.reason, doc.file, line) from None
                except InputError:
                    script = None  # a script no shell could split: the wrapper as written
            if script is None:
                out.append(
                    CommandSource(
                        c,
                        spans,
                        doc.file,
                        placement.char_spans(c),
                        partial(_env_spans, c, placement),
                        placement.written(c),
                    )
                )
                continue
            # sh -c 'SCRIPT': the commands of the script, each word placed at the
            # script's word (its characters are not traced through two quotings)
            at = spans[script] if script < len(spans) else base
            for inner in inner_commands:
                inner_spans = tuple(at for _ in inner.argv)
                out.append(
                    CommandSource(
                        inner, inner_spans, doc.file, None, partial(_all_at, inner.env, at)
                    )
                )
        return out
    raise InputError("not a command line", doc.file, doc.locate(path).line)


def _list_command(
    node: list[object],
    doc: Document,
    path: NodePath,
    text: str | None,
    env: Mapping[str, EnvValue] | None,
) -> CommandSource:
    """The command of an argv list (a Compose/Kubernetes ``command``/``args``): each item
    one word, a Kubernetes ``$(NAME)`` expanded from ``env`` (:func:`_dependent`), the
    words a value the manifest writes gives placed where it is written
    (:mod:`.expanded`)."""
    words = [str(item) for item in node]
    spans = [doc.locate((*path, i)) for i in range(len(node))]
    source = Source(doc, text)
    # an item holding a Compose ${VAR} no file sets: one word (not split)
    unresolved: dict[int, tuple[str, bool, bool]] = {}
    traced: dict[int, list[Piece]] = {}
    for i in range(len(node)):
        held = doc.unsettled.get((*path, i))
        if held is not None:
            what = (
                f"`{held}`: set by no .env (the environment docker compose runs in may set it)"
            )
            unresolved[i] = (what, False, False)
        elif env and "$" in words[i] and not is_compose(doc.data):
            parts = pieces(words[i], env)
            words[i] = _dependent(words[i], env, unresolved, i)
            if parts is not None:
                # a value the manifest writes (a ConfigMap's data): its words sit
                # where it is written (docs/engines.md#environment-files)
                traced[i] = parts
                one = whole(parts)
                spans[i] = doc.locate(one) if one is not None else spans[i]
    argv = tuple(words)
    command = Command(argv, unresolved=unresolved)

    def chars(i: int) -> Sequence[Span] | None:
        parts = traced.get(i)
        written = source.chars((*path, i))
        return written if parts is None else expanded_chars(parts, written, source.chars)

    return CommandSource(command, tuple(spans), doc.file, chars)


#: A container's variable as :func:`commands_of` sees it: its value, None (set, but not
#: to a value written here) or why the repository's value is not followed.
EnvValue = str | UnsettledValue | None

#: files a shell runs (bash, dash): their text is split with the shell's own rules
_SCRIPT_SUFFIXES = (".sh", ".bash")


def _dependent(
    word: str, env: Mapping[str, EnvValue], unresolved: dict[int, tuple[str, bool, bool]], at: int
) -> str:
    """A Kubernetes ``command``/``args`` item with ``$(NAME)`` replaced by the
    container's variable NAME, ``$$`` by ``$``; a name the container does not set stays
    as written (Kubernetes docs, "Define a Command and Arguments for a Container": "If
    the environment variable doesn't exist, the reference is left unchanged"); one set
    from elsewhere (``valueFrom``, or any name under ``envFrom``: :data:`ANY_NAME`) is
    unsettled (``unresolved[at]``)."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name is None:
            return "$"
        if name not in env:
            if ANY_NAME in env:  # envFrom: a ConfigMap or Secret may set any name
                unresolved.setdefault(at, (
                    f"`$({name})`: the container's envFrom may set {name} (a ConfigMap or "
                    "Secret this file does not hold)", False, False,
                ))
            return match.group(0)
        known = env[name]
        if isinstance(known, UnsettledValue):  # a manifest's ConfigMap not followed
            where = f" (set at {known.file}:{known.line})" if known.line is not None else ""
            unresolved.setdefault(at, (
                f"`$({name})`: {known.reason}{where}", False, known.origin == "repository",
            ))
            return match.group(0)
        if known is None:
            unresolved.setdefault(
                at, (f"`$({name})`: the container sets {name} from outside this file", False, False)
            )
            return match.group(0)
        return known

    return DEPENDENT_RE.sub(value, word)


def _all_at(names: Mapping[str, str], at: Span) -> dict[str, Span]:
    """Every name placed at one span."""
    return dict.fromkeys(names, at)


def _env_spans(command: Command, placement: Placement) -> dict[str, Span]:
    """The span of the ``NAME=value`` word that set each variable of ``command.env``."""
    if not command.env_at:
        return {}
    names = sorted(command.env_at, key=lambda name: command.env_at[name])
    words = Command(
        tuple(f"{name}={command.env[name]}" for name in names),
        lines=tuple(command.env_at[name][0] for name in names),
        columns=tuple(command.env_at[name][1] for name in names),
    )
    return dict(zip(names, placement.spans(words, resume=False), strict=True))


def is_argv(node: object) -> bool:
    """A list of scalars with at least one word starting with ``-``."""
    return (
        isinstance(node, list)
        and bool(node)
        and all(isinstance(item, (str, int, float)) and not isinstance(item, bool) for item in node)
        and any(isinstance(item, str) and item.startswith("-") for item in node)
    )


#: A container runner's program word (``docker``, ``/usr/bin/podman``, ``docker-compose``).
_RUNNER_WORD = re.compile(
    r"(?:^|(?<=[\s;&|(`/]))(?:docker|docker-compose|podman|podman-compose|nerdctl)[ \t]"
)
_RUN_WORD = re.compile(r"\brun\b")


def _runs_a_runner(text: str) -> bool:
    """A line where a runner's program word is followed by ``run`` (``docker compose
    run vllm``, ``docker run IMAGE /models/x``): a command line even without a ``-``
    flag word, since the container's command may take its flags from the image or the
    Compose service. One pass over the text (each line looked at once)."""
    found = _RUNNER_WORD.search(text)
    while found is not None:
        end = text.find("\n", found.end())
        end = len(text) if end < 0 else end
        if _RUN_WORD.search(text, found.end(), end):
            return True
        found = _RUNNER_WORD.search(text, end)
    return False


def looks_like_command(node: object) -> bool:
    """A string scalar that might hold a command line (has a ``-`` flag word, or runs a
    container runner's ``run``)."""
    return isinstance(node, str) and (
        " -" in node or node.startswith("-") or "\n-" in node or _runs_a_runner(node)
    )


#: Keys of a mapping that hold environment variables (Compose ``environment``,
#: Kubernetes ``env``, launcher ``env``/``env_vars`` …).
ENV_KEYS = ("env", "env_vars", "envs", "environment", "extra_env", "base_env")
#: In a container's environment: any other name may be set too (Kubernetes ``envFrom``);
#: no variable can be named so.
ANY_NAME = "*"


def env_items(block: object) -> list[tuple[str, object, NodePath]]:
    """The variables of one ``env``-like block as ``(name, value, path inside the
    block)``: a mapping (``{NAME: value}``), ``NAME=value`` strings (Compose's list
    form) or Kubernetes ``[{name: NAME, value: "1"}]`` (the path then names the
    ``value`` key, or the item when it has none, as with ``valueFrom``). Anything else
    holds none."""
    items: list[tuple[str, object, NodePath]] = []
    if isinstance(block, Mapping):
        for name, value in block.items():
            items.append((str(name), value, (str(name),)))
    elif isinstance(block, list):
        for i, item in enumerate(block):
            if isinstance(item, str) and "=" in item:
                name, _, value = item.partition("=")
                items.append((name, value, (i,)))
            elif isinstance(item, Mapping) and isinstance(item.get("name"), str):
                where: NodePath = (i, "value") if "value" in item else (i,)
                items.append((item["name"], item.get("value"), where))
    return items


def literal_env(container: Mapping[object, object]) -> dict[str, str | None]:
    """The variables a container or service sets: their literal values, None for one
    whose value is not written there (``valueFrom``, a ConfigMap)."""
    out: dict[str, str | None] = {}
    for key in ENV_KEYS:
        for name, value, _ in env_items(container.get(key)):
            out[name] = literal_value(value)
    return out


def literal_value(value: object) -> str | None:
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return str(value)
    return None


_CONTAINER_RUNNERS = frozenset({"docker", "podman", "nerdctl"})
_ENV_OPTIONS = ("-e", "--env")


def run_env(argv: Sequence[str]) -> dict[str, tuple[str, int]]:
    """``docker run -e NAME=value`` / ``--env NAME=value`` / ``--env=NAME=value``
    variables of a container run (docker, podman, nerdctl) → (value, word index);
    empty for any other command. A ``-e NAME`` without a value (taken from the
    caller's environment) holds nothing we can read."""
    if not argv or PurePosixPath(argv[0]).name not in _CONTAINER_RUNNERS:
        return {}
    out: dict[str, tuple[str, int]] = {}
    for i, word in enumerate(argv):
        if word in _ENV_OPTIONS and i + 1 < len(argv):
            index, assignment = i + 1, argv[i + 1]
        elif word.startswith("--env="):
            index, assignment = i, word[len("--env=") :]
        else:
            continue
        name, eq, value = assignment.partition("=")
        if eq and name:
            out[name] = (value, index)
    return out
