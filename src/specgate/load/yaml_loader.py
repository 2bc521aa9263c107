"""YAML → :class:`~specgate.load.document.Document`, with the scalars of its reader.

PyYAML implements YAML 1.1: it turns ``yes``/``on`` into booleans, dates into
``datetime`` and reads ``1e3`` as a string. Claims files follow the YAML 1.2
core schema (https://yaml.org/spec/1.2.2/#1032-tag-resolution), so this module
uses PyYAML only to *compose* the node graph (libyaml when available) with a
1.2 core resolver, then builds plain data itself, which also gives it every
key's and value's position and every repeated key. A serving config is read as the
program that reads it does (``dialect``, :mod:`specgate.load.yaml_dialects`): the
engines' PyYAML, or go-yaml for Kubernetes and Compose, where ``010`` is 8.

Limits (each an :class:`~specgate.core.errors.InputError`): one document per file
(:func:`load_yaml_documents`, for engine configs, reads several as a list),
only the core tags (str, int, float, bool, null, map, seq, merge), at most
``MAX_NESTED_ALIASES`` aliases met inside an anchor being expanded (counted again each
time the enclosing alias is expanded: what makes an alias bomb grow), at most
``MAX_ALIAS_NODES`` nodes reached through aliases (the expanded size), and at most
``MAX_NODES`` nodes in all (aliases expanded). An alias to an anchor holding no alias
costs only the nodes it expands to: 21 services sharing 5 anchors (105 aliases) load.
A node reached again through its own place in the document (inside an expanded anchor)
is one of the nodes an alias expands to, not another alias.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from specgate.core.errors import InputError, UnsettledValue
from specgate.core.limits import MAX_INTEGER_DIGITS, MAX_NESTING, active_budget, bounded_int
from specgate.load.document import Document, DuplicateKey, NodePath, PositionRow, Positions, Span

if TYPE_CHECKING:
    from specgate.load.yaml_dialects import Dialect

#: Aliases met inside an anchor while an alias expands it, each counted every time
#: (docs/trust.md#bounded-work): nine levels of nine aliases stop here, not after 9⁹ nodes.
MAX_NESTED_ALIASES = 100
#: Nodes reached through aliases (the anchored nodes each alias expands to, nested ones
#: again each time): a wide anchor used 100 times stays a bounded amount of work.
MAX_ALIAS_NODES = 10_000
MAX_NODES = 100_000
#: Documents in one engine config (a Kubernetes manifest holds a handful).
MAX_DOCUMENTS = 1_000

_TAG = "tag:yaml.org,2002:"
_STR, _INT, _FLOAT, _BOOL, _NULL = (_TAG + t for t in ("str", "int", "float", "bool", "null"))
_MAP, _SEQ, _MERGE = _TAG + "map", _TAG + "seq", _TAG + "merge"
#: A plain scalar left for the builder to resolve in the file's dialect.
_PLAIN = "specgate:plain"
#: The Compose merge tags (compose-spec ``13-merge.md``, "Reset value", "Replace value";
#: compose-go ``loader/reset.go``@e70e961 ``resolveReset``), read in the go dialect and
#: kept in :attr:`Document.merge_tags`: ``!reset`` drops the node from its file, and both
#: drop what earlier files (or an ``extends`` base) set at its path before this file is
#: merged over them (:mod:`specgate.load.compose_files`). A file other than a Compose
#: file holding one is refused (:func:`refuse_merge_tags`).
RESET, OVERRIDE = "!reset", "!override"
#: What a ``!reset`` node builds to: left out of its mapping or sequence.
_DROPPED = object()

_BOOL_RE = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_NULL_RE = re.compile(r"^(?:~|null|Null|NULL|)$")
_INT_RE = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
_FLOAT_RE = re.compile(
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)


class _CoreResolver(yaml.resolver.BaseResolver):
    """Implicit tags of the YAML 1.2 core schema (int before float)."""

    def resolve(self, kind: type[Node], value: Any, implicit: tuple[bool, bool]) -> str:
        """The tag of an untagged node, as ``BaseResolver.resolve`` gives it for these
        resolvers, without its per-call list building (libyaml calls this for every
        node): there are no path resolvers and no wildcard resolvers to consult."""
        if kind is ScalarNode:
            if implicit[0]:
                resolvers: list[tuple[str, re.Pattern[str]]]
                resolvers = self.yaml_implicit_resolvers.get(value[:1], [])
                for tag, regexp in resolvers:
                    if regexp.match(value):
                        return tag
            return _STR
        return _SEQ if kind is SequenceNode else _MAP


_CoreResolver.yaml_implicit_resolvers = {}
_CoreResolver.add_implicit_resolver(_BOOL, _BOOL_RE, list("tTfF"))
_CoreResolver.add_implicit_resolver(_NULL, _NULL_RE, ["~", "n", "N", ""])
_CoreResolver.add_implicit_resolver(_INT, _INT_RE, list("-+0123456789"))
_CoreResolver.add_implicit_resolver(_FLOAT, _FLOAT_RE, list("-+0123456789."))
_CoreResolver.add_implicit_resolver(_MERGE, re.compile(r"^<<$"), ["<"])

class _PlainResolver(_CoreResolver):
    """Every plain scalar tagged :data:`_PLAIN`, for the builder to resolve in the
    file's dialect (quoted scalars are strings in every dialect)."""

    def resolve(self, kind: type[Node], value: Any, implicit: tuple[bool, bool]) -> str:
        if kind is ScalarNode:
            return _PLAIN if implicit[0] else _STR
        return _SEQ if kind is SequenceNode else _MAP


