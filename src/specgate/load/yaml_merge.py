"""Merge keys (``<<``) whose result depends on the PyYAML release: unsettled.

PyYAML's ``SafeConstructor.flatten_mapping`` puts the merged pairs before a mapping's
own and builds the dict in that order (the last pair of a key wins):

- PyYAML 6.0.2 (``yaml/constructor.py`` at tag 6.0.2): every ``<<`` in order, a list
  of maps taken last map first, so the later of two ``<<`` keys wins and, within a list,
  the earlier map.
- PyYAML 6.0.3 (``yaml/constructor.py`` at tag 6.0.3): every ``<<`` in order, a list
  in order, each merged pair dropped when a pair whose key is *the same string object*
  (``id(key_node.value)``) came before. Distinct nodes hold distinct strings save the
  ones CPython caches (the empty string and one Latin-1 character), so a two-character
  key behaves as in 6.0.2 between two ``<<`` keys but takes the *later* map of a list,
  and a one-character key takes the first value met.

vLLM, SGLang and TensorRT-LLM do not pin PyYAML, so a key both releases (or both
identities) settle alike is read; one they settle differently is unsettled
(:func:`merge_conflict` names it). Explicit keys win in both and are never in doubt.
"""

from __future__ import annotations

from collections.abc import Callable

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

#: (key text, key identity, value node) of one merged pair.
_Pair = tuple[str, object, Node]


class _TooMuch(Exception):
    """More merged pairs than the caller's budget."""


def _identity(key: Node) -> object:
    """What PyYAML 6.0.3 compares (``id(key_node.value)``): one node's string, or the
    cached object every node holding that text shares."""
    if isinstance(key, ScalarNode) and (
        key.value == "" or (len(key.value) == 1 and ord(key.value) < 256)
    ):
        return ("cached", key.value)
    return id(key)


def _is_merge(key: Node, merge_tags: tuple[str, ...]) -> bool:
    return isinstance(key, ScalarNode) and (
        key.tag in merge_tags or (key.tag == "specgate:plain" and key.value == "<<")
    )


class _Flattener:
    def __init__(self, key_text: Callable[[Node], str], budget: int) -> None:
        self.key_text = key_text
        self.budget = budget

    def flat(self, node: MappingNode, newer: bool, depth: int) -> list[_Pair]:
        """The pairs ``flatten_mapping`` leaves in ``node`` (merged first)."""
        merges = [v for k, v in node.value if _is_merge(k, _MERGE_TAGS)]
        own = [(k, v) for k, v in node.value if not _is_merge(k, _MERGE_TAGS)]
        self.budget -= len(node.value)
        if self.budget < 0 or depth > 64:
            raise _TooMuch
        pairs = self.merged(merges, newer, depth)
        return pairs + [(self.key_text(k), _identity(k), v) for k, v in own]

    def merged(self, merges: list[Node], newer: bool, depth: int) -> list[_Pair]:
        out: list[_Pair] = []
        seen: set[object] = set()
        for value in merges:
            maps = value.value if isinstance(value, SequenceNode) else [value]
            if not newer:
                maps = list(reversed(maps))
            for source in maps:
                if not isinstance(source, MappingNode):
                    continue  # the builder refuses it
                for pair in self.flat(source, newer, depth + 1):
                    if newer:
                        if pair[1] in seen:
                            continue
                        seen.add(pair[1])
                    out.append(pair)
        return out


_MERGE_TAGS = ("tag:yaml.org,2002:merge",)


def _same(a: Node, b: Node) -> bool:
    if a is b:
        return True
    return (
        isinstance(a, ScalarNode)
        and isinstance(b, ScalarNode)
        and (a.tag, a.value) == (b.tag, b.value)
    )


def merge_conflict(
    merges: list[Node], explicit: set[str], key_text: Callable[[Node], str], budget: int
) -> str | None:
    """The first merged key (not set explicitly) whose value differs between PyYAML
    6.0.2 and 6.0.3, or None.

    Args:
        merges: the value nodes of a mapping's ``<<`` keys, in order.
        explicit: the keys the mapping sets itself.
        key_text: a key node's text as the loader names it.
        budget: the most merged pairs to walk (past it the merge counts as a conflict,
            named ``"<<"``).
    """
    winners: list[dict[str, Node]] = []
    try:
        for newer in (False, True):
            flattener = _Flattener(key_text, budget)
            won: dict[str, Node] = {}
            for text, _, value in flattener.merged(merges, newer, 0):
                won[text] = value
            winners.append(won)
    except _TooMuch:
        return "<<"
    older, newer_won = winners
    for text, value in older.items():
        if text in explicit:
            continue
        other = newer_won.get(text)
        if other is None or not _same(value, other):
            return text
    return None
