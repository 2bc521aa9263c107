"""Where the characters of a Kubernetes ``command``/``args`` item come from once its
``$(NAME)`` references are expanded (docs/engines.md#environment-files).

Kubernetes replaces ``$(NAME)`` with the container's variable NAME and ``$$`` with
``$`` (kubernetes/kubernetes ``third_party/forked/golang/expansion/expand.go``
``Expand``). A value the manifest itself writes (a ConfigMap's ``data`` value read by
``envFrom`` or ``configMapKeyRef``, an ``env[].value``) is a :class:`Placed` string: a
finding on it sits where it is written, where a reviewer changes it, not at the ``args``
item that names it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from specgate.load.document import NodePath, Span

#: ``$$`` or ``$(NAME)`` (the names :func:`._source._dependent` expands).
DEPENDENT_RE = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)")


class Placed(str):
    """A variable's value as the manifest writes it, at node ``path`` of the document."""

    path: NodePath

    def __new__(cls, value: str, path: NodePath) -> Placed:
        made = super().__new__(cls, value)
        made.path = path
        return made


#: A piece of an expanded item: a range of the characters of the item as written, or
#: the whole value written at a node path.
Piece = range | NodePath


def pieces(written: str, env: Mapping[str, object]) -> list[Piece] | None:
    """The pieces of ``written`` expanded with ``env`` as :func:`._source._dependent`
    expands it (a name set to a string is replaced, any other reference stays as
    written, ``$$`` is ``$``); None when no reference is replaced by a :class:`Placed`
    value (the item is placed as written)."""
    out: list[Piece] = []
    at = 0
    placed = False
    for match in DEPENDENT_RE.finditer(written):
        out.append(range(at, match.start()))
        name = match.group(1)
        value = env.get(name) if name is not None else None
        if name is None:
            out.append(range(match.start(), match.start() + 1))
        elif isinstance(value, Placed):
            out.append(value.path)
            placed = True
        elif isinstance(value, str):
            return None  # a value written nowhere here: its characters are not traced
        else:
            out.append(range(match.start(), match.end()))
        at = match.end()
    out.append(range(at, len(written)))
    return out if placed else None


def whole(parts: Sequence[Piece]) -> NodePath | None:
    """The node path of the one value an item is (``"$(SPEC)"``), else None."""
    kept = [p for p in parts if not isinstance(p, range) or len(p)]
    if len(kept) == 1 and not isinstance(kept[0], range):
        return kept[0]
    return None


def expanded_chars(
    parts: Sequence[Piece],
    written: Sequence[Span] | None,
    chars: Callable[[NodePath], Sequence[Span] | None],
) -> Sequence[Span] | None:
    """Per character of the expanded item, its span in the file: the item's own
    characters (``written``) and each placed value's (``chars``); None when either is
    not known."""
    out: list[Span] = []
    for part in parts:
        if isinstance(part, range):
            if written is None or part.stop > len(written):
                return None
            out.extend(written[part.start : part.stop])
            continue
        spans = chars(part)
        if spans is None:
            return None
        out.extend(spans)
    return tuple(out)