if yaml.__with_libyaml__:
    import yaml._yaml

    class _Composer(yaml._yaml.CParser, _CoreResolver):
        def __init__(self, text: str) -> None:
            yaml._yaml.CParser.__init__(self, text)
            _CoreResolver.__init__(self)

    class _PlainComposer(yaml._yaml.CParser, _PlainResolver):
        def __init__(self, text: str) -> None:
            yaml._yaml.CParser.__init__(self, text)
            _PlainResolver.__init__(self)

else:  # pragma: no cover - exercised only without libyaml

    class _Composer(  # type: ignore[no-redef]
        yaml.reader.Reader,
        yaml.scanner.Scanner,
        yaml.parser.Parser,
        yaml.composer.Composer,
        _CoreResolver,
    ):
        def __init__(self, text: str) -> None:
            yaml.reader.Reader.__init__(self, text)
            yaml.scanner.Scanner.__init__(self)
            yaml.parser.Parser.__init__(self)
            yaml.composer.Composer.__init__(self)
            _CoreResolver.__init__(self)

    class _PlainComposer(  # type: ignore[no-redef]
        yaml.reader.Reader,
        yaml.scanner.Scanner,
        yaml.parser.Parser,
        yaml.composer.Composer,
        _PlainResolver,
    ):
        def __init__(self, text: str) -> None:
            yaml.reader.Reader.__init__(self, text)
            yaml.scanner.Scanner.__init__(self)
            yaml.parser.Parser.__init__(self)
            yaml.composer.Composer.__init__(self)
            _PlainResolver.__init__(self)


def _span(node: Node) -> Span:
    return Span(node.start_mark.line + 1, node.start_mark.column + 1)


