"""A parsed YAML or JSON document that remembers where every key and value stands.

Shapes:
- a *node path* is a tuple of mapping keys (``str``) and sequence indexes (``int``),
  e.g. ``("deployments", 0, "claims", "speedup")``;
- a :class:`NodePosition` holds 1-based line and column of the key that holds a
  node (when it has one) and of the node's own value.

Rules never see positions: they speak node paths, and :meth:`Document.locate`
turns a path into a line and column (the most specific existing node wins).
"""

from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Literal, NamedTuple, TypeAlias

from specgate.core.errors import UnsettledValue

PathElement: TypeAlias = str | int
NodePath: TypeAlias = tuple[PathElement, ...]
NodeKind: TypeAlias = Literal["mapping", "sequence", "scalar"]


class Span(NamedTuple):
    """A 1-based line and column in a text file."""

    line: int
    column: int

    @property
    def file(self) -> str | None:
        """The file the span is in when it is another than the one its record names
        (:class:`SpanIn`), else None."""
        return None

    @property
    def via(self) -> str | None:
        """What else sets the value at the span (a Compose ``.env`` line the value's
        ``${VAR}`` reads: ``compose/.env:2 (D)``; :class:`SpanIn`), else None."""
        return None


class SpanIn(Span):
    """A :class:`Span` in another file than the one its record names: a value a
    Compose file merged over the config sets (an override file), ``file`` as shown;
    or of a value another file sets through it (``via``: a ``.env`` line). It equals
    the plain span of the same line and column."""

    def __new__(
        cls, line: int, column: int, file: str | None, via: str | None = None
    ) -> "SpanIn":
        made = super().__new__(cls, line, column)
        made.__dict__["_file"] = file
        made.__dict__["_via"] = via
        return made

    @property
    def file(self) -> str | None:
        found = self.__dict__.get("_file")
        return found if isinstance(found, str) else None

    @property
    def via(self) -> str | None:
        found = self.__dict__.get("_via")
        return found if isinstance(found, str) else None


class NodePosition(NamedTuple):
    """Where a node stands: ``key`` is the key holding it (None for list items and
    the root), ``value`` is the start of the node itself."""

    kind: NodeKind
    value: Span
    key: Span | None = None


#: One position as a loader records it: kind, value line and column, key line and
#: column (``0, 0`` when no key holds the node); 1-based.
PositionRow: TypeAlias = tuple[NodeKind, int, int, int, int]


class Positions(Mapping[NodePath, NodePosition]):
    """Node path → :class:`NodePosition`, made on first look-up from the rows a loader
    recorded. A claims file is read in full but its positions are looked up only for
    findings, so most are never made (a third of the cost of reading a file).
    Read-only; equal to a ``dict`` holding the same positions."""

    __slots__ = ("_made", "_rows")

    def __init__(self, rows: dict[NodePath, PositionRow]) -> None:
        self._rows = rows
        self._made: dict[NodePath, NodePosition] = {}

    def __getitem__(self, path: NodePath) -> NodePosition:
        made = self._made.get(path)
        if made is None:
            kind, line, column, key_line, key_column = self._rows[path]
            key = Span(key_line, key_column) if key_line else None
            made = self._made[path] = NodePosition(kind, Span(line, column), key)
        return made

    def __contains__(self, path: object) -> bool:
        return path in self._rows

    def __iter__(self) -> Iterator[NodePath]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    def __repr__(self) -> str:
        return f"Positions({dict(self)!r})"


class DuplicateKey(NamedTuple):
    """A key repeated in one mapping; ``span`` is its *second* occurrence."""

    path: NodePath
    key: str
    span: Span
    first: Span


#: The positions of a document that records none (read-only, shared).
NO_POSITIONS: Mapping[NodePath, NodePosition] = MappingProxyType({})
NO_UNSETTLED: Mapping[NodePath, str] = MappingProxyType({})
NO_DEFERRED: Mapping[NodePath, UnsettledValue] = MappingProxyType({})
NO_WRITTEN: Mapping[NodePath, tuple[str, tuple[int, ...]]] = MappingProxyType({})


