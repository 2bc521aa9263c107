"""A parsed YAML or JSON document that remembers where every key and value stands.

Shapes:
- a *node path* is a tuple of mapping keys (``str``) and sequence indexes (``int``),
  e.g. ``("deployments", 0, "claims", "speedup")``;
- a :class:`NodePosition` holds 1-based line and column of the key that holds a
  node (when it has one) and of the node's own value.

Rules never see positions: they speak node paths, and :meth:`Document.locate`
turns a path into a line and column (the most specific existing node wins).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypeAlias

PathElement: TypeAlias = str | int
NodePath: TypeAlias = tuple[PathElement, ...]
NodeKind: TypeAlias = Literal["mapping", "sequence", "scalar"]


@dataclass(frozen=True)
class Span:
    """A 1-based line and column in a text file."""

    line: int
    column: int


@dataclass(frozen=True)
class NodePosition:
    """Where a node stands: ``key`` is the key holding it (None for list items and
    the root), ``value`` is the start of the node itself."""

    kind: NodeKind
    value: Span
    key: Span | None = None


@dataclass(frozen=True)
class DuplicateKey:
    """A key repeated in one mapping; ``span`` is its *second* occurrence."""

    path: NodePath
    key: str
    span: Span
    first: Span


@dataclass
class Document:
    """A parsed file: plain data plus positions.

    Attributes:
        file: the path as given by the user (used in messages).
        data: ``dict``/``list``/``str``/``int``/``float``/``bool``/``None`` values.
        positions: node path → :class:`NodePosition`.
        duplicates: repeated keys, in document order.
        empty: True when the file holds no document at all.
        text: the decoded source (for comment directives).
    """

    file: str
    data: object
    positions: dict[NodePath, NodePosition] = field(default_factory=dict)
    duplicates: list[DuplicateKey] = field(default_factory=list)
    empty: bool = False
    text: str = ""

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
                    return pos.value
                return pos.key
            probe = probe[:-1]
        return Span(1, 1)

    def key_span(self, path: NodePath) -> Span:
        """The span of the key holding ``path`` (its value when no key holds it)."""
        probe = path
        while probe:
            pos = self.positions.get(probe)
            if pos is not None:
                return pos.key if pos.key is not None else pos.value
            probe = probe[:-1]
        return Span(1, 1)

    def has(self, path: NodePath) -> bool:
        """Whether the document holds a node at ``path``."""
        return path in self.positions


def format_path(path: NodePath) -> str:
    """Render a node path as a JSON path: ``deployments[0].claims.speedup``."""
    out = ""
    for element in path:
        if isinstance(element, int):
            out += f"[{element}]"
        else:
            out += ("." if out else "") + element
    return out