class _Builder:
    """Walks a composed node graph into plain data, positions and duplicates."""

    def __init__(self, file: str, *, anchors: bool = True, dialect: Dialect = "core") -> None:
        self.file = file
        self.dialect = dialect
        #: Whether the text may hold anchors (``&``): without one there is no alias,
        #: so no node is reached twice and the alias bookkeeping is skipped.
        self.anchors = anchors
        self.positions: dict[NodePath, PositionRow] = {}
        #: (path, "!reset" or "!override", line, column) of each merge tag met.
        self.merge_tags: list[tuple[NodePath, str, int, int]] = []
        self.duplicates: list[DuplicateKey] = []
        self.nodes = 0
        self.aliases = 0
        #: Aliases met while another alias is being expanded (nested expansion).
        self.nested_aliases = 0
        #: Nodes built while an alias is being expanded.
        self.alias_nodes = 0
        #: Each node's own place in the graph: (id of its parent node, slot). Reaching a
        #: node from any other place is an alias; from its own place, an expansion.
        self.home: dict[int, tuple[int, object]] = {}
        self.active: set[int] = set()
        self._parent = 0
        self._expanding = 0
        #: The budget of the serving config being read, shared with every document
        #: embedded in its strings (None: a file read alone).
        self.budget = active_budget()

    def fail(self, reason: str, node: Node) -> InputError:
        span = _span(node)
        return InputError(reason, self.file, span.line, span.column)

    def unsettled(self, reason: str, node: Node, what: str) -> UnsettledValue:
        """A value the file sets in a way specgate does not settle: the repository's
        (docs/engines.md#unsettled-values; SG314 in a serving config)."""
        span = _span(node)
        return UnsettledValue(
            reason, self.file, span.line, origin="repository", what=what, column=span.column
        )

    def build(
        self, node: Node, path: NodePath, key: tuple[int, int] = (0, 0), slot: object = None
    ) -> Any:
        """``node`` as plain data; its position (and ``key``'s, the 1-based line and
        column of the key holding it, ``(0, 0)`` for none) recorded under ``path``.
        ``slot`` names the place in the parent node the node is reached from (an index,
        a key, a merge), which tells an alias from an expansion."""
        if node.tag in (RESET, OVERRIDE) and self.dialect == "go":
            # compose-go drops a "<<" from the path it records (resolveReset)
            where = tuple(part for part in path if part != "<<")
            self.merge_tags.append((where, node.tag, *_span(node)))
            if node.tag == RESET:
                return _DROPPED
        if not self.anchors:
            return self._build(node, path, key)
        ident = id(node)
        if ident in self.active:
            raise self.fail("recursive alias (a node that contains itself)", node)
        place = (self._parent, slot)
        home = self.home.setdefault(ident, place)
        alias = home != place
        if alias:
            self.aliases += 1
            if self._expanding:
                self.nested_aliases += 1
                if self.nested_aliases > MAX_NESTED_ALIASES:
                    raise self.fail(
                        f"more than {MAX_NESTED_ALIASES} nested aliases (an alias inside an "
                        "anchor counts each time an alias expands that anchor)",
                        node,
                    )
            self._expanding += 1
        if self._expanding:
            self.alias_nodes += 1
            if self.alias_nodes > MAX_ALIAS_NODES:
                raise self.fail(
                    f"aliases expand to more than {MAX_ALIAS_NODES:,} YAML nodes "
                    f"(specgate's limit on the keys, values and list items reached "
                    "through aliases)",
                    node,
                )
        parent = self._parent
        self._parent = ident
        self.active.add(ident)
        try:
            return self._build(node, path, key)
        finally:
            self.active.discard(ident)
            self._parent = parent
            if alias:
                self._expanding -= 1

    def _build(self, node: Node, path: NodePath, key: tuple[int, int]) -> Any:
        self.nodes += 1
        budget = self.budget
        if budget is not None:
            budget.nodes -= 1
            if budget.nodes < 0:
                raise self.fail(
                    f"more than {MAX_NODES:,} YAML nodes in the file, documents embedded in "
                    "its strings included (specgate's limit)",
                    node,
                )
        if self.nodes > MAX_NODES:
            expanded = " (aliases expanded)" if self.aliases else ""
            raise self.fail(
                f"more than {MAX_NODES:,} YAML nodes{expanded}: the file is too large to check "
                f"(specgate's limit is {MAX_NODES:,} keys, values and list items)",
                node,
            )
        mark = node.start_mark
        line, column = mark.line + 1, mark.column + 1
        if isinstance(node, ScalarNode):
            self.positions[path] = ("scalar", line, column, *key)
            if node.tag == _STR or (node.tag == OVERRIDE and self.dialect == "go"):
                return node.value  # go-yaml: a scalar of a tag it does not resolve is text
            return self.scalar(node)
        if len(path) >= MAX_NESTING:
            raise self.fail(
                f"YAML nesting is too deep: more than {MAX_NESTING} levels (specgate's limit)", node
            )
        if isinstance(node, SequenceNode):
            if node.tag != _SEQ and not (node.tag == OVERRIDE and self.dialect == "go"):
                raise self.fail(f"unsupported tag {node.tag}", node)
            self.positions[path] = ("sequence", line, column, *key)
            items = [self.build(item, (*path, i), slot=i) for i, item in enumerate(node.value)]
            return [item for item in items if item is not _DROPPED]
        if isinstance(node, MappingNode):
            if node.tag != _MAP and not (node.tag == OVERRIDE and self.dialect == "go"):
                raise self.fail(f"unsupported tag {node.tag}", node)
            self.positions[path] = ("mapping", line, column, *key)
            return self.mapping(node, path)
        raise self.fail("unsupported node", node)  # pragma: no cover - PyYAML has 3 kinds

    def scalar(self, node: ScalarNode) -> Any:
        tag, text = node.tag, node.value
        if tag == _STR:
            return text
        if tag == _PLAIN:  # a serving config's scalar (claims files are core 1.2)
            from specgate.load.yaml_dialects import TooLong, resolve_plain

            try:
                kind, value = resolve_plain(text, self.dialect)
            except TooLong:
                raise self.fail(
                    f"integer of {len(text):,} characters is too long "
                    f"(specgate's limit is {MAX_INTEGER_DIGITS:,} decimal digits)",
                    node,
                ) from None
            if kind == "unread" or (kind == "merge" and self.dialect == "pyyaml"):
                raise self.fail(
                    f"{text!r} is no value PyYAML reads (yaml.safe_load refuses it)", node
                )
            return text if kind == "merge" else value
        if self.dialect != "core" and tag in (_BOOL, _NULL, _INT, _FLOAT):
            from specgate.load.yaml_dialects import TooLong, resolve_tagged

            try:
                return resolve_tagged(text, tag.removeprefix(_TAG), self.dialect)
            except TooLong:
                raise self.fail(
                    f"integer of {len(text):,} characters is too long "
                    f"(specgate's limit is {MAX_INTEGER_DIGITS:,} decimal digits)",
                    node,
                ) from None
            except ValueError:
                raise self.unsettled(
                    f"{tag.removeprefix(_TAG)} tag on {text!r}: specgate does not settle "
                    "what the file's reader makes of it (write the value untagged)",
                    node,
                    f"{tag.removeprefix(_TAG)} {text[:40]}",
                ) from None
        if tag == _BOOL and _BOOL_RE.match(text):
            return text.lower() == "true"
        if tag == _NULL and _NULL_RE.match(text):
            return None
        if tag == _INT and _INT_RE.match(text):
            # The one place YAML integers are resolved: every base is held to the
            # same bound before anything prints or compares the value (docs/trust.md#bounded-work).
            base = {"0o": 8, "0x": 16}.get(text[:2], 10)
            digits = text[2:] if base != 10 else text.lstrip("+-")
            value = bounded_int(digits, base)
            if value is None:
                raise self.fail(
                    f"integer of {len(text):,} characters is too long "
                    f"(specgate's limit is {MAX_INTEGER_DIGITS:,} decimal digits)",
                    node,
                )
            return -value if text.startswith("-") else value
        if tag == _FLOAT and _FLOAT_RE.match(text):
            lowered = text.lower()
            if lowered.endswith(".nan"):
                return math.nan
            if lowered.endswith(".inf"):
                return -math.inf if text.startswith("-") else math.inf
            return float(text)
        if tag in (_BOOL, _NULL, _INT, _FLOAT):
            raise self.fail(f"{text!r} is not a valid {tag.removeprefix(_TAG)}", node)
        raise self.fail(f"unsupported tag {tag}", node)

    def mapping(self, node: MappingNode, path: NodePath) -> dict[str, Any]:
        out: dict[str, Any] = {}
        first_seen: dict[str, tuple[int, int]] = {}
        merges: list[tuple[int, Node]] = []
        for index, (key_node, value_node) in enumerate(node.value):
            if isinstance(key_node, ScalarNode) and (
                key_node.tag == _MERGE or (key_node.tag == _PLAIN and key_node.value == "<<")
            ):
                if merges and self.dialect == "go":
                    # go-yaml v3 refuses a repeated mapping key, "<<" included
                    # (decode.go, d.uniqueKeys: "mapping key already defined").
                    raise self.fail("a second merge key (<<) in one mapping", key_node)
                merges.append((index, value_node))
                continue
            if not isinstance(key_node, ScalarNode):
                raise self.fail("mapping keys must be plain scalars", key_node)
            key = self.key_of(key_node)
            mark = key_node.start_mark
            key_at = (mark.line + 1, mark.column + 1)
            if key in first_seen:
                first = Span(*first_seen[key])
                self.duplicates.append(DuplicateKey((*path, key), key, Span(*key_at), first))
            else:
                first_seen[key] = key_at
            # The last value wins, as in PyYAML, json and the engines that read the file,
            # so the numbers shown are the ones an engine would use (SG002 fails anyway).
            value = self.build(value_node, (*path, key), key_at, slot=index)
            if value is _DROPPED:
                out.pop(key, None)
            else:
                out[key] = value
        # Explicit keys win, then the later of two merge keys (PyYAML's flatten_mapping
        # puts every merged pair before the mapping's own, the first merge key's first, and
        # builds the dict in that order: the last pair of a key wins), so merges are taken
        # latest first, each adding only the keys not yet set.
        if merges and self.dialect == "pyyaml":
            from specgate.load.yaml_merge import merge_conflict

            conflict = merge_conflict(
                [merge for _, merge in merges], set(out), self.key_of, MAX_ALIAS_NODES
            )
            if conflict is not None:
                raise self.unsettled(
                    f"merge keys (<<) give {conflict!r} a value that depends on the PyYAML "
                    "release (6.0.2 and 6.0.3 merge differently): not settled; set the key "
                    "explicitly",
                    node,
                    f"<<: {conflict}",
                )
        for index, merge in reversed(merges):
            self.merge_into(out, merge, path, index)
        return out

    def key_of(self, key_node: Node) -> str:
        """A mapping key's text (a non-text key named as :func:`_key_text` names it)."""
        if not isinstance(key_node, ScalarNode):
            raise self.fail("mapping keys must be plain scalars", key_node)
        if key_node.tag == _STR or (
            key_node.tag == _PLAIN and key_node.value == "=" and self.dialect == "pyyaml"
        ):  # PyYAML's flatten_mapping reads a "=" (value tag) key as the text "="
            return str(key_node.value)
        key_value = self.scalar(key_node)
        return str(key_node.value) if isinstance(key_value, str) else _key_text(key_value)

    def merge_into(self, out: dict[str, Any], merge: Node, path: NodePath, slot: int) -> None:
        """Apply a ``<<`` merge (the ``slot``-th pair of its mapping), adding the keys not
        yet set: explicit keys and later merge keys win; in a list of maps, earlier maps
        win (PyYAML ``SafeConstructor.flatten_mapping``; go-yaml v3 ``decode.go``)."""
        listed = isinstance(merge, SequenceNode)
        sources = merge.value if listed else [merge]
        prefix = (*path, "<<")
        for number, source in enumerate(sources):
            if not isinstance(source, MappingNode):
                raise self.fail("a merge key (<<) needs a mapping or a list of mappings", source)
            merged = self.build(source, prefix, slot=(slot, number) if listed else slot)
            if merged is _DROPPED:
                continue
            added = {key for key in merged if key not in out}
            for key in added:
                out[key] = merged[key]
            moved = [p for p in self.positions if p[: len(prefix)] == prefix]
            for sub in moved:
                pos = self.positions.pop(sub)
                rest = sub[len(prefix) :]
                if rest and rest[0] in added:
                    target: NodePath = (*path, *rest)
                    self.positions[target] = pos