class Document(NamedTuple):
    """A parsed file: plain data plus positions.

    Attributes:
        file: the path as given by the user (used in messages).
        data: ``dict``/``list``/``str``/``int``/``float``/``bool``/``None`` values.
        positions: node path → :class:`NodePosition` (a ``dict``, or
            :class:`Positions` made on look-up).
        duplicates: repeated keys, in document order.
        empty: True when the file holds no document at all.
        text: the decoded source (for comment directives).
        stream: True for a YAML file of several documents (``---``), such as a
            Kubernetes manifest: ``data`` is the list of them, document *i* at node
            path ``(i, …)`` (JSON pointer ``/i/…``), an empty one None.
        notes: what the loader left unread and why (a Python launcher's keyword
            whose value is no literal), for the report.
        unsettled: node path → the reference left in that string value that no file
            settles (a Compose ``${VAR}`` that neither ``.env`` nor a default sets:
            :mod:`specgate.load.compose_env`).
        deferred: node path → the unsettled value of one key of a Python launcher's
            speculative dict whose other keys are read (``"model": DRAFT`` with ``DRAFT``
            from the environment): absent from ``data``; the engine reader decides
            whether the keys read settle D and the method without it
            (docs/engines.md#unsettled-values).
        rendered: for a chart's values file read as the Deployments its template renders
            (:mod:`specgate.load.helm_values`): the node path in the values file of the
            item Deployment *i* was rendered from, so a pointer into the values file
            names a Deployment (docs/engines.md#finding-the-configuration).
        written: node path → a string value as written before Compose interpolation,
            and per character of the value read, the offset in it of the text it came
            from (a ``${VAR}``'s value: the ``$``), so the value's characters are
            located in the file (:mod:`specgate.load.compose_env`).
        merge_tags: each Compose ``!reset`` / ``!override`` of the file (go dialect):
            its node path (``<<`` dropped), tag, line and column
            (:mod:`specgate.load.compose_files`).
    """

    file: str
    data: object
    positions: Mapping[NodePath, NodePosition] = NO_POSITIONS
    duplicates: tuple[DuplicateKey, ...] = ()
    empty: bool = False
    text: str = ""
    stream: bool = False
    notes: tuple[str, ...] = ()
    unsettled: Mapping[NodePath, str] = NO_UNSETTLED
    deferred: Mapping[NodePath, UnsettledValue] = NO_DEFERRED
    origins: Mapping[NodePath, str] = NO_UNSETTLED
    via: Mapping[NodePath, str] = NO_UNSETTLED
    rendered: tuple[NodePath, ...] = ()
    written: Mapping[NodePath, tuple[str, tuple[int, ...]]] = NO_WRITTEN
    merge_tags: tuple[tuple[NodePath, str, int, int], ...] = ()

    def origin(self, path: NodePath) -> str | None:
        """The file (as shown) whose positions the node at ``path`` has, when it is
        another than ``file`` (``origins``: a node another Compose file sets), else
        None."""
        if not self.origins:
            return None
        for cut in range(len(path), 0, -1):
            found = self.origins.get(path[:cut])
            if found is not None:
                return found
        return None

    def _placed(self, probe: NodePath, span: Span) -> Span:
        origin = self.origin(probe) if self.origins else None
        via = self.via.get(probe) if self.via else None
        if origin is None and via is None:
            return span
        return SpanIn(span.line, span.column, origin, via)

    def locate(self, path: NodePath) -> Span:
        """The span a finding about ``path`` should point at.

        A scalar points at its value; a mapping or sequence at the key that holds
        it (or its own start when no key holds it). A path that does not exist
        falls back to its nearest existing ancestor, pointed at in the same way.
        The root falls back to 1:1.
        """
        probe = path
        while probe:
            pos = self.positions.get(probe)
            if pos is not None:
                if pos.kind == "scalar" or pos.key is None:
                    return self._placed(probe, pos.value)
                return self._placed(probe, pos.key)
            probe = probe[:-1]
        return Span(1, 1)

    def key_span(self, path: NodePath) -> Span:
        """The span of the key holding ``path`` (its value when no key holds it)."""
        probe = path
        while probe:
            pos = self.positions.get(probe)
            if pos is not None:
                return self._placed(probe, pos.key if pos.key is not None else pos.value)
            probe = probe[:-1]
        return Span(1, 1)

    def has(self, path: NodePath) -> bool:
        """Whether the document holds a node at ``path``."""
        return path in self.positions

    def scalar_text(self, path: NodePath) -> str | None:
        """The source text of the scalar at ``path`` as written (``2.50``, ``253``, at
        most 64 characters up to a space, comma, bracket or comment), or ``None`` when
        the node is not a scalar or the text is not kept."""
        pos = self.positions.get(path)
        if pos is None or pos.kind != "scalar" or not self.text or self.origin(path):
            return None
        start = 0
        for _ in range(pos.value.line - 1):
            start = self.text.find("\n", start) + 1
            if start == 0:
                return None
        begin = start + pos.value.column - 1
        token = self.text[begin : begin + 64]
        end = len(token)
        for stop in (" ", "\t", "\r", "\n", ",", "}", "]", "#"):
            at = token.find(stop)
            if at != -1:
                end = min(end, at)
        return token[:end] or None


def format_path(path: NodePath) -> str:
    """Render a node path as a JSON path: ``deployments[0].claims.speedup``."""
    out = ""
    for element in path:
        if isinstance(element, int):
            out += f"[{element}]"
        else:
            out += ("." if out else "") + element
    return out
