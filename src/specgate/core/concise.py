"""A finding's message kept to what is wrong: :func:`concise` moves what does not fit in
:data:`~specgate.core.findings.MESSAGE_LIMIT` characters to its ``details``.

Rules write the message and the details apart (a formula, a source at its commit, the
version reasoning go to details); this is the guard behind them, so that no message a
reader sees runs past the limit whatever a rule or an engine's data says. It cuts at a
clause boundary outside brackets and quotes, the most telling first: ``"; "``, then
``". "``, then ``": "``, then before a ``" ("``, then ``", "``; with none in reach, at
the last space, marked ``…`` on both sides. Nothing is dropped: message and details
together hold every word the rule wrote.
"""

from __future__ import annotations

from specgate.core.findings import MESSAGE_LIMIT

#: Clause boundaries, most telling first: (separator, where the message ends and where
#: the details start, counted from the separator).
_BOUNDARIES: tuple[tuple[str, int, int], ...] = (
    ("; ", 0, 2),
    (". ", 1, 2),
    (": ", 0, 2),
    (" (", 0, 1),
    (", ", 0, 2),
)
_OPEN = "([{"
_CLOSE = ")]}"
#: A message shorter than this is no sentence: a later, weaker boundary is taken instead.
_SHORTEST = 60


def _scan(text: str, skipped: frozenset[int]) -> tuple[list[int], set[int]]:
    """Indexes of ``text`` outside brackets and quotes, and the openers (a bracket, a
    quote) left open at its end; the openers at ``skipped`` open nothing."""
    stack: list[int] = []
    quote = -1
    out: list[int] = []
    for i, ch in enumerate(text):
        if i in skipped:
            pass
        elif quote >= 0:
            if ch == text[quote]:
                quote = -1
            continue
        elif ch in _OPEN:
            stack.append(i)
        elif ch in _CLOSE:
            if stack:
                stack.pop()
        elif ch in "'\"" and (i == 0 or not text[i - 1].isalnum()) and not stack:
            quote = i  # an apostrophe inside a word (engine's) opens nothing
        if not stack and quote < 0:
            out.append(i)
    return out, set(stack) | ({quote} if quote >= 0 else set())


def _top_level(text: str, limit: int) -> list[int]:
    """Indexes ``i < limit`` of ``text`` outside brackets and quotes. A bracket or quote
    the whole message never closes (a value shown cut, ``{"method": "ngram", "prompt_…``)
    holds nothing: else every clause after it would be inside it and the message could
    only be cut mid-sentence. Closing it can open another one's reach, so the scan runs
    again without it, a few times at most (the rest then counts as inside)."""
    skipped: frozenset[int] = frozenset()
    for _ in range(4):
        out, unclosed = _scan(text, skipped)
        if not unclosed:
            break
        skipped |= unclosed
    return [i for i in out if i < limit]


def join_details(*parts: str) -> str:
    """``parts`` that are not empty, joined with ``"; "``."""
    return "; ".join(part for part in parts if part)


def concise(message: str, details: str = "") -> tuple[str, str]:
    """``(message, details)`` with ``message`` at most ``MESSAGE_LIMIT`` characters.

    A message within the limit is returned as given. A longer one is cut at its last
    clause boundary in reach (see the module doc); the rest opens ``details``, before
    what the rule put there.

    Example: a 230-character ``"X is wrong: A / B = 0.7 < 1.1; the proven bound …"``
    → ``("X is wrong: A / B = 0.7 < 1.1", "the proven bound …")``.
    """
    message = message.strip()
    if len(message) <= MESSAGE_LIMIT:
        return message, details
    level = set(_top_level(message, MESSAGE_LIMIT))
    for separator, head_end, rest_start in _BOUNDARIES:
        at = message.rfind(separator, _SHORTEST, MESSAGE_LIMIT - head_end + len(separator))
        while at >= _SHORTEST and at not in level:
            at = message.rfind(separator, _SHORTEST, at)
        if at >= _SHORTEST:
            head = message[: at + head_end].rstrip()
            return head, join_details(message[at + rest_start :].strip(), details)
    at = message.rfind(" ", _SHORTEST, MESSAGE_LIMIT - 1)
    if at < _SHORTEST:
        at = MESSAGE_LIMIT - 1
    return message[:at].rstrip() + "…", join_details("…" + message[at:].strip(), details)