def _key_text(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _compose(
    text: str, file: str, *, several: bool, dialect: Dialect = "core"
) -> list[Node | None]:
    """The composed root node of each document (None for an empty one); a second
    document is an input error unless ``several``.

    Raises:
        InputError: syntax errors (with line and column), several documents when
            not allowed, more than :data:`MAX_DOCUMENTS`, nesting too deep.
    """
    try:
        composer = _Composer(text) if dialect == "core" else _PlainComposer(text)
        try:
            if not several:
                return [composer.get_single_node()]
            roots: list[Node | None] = []
            while composer.check_node():
                roots.append(composer.get_node())
                if len(roots) > MAX_DOCUMENTS:
                    raise InputError(f"more than {MAX_DOCUMENTS:,} YAML documents", file)
            return roots or [None]
        finally:
            composer.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        reason = " ".join(str(p) for p in (exc.context, exc.problem) if p) or "YAML syntax error"
        if "expected a single document" in reason:
            raise InputError("several YAML documents in one file", file) from None
        if mark is None:
            raise InputError(f"YAML syntax error: {reason}", file) from None
        raise InputError(
            f"YAML syntax error: {reason}", file, mark.line + 1, mark.column + 1
        ) from None
    except yaml.YAMLError as exc:
        raise InputError(f"YAML error: {exc}", file) from None
    except RecursionError:
        raise InputError("YAML nesting is too deep", file) from None
    except UnicodeEncodeError:
        # Text decoded from a file is valid UTF-8; a lone surrogate can only come from
        # an escape inside embedded text (a JSON string holding YAML), which libyaml
        # cannot encode.
        raise InputError("YAML text holds a lone surrogate (an invalid \\u escape)", file) from None


def load_yaml(text: str, file: str, dialect: Dialect = "core") -> Document:
    """Parse YAML ``text`` (already decoded) from ``file`` into a Document, its plain
    scalars read in ``dialect`` (:mod:`specgate.load.yaml_dialects`).

    Raises:
        InputError: syntax errors (with line and column), several documents,
            unsupported tags, alias or node limits, nesting too deep.
    """
    (root,) = _compose(text, file, several=False, dialect=dialect)
    return _single(root, text, file, dialect)


def _single(root: Node | None, text: str, file: str, dialect: Dialect = "core") -> Document:
    """The Document of one composed root (None for an empty document)."""
    if root is None:
        return Document(file=file, data=None, empty=True)
    builder = _Builder(file, anchors="&" in text, dialect=dialect)
    try:
        data = builder.build(root, ())
    except RecursionError:
        raise InputError("YAML nesting is too deep", file) from None
    return Document(
        file=file,
        data=None if data is _DROPPED else data,
        positions=Positions(builder.positions),
        duplicates=tuple(builder.duplicates),
        merge_tags=tuple(builder.merge_tags),
    )


def load_yaml_documents(text: str, file: str, dialect: Dialect = "core") -> Document:
    """:func:`load_yaml`, except that a file of several documents is read whole, as a
    :class:`Document` with ``stream`` set. The limits hold for the whole file (aliases and nodes
    counted over every document; each document counts as a node).

    Raises:
        InputError: as :func:`load_yaml`, save for several documents.
    """
    roots = _compose(text, file, several=True, dialect=dialect)
    if len(roots) == 1:
        return _single(roots[0], text, file, dialect)  # composed once, not again
    builder = _Builder(file, anchors="&" in text, dialect=dialect)
    data: list[Any] = []
    try:
        for index, root in enumerate(roots):
            builder.nodes += 1
            if builder.nodes > MAX_NODES:
                raise InputError(f"more than {MAX_NODES:,} YAML nodes", file)
            built = None if root is None else builder.build(root, (index,))
            data.append(None if built is _DROPPED else built)
    except RecursionError:
        raise InputError("YAML nesting is too deep", file) from None
    builder.positions[()] = ("sequence", 1, 1, 0, 0)  # the stream: line 1, column 1, no key
    return Document(
        file=file,
        data=data,
        positions=Positions(builder.positions),
        duplicates=tuple(builder.duplicates),
        stream=True,
        merge_tags=tuple(builder.merge_tags),
    )


def refuse_merge_tags(doc: Document) -> None:
    """Refuse a file read in the go dialect that is no Compose file but holds a Compose
    merge tag (only Compose knows them).

    Raises:
        InputError: ``unsupported tag`` at the first such tag's line and column.
    """
    if doc.merge_tags:
        _, tag, line, column = doc.merge_tags[0]
        raise InputError(f"unsupported tag {tag}", doc.file, line, column)
