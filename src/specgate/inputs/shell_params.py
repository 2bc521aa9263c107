"""Shell parameter expansion of one text's words (POSIX.1-2017 XCU 2.3, 2.6.2, 2.6.5):
the variables a text sets, ``$NAME``/``${NAME}``/``${NAME<op>word}`` replaced by them
and the result split into fields, as :mod:`specgate.inputs.cmdline` needs it."""

from __future__ import annotations

import re

from specgate.core.limits import FileBudget

#: A word's parts with how each was quoted: 0 unquoted, 1 single-quoted or
#: backslash-escaped (literal), 2 double-quoted (expanded, not split), 3 an unquoted
#: ``${NAME<op>word}`` whose word may hold blanks and quotes (POSIX 2.3: the token runs
#: to the expansion's closing brace; 2.6.2, 2.6.5: the value is split, the word's own
#: quoted parts are not).
Segments = tuple[tuple[str, int], ...]
#: How far a ``${`` is scanned for its closing brace. A text that ends before a brace
#: closes it keeps the ``${`` as written (the shell refuses such a script: "bad
#: substitution"); a scan that reaches this bound, or the text's scan budget, with text
#: left is :class:`ScanLimit` (an input error at its line): never a different reading.
PARAMETER_SCAN = 4096


class ScanLimit(Exception):
    """The scan for a ``${``'s closing brace reached its bound with text left."""


def parameter_end(text: str, i: int, budget: list[int]) -> int | None:
    """The offset after the ``}`` closing the ``${`` at ``i``, skipping quoted text,
    escapes and nested ``${…}`` (POSIX 2.3: "the shell shall read sufficient input to
    determine the end of the unit to be expanded"); None when none closes it within
    :data:`PARAMETER_SCAN` characters or a quote in it does not close. ``budget[0]``
    is how many characters the scans of one text may still read together (its length
    plus :data:`PARAMETER_SCAN`): many unclosed ``${`` cost linear time, not 4096 each.

    Raises:
        ScanLimit: the scan reached its bound with text left (no answer within it).
    """
    end = min(len(text), i + PARAMETER_SCAN, i + max(budget[0], 0))
    found = _scan_parameter(text, i, end)
    if found == _UNDECIDED:
        if end < len(text):
            raise ScanLimit
        found = None
    budget[0] -= (found or end) - i
    return found


#: :func:`_scan_parameter` reached its end without an answer.
_UNDECIDED = -1


def _scan_parameter(text: str, i: int, end: int) -> int | None:
    j, depth = i + 2, 1
    while j < end:
        ch = text[j]
        if ch == "\\":
            j += 2
        elif ch == "'":
            close = text.find("'", j + 1, end)
            if close < 0:
                return _UNDECIDED
            j = close + 1
        elif ch == '"':
            j += 1
            while j < end and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            if j >= end:
                return _UNDECIDED
            j += 1
        elif text.startswith("${", j):
            depth, j = depth + 1, j + 2
        elif ch == "}":
            depth, j = depth - 1, j + 1
            if depth == 0:
                return j
        elif ch in "\n;&|" and depth == 1 and text[i + 2 : j].isidentifier():
            return None  # a separator before any operator: not an expansion
        else:
            j += 1
    return _UNDECIDED


def _word_segments(word: str) -> list[tuple[str, int]]:
    """The quoting of the word of ``${NAME:-word}`` (kinds as :data:`_Segments`):
    ``'…'`` literal, ``"…"`` expanded and not split, a backslash's character literal,
    the rest unquoted. An unclosed quote runs to the end."""
    out: list[tuple[str, int]] = []
    i, end = 0, len(word)
    while i < end:
        ch = word[i]
        if ch == "'":
            close = word.find("'", i + 1)
            close = end if close < 0 else close
            out.append((word[i + 1 : close], 1))
            i = close + 1
        elif ch == '"':
            j, piece = i + 1, []
            while j < end and word[j] != '"':
                if word[j] == "\\" and j + 1 < end and word[j + 1] in '"\\$`':
                    piece.append(word[j + 1])
                    j += 2
                else:
                    piece.append(word[j])
                    j += 1
            out.append(("".join(piece), 2))
            i = j + 1
        elif ch == "\\" and i + 1 < end:
            out.append((word[i + 1], 1))
            i += 2
        else:
            j = i
            while j < end and word[j] not in "'\"\\":
                j += 1
            j = max(j, i + 1)
            out.append((word[i:j], 0))
            i = j
    return out


_PARAMETER_RE = re.compile(
    r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-=+?])([^}$]*))?\}|([A-Za-z_][A-Za-z0-9_]*)"
    # lists: ${A[@]} ${A[*]} ${A[0]} ${#A[@]} (bash arrays), $@ $* ${@} ${1} $# (POSIX 2.5.2)
    r"|\{(#?)([A-Za-z_][A-Za-z0-9_]*)\[([^\]}]*)\]\}|\{(#?)([@*]|[0-9]+)\}|\{(#)\}|([@*#0-9])"
    # a positional parameter with a default, an alternative or a check: ${1:-4} ${2+x}
    # ${1:?msg} (POSIX 2.6.2; `=` cannot assign to one: bash stops, so it stays opaque)
    r"|\{([0-9]+)(:?[-+?])([^}$'\"\\`]*)\}"
    # a default or an alternative that is itself an expansion: ${1:-${D:-4}} ${D:-$X}
    r"|\{([A-Za-z_][A-Za-z0-9_]*|[0-9]+)(:?[-+])((?:[^{}$'\"\\`]|\$[A-Za-z_][A-Za-z0-9_]*"
    r"|\$[0-9@*#]|\$\{(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+)(?::?[-+?=][^{}$'\"\\`]*)?\})*)\})"
)
#: ``${NAME…}`` / ``${N…}`` of a form not evaluated whose operand holds no expansion
_OPERAND_RE = re.compile(r"\$\{#?([A-Za-z_][A-Za-z0-9_]*|[0-9]+)[^$`{}]*\}")
#: Text that is an expansion specgate does not evaluate: command substitution
#: (``$(…)``, backquotes) or a ``${`` left after the forms above (``${X/a/b}``).
_OPAQUE_RE = re.compile(r"\$\(|`|\$\{")
#: A hit: what a word holds that this text does not settle, whether the shell splits
#: it into fields (unquoted: it may add several words), and whether a file the text
#: names but specgate does not read (``. ./x``, ``eval``, ``$(cat f)``) may fill it
#: (False: the environment it runs in, its caller's arguments).
Hit = tuple[str, bool, bool]


class Overspent(Exception):
    """Expanding a parameter would pass the file's budget (:class:`Shell`)."""


class Shell:
    """Shell variables set so far in one text (``NAME=value`` lines and ``export``s),
    and ``$NAME`` / ``${NAME}`` in later words replaced by them, as the shell does
    before it runs a command (``MODEL=/m/x.gguf`` then ``llama-server -m "$MODEL"``).
    An expansion outside quotes is split into fields at blanks (``SPEC="--a 1"`` then
    ``cmd $SPEC`` runs ``cmd --a 1``; a variable holding nothing leaves no word),
    one inside double quotes is not (``"$SPEC"`` stays one word), and nothing inside
    single quotes or after a backslash is expanded (POSIX 2.6.2, 2.6.5). The
    positional parameters of a literal ``set -- …`` (and ``shift``) and bash arrays
    assigned in the text (``A=(…)``, ``A+=(…)``) are expanded too: ``"$@"`` and
    ``"${A[@]}"`` give one field per element, ``"$*"`` and ``"${A[*]}"`` one field
    of them joined by a blank (POSIX 2.5.2; bash "Arrays").

    What the text does not settle is never read as nothing: a name the text never
    sets stays as written, and every such word is a *hit* (:attr:`hits`, a
    description and whether it is split): a variable from the environment, one set
    only by ``read``, anything after a ``.``/``source``/``eval`` whose text specgate
    does not read (it may set any variable or ``set --``), ``"$@"`` without a
    ``set --``, an array never assigned, command substitution. The caller decides
    what a hit in an engine's command means (hostile review r4 defect 2).

    A value is not expanded again. The characters expansion may
    add are bounded per *file* (:class:`specgate.core.limits.FileBudget`: the file's
    length plus 64 KiB over all its command strings together; a text split alone has a
    budget of its own): past that the text is refused (:class:`Overspent`, an input
    error at the word's line for the caller: a 1 MB value named a million times would
    otherwise allocate a terabyte, a budget per string would let a file of many strings
    cost many times its size, and a word left unexpanded would be read as something the
    shell does not run: hostile review defect 2)."""

    def __init__(self, budget: FileBudget) -> None:
        self.values: dict[str, str] = {}
        self._budget = budget
        self.allowance = budget.allowance
        #: 0-based line of the word being expanded (where an overspent budget is told).
        self.line = 0
        #: ``set --`` parameters; None: the script's own arguments (its caller's).
        self.positional: list[str] | None = None
        #: when ``positional`` is None because the script itself changed them in a way
        #: not followed (a function's arguments, ``shift N`` not read, ``set`` on some
        #: paths): why; None: they are the script's own, set outside the repository
        self.positional_why: str | None = None
        self.arrays: dict[str, list[str]] = {}
        #: names whose value came from something unsettled (``X=$Y``, ``read X``): what,
        #: whether from a file, and the unsettled texts left in the value as written
        #: (None: anywhere in it)
        self.tainted: dict[str, tuple[str, bool, tuple[str, ...] | None]] = {}
        #: the last command that may set any variable (``.``/``source``/``eval`` whose
        #: text is not read, ``export $(…)``), as written
        self.opaque: str | None = None
        #: names assigned since ``opaque`` (a later assignment decides them: bash,
        #: "Shell Parameters"; only ``readonly`` in the unread text could stop it)
        self.fresh: set[str] = set()
        #: what the words expanded since the caller last cleared it left unsettled
        self.hits: list[Hit] = []
        #: per hit, the text it stands for in the fields (None: all of the word's)
        self.hit_refs: list[tuple[str, ...] | None] = []
        #: per hit, the expansion as written
        self.hit_shown: list[str] = []
        #: names ``${NAME:=word}`` assigned since the caller last cleared it
        self.assigned: list[str] = []
        #: ``IFS`` was set or unset: unquoted expansions are not split as read here
        self.ifs_changed = False

    def hidden(self, name: str) -> bool:
        """Whether ``name`` may have been set by :attr:`opaque` (not assigned since)."""
        return self.opaque is not None and name not in self.fresh

    def obscure(self, shown: str) -> None:
        """From here on any variable may hold what ``shown`` (a command whose effect on
        the variables is not followed) gave it, until the script assigns it again."""
        self.opaque = shown
        self.fresh.clear()

    def clear(self) -> None:
        """Forget the hits recorded so far."""
        self.hits.clear()
        self.hit_refs.clear()
        self.hit_shown.clear()

    def hit_of(self, field: str) -> Hit | None:
        """The first hit that applies to ``field`` (one of the last word's fields)."""
        for hit, refs in zip(self.hits, self.hit_refs, strict=True):
            if refs is None or any(ref in field for ref in refs):
                return hit
        return None

    def _hit(
        self,
        what: str,
        split: bool,
        from_file: bool,
        refs: tuple[str, ...] | None = None,
        shown: str = "",
    ) -> None:
        self.hits.append((what, split, from_file))
        self.hit_refs.append(refs)
        self.hit_shown.append(shown)

    def _take(self, value: str) -> str:
        if len(value) > self._budget.chars:
            raise Overspent
        self._budget.spend(len(value))
        return value

    def _settled(self, shown: str, name: str, *, split: bool) -> None:
        """Record a hit for ``shown`` (naming ``name``) when the text does not settle it."""
        if self.hidden(name):
            what = f"`{shown}` may be set by {self.opaque}, which specgate does not follow"
            self._hit(what, split, True, shown=shown)
        elif name in self.tainted:
            why, from_file, refs = self.tainted[name]
            self._hit(f"`{shown}`: {why}", split, from_file, refs, shown)

    def _value(self, match: re.Match[str], *, split: bool = False) -> str | None:
        """The value of the scalar parameter ``match`` names, None when unset.
        ``${NAME:-word}`` / ``${NAME-word}`` (and ``:=`` / ``=``) give ``word`` when NAME
        is unset (or, with ``:``, empty), ``${NAME:+word}`` / ``${NAME+word}`` give it
        when NAME is set (and not empty), POSIX 2.6.2; a name the text never sets is
        unset there (the script's own default is what it runs with), and a hit (the
        environment it runs in may set it)."""
        name, operator, word = match.group(1) or match.group(4), match.group(2), match.group(3)
        shown = match.group(0)
        known = self.values.get(name)
        if known is None and name in self.arrays:
            known = self.arrays[name][0] if self.arrays[name] else ""
        self._settled(shown, name, split=split)
        if known is None and not self.hidden(name) and name not in self.tainted:
            self._unset(shown, name, operator, word, split=split)
        if operator:
            empty = known is None or (operator.startswith(":") and not known)
            if operator[-1] == "+":
                known = "" if empty else word
            elif operator[-1] == "?":
                known = self._checked(shown, name, known, empty, split=split)
            elif empty:
                known = word
                if operator[-1] == "=":
                    self.values[name] = word
                    self.assigned.append(name)
        if known is None:
            return None
        return self._take(known)

    def _checked(
        self, shown: str, name: str, known: str | None, empty: bool, *, split: bool
    ) -> str | None:
        """``${NAME:?word}`` / ``${NAME?word}``: NAME's value, or None where the shell
        stops the script instead (POSIX 2.6.2: unset, or with ``:`` empty, "shall
        write word to standard error and exit"). One the text sets empty is the
        repository's doing (a hit); one it never sets is already a hit, the
        environment's (:meth:`_unset`)."""
        if not empty:
            return known
        if known is not None:
            what = f"`{shown[:60]}`: {name} is empty here, so the shell stops the script"
            self._hit(what, split, True, shown=shown)
        return None

    def _unset(
        self, shown: str, name: str, operator: str | None, word: str | None, *, split: bool
    ) -> None:
        """A hit for a name the text never sets, unless a default that is not empty
        stands for it (``${D:-3}``: the script's own value when the environment sets
        none); an empty default (``${EXTRA:-}``) or ``:+`` states nothing."""
        if operator and operator[-1] in "-=" and word:
            return
        stops = "; the script stops when it is not" if operator and operator[-1] == "?" else ""
        what = (
            f"`{shown[:60]}`: {name} is not set in this script (it comes from the "
            f"environment the script runs in{stops})"
        )
        self._hit(what, split, False, (shown,) if not operator else None, shown)

    def _elements(self, match: re.Match[str], *, split: bool) -> tuple[list[str] | None, bool]:
        """A list expansion: (its elements, None when unsettled; whether ``*`` joins
        them); a count (``$#``, ``${#A[@]}``) or one element as a one-element list."""
        if match.group(6):  # ${A[...]} / ${#A[...]}
            name, index, count = match.group(6), match.group(7), bool(match.group(5))
            items = self.arrays.get(name)
            if items is None and name in self.values:
                items = [self.values[name]]
            self._settled(match.group(0), name, split=split)
            if items is None:
                if not self.hidden(name) and name not in self.tainted:
                    what = f"`{match.group(0)}`: the array {name} is not assigned in this script"
                    self._hit(what, split, True, shown=match.group(0))
                return None, False
            if index in ("@", "*"):
                return ([str(len(items))] if count else items), index == "*" and not count
            if index.isdigit():
                item = items[int(index)] if int(index) < len(items) else ""
                return [str(len(item))] if count else [item], False
            what = f"`{match.group(0)}`: an index specgate does not evaluate"
            self._hit(what, split, True, shown=match.group(0))
            return None, False
        special = match.group(9) or match.group(11) or "#"
        if match.group(10) or match.group(8):  # ${#} ${#@}
            special = "#"
        if special == "0":  # the name the script is run by (sh -c: the word after it)
            what = f"`{match.group(0)}`: $0, the name the script is run by (its caller's)"
            self._hit(what, split, False, (match.group(0),), match.group(0))
            return None, False
        self._settled(match.group(0), "@", split=split)
        if self.positional is None:
            if not self.hidden("@") and self.positional_why is not None:
                what = f"`{match.group(0)}`: {self.positional_why}"
                self._hit(what, split, True, (match.group(0),), match.group(0))
            elif not self.hidden("@"):
                what = (
                    f"`{match.group(0)}`: the script's arguments (its caller's; no "
                    "`set --` in this script sets them)"
                )
                self._hit(what, split, False, (match.group(0),), match.group(0))
            return None, False
        params = self.positional
        if special == "#":
            return [str(len(params))], False
        if special in "@*":
            return params, special == "*"
        index = int(special) - 1
        return ([params[index]] if index < len(params) else [""]), False

    def _argument(self, match: re.Match[str], *, split: bool) -> str | None:
        """``${N<op>word}``: positional parameter N with ``-``/``+``/``?`` (and their
        ``:`` forms) as :meth:`_value` reads a name's (POSIX 2.6.2), None when not
        settled: the script's own arguments are its caller's (a hit naming ``$N``,
        outside the repository; the default is what runs only when the caller passes
        none), and ``$0``, the script's name, is no value here."""
        index, operator, word = int(match.group(12)), match.group(13), match.group(14)
        shown = match.group(0)
        self._settled(shown, "@", split=split)
        if self.positional is None or index == 0:
            if index == 0:
                what = f"`{shown}`: $0, the name the script is run by (its caller's)"
                self._hit(what, split, False, (shown,), shown)
                return None
            if self.hidden("@"):
                return None
            if self.positional_why is not None:
                what = f"`{shown}`: {self.positional_why}"
                self._hit(what, split, True, (shown,), shown)
                return None
            unless = (
                f"; {word!r} only when the caller passes none"
                if operator[-1] == "-" and word else ""
            )
            what = (
                f"`{shown}`: ${index} is one of the script's arguments (its caller's; no "
                f"`set --` in this script sets them){unless}"
            )
            self._hit(what, split, False, (shown,), shown)
            return None
        known = self.positional[index - 1] if index <= len(self.positional) else None
        empty = known is None or (operator.startswith(":") and not known)
        if operator[-1] == "+":
            return self._take("" if empty else word)
        if operator[-1] == "?":
            checked = self._checked(shown, f"${index}", known or "", empty, split=split)
            return None if checked is None else self._take(checked)
        return self._take(word if empty else str(known))

    def _nested(self, match: re.Match[str], *, split: bool) -> str | None:
        """``${P<op>word}`` whose word is itself an expansion (``${1:-${D:-4}}``,
        ``${D:-$X}``; ``op`` one of ``-`` ``:-`` ``+`` ``:+``): P's value where that
        decides, else the word expanded (POSIX 2.6.2: the word is expanded only when
        used). Where P is not settled (the caller's ``$1``, a name the text does not
        follow) it is None, with P's hit and the word's own: the value is the caller's
        only when each part of it is."""
        param, operator, word = match.group(15), match.group(16), match.group(17)
        shown = match.group(0)
        if param.isdigit():
            self._settled(shown, "@", split=split)
            unknown = self.positional is None or param == "0"
            if unknown and not self.hidden("@"):
                why = self.positional_why or (
                    f"${param} is one of the script's arguments (its caller's; no `set --` "
                    "in this script sets them)"
                )
                self._hit(f"`{shown[:60]}`: {why}", split, self.positional_why is not None,
                          (shown,), shown)
            index = int(param)
            params = self.positional or []
            known = params[index - 1] if 0 < index <= len(params) else None
        else:
            self._settled(shown, param, split=split)
            unknown = self.hidden(param) or param in self.tainted
            known = self.values.get(param)
            if known is None and param in self.arrays:
                known = self.arrays[param][0] if self.arrays[param] else ""
            if known is None and not unknown:
                self._unset(shown, param, operator, word, split=split)
        if unknown:
            self.expand(word)  # its hits say whose the value is when the word is used
            return None
        empty = known is None or (operator.startswith(":") and not known)
        if operator[-1] == "+":
            return "" if empty else self.expand(word)
        return self.expand(word) if empty else known

    def _lookup(self, match: re.Match[str], *, split: bool) -> tuple[list[str] | None, bool]:
        """Any parameter as a list: a scalar is a one-element list."""
        if match.group(1) or match.group(4):
            value = self._value(match, split=split)
            return (None if value is None else [value]), False
        if match.group(12):
            value = self._argument(match, split=split)
            return (None if value is None else [value]), False
        if match.group(15):
            value = self._nested(match, split=split)
            return (None if value is None else [self._take(value)]), False
        items, star = self._elements(match, split=split)
        if items is not None:
            for item in items:
                self._take(item)
        return items, star

    def _opaque(self, text: str, *, split: bool) -> None:
        """A hit for an expansion left in ``text`` that is none of the forms read."""
        found = _OPAQUE_RE.search(text)
        if found is not None:
            what = "a command substitution" if found.group() != "${" else "an expansion"
            # the expansion as written: to its first closing brace when that is near
            close = text.find("}", found.start()) if found.group() == "${" else -1
            if 0 <= close < found.start() + 40:
                piece = text[found.start() : close + 1]
            else:
                piece = text[found.start() : found.start() + 40]
                piece += "…" if len(text) > found.start() + 40 else ""  # cut: say so
            callers = self._callers(piece)
            what = (
                f"`{piece}`: {what} specgate does not evaluate (its value is known only "
                f"when the script runs){callers or ''}"
            )
            self._hit(what, split, callers is None, shown=piece)

    def _callers(self, piece: str) -> str | None:
        """Whose the expansion ``piece`` (``${a#*=}``, ``${1%%,*}``: a form not
        evaluated) is when it is made from the deployment's values alone (its parameter
        is the caller's argument or environment, and nothing else in it expands): the
        words saying so; None otherwise."""
        found = _OPERAND_RE.fullmatch(piece)
        if found is None:
            return None
        name = found.group(1)
        if name.isdigit():
            own = self.positional is None and self.positional_why is None
            return ", of the script's arguments (its caller's)" if own and not (
                self.hidden("@")) else None
        taint = self.tainted.get(name)
        if self.hidden(name) or (taint is not None and taint[1]):
            return None
        if taint is not None:
            return f", of {taint[0]}"
        if name in self.values or name in self.arrays:
            return None
        return f", of {name}: {name} is not set in this script (it comes from the environment)"

    def expand(self, word: str) -> str:
        """``word`` with every parameter replaced, as one word (an assignment's value,
        a double-quoted part)."""
        if "$" not in word and "`" not in word:
            return word

        def value(match: re.Match[str]) -> str:
            items, _ = self._lookup(match, split=False)
            return match.group(0) if items is None else " ".join(items)

        out = _PARAMETER_RE.sub(value, word)
        self._opaque(_PARAMETER_RE.sub("", word), split=False)
        return out

    def joined(self, word: str, parts: Segments | None) -> str:
        """``word`` expanded as one word (no field splitting): an assignment's value."""
        if parts is None:
            return word
        return "".join(
            text if kind == 1 else self._whole(text) if kind == 3 else self.expand(text)
            for text, kind in parts
        )

    def _braced(self, text: str) -> tuple[str | None, list[tuple[str, int]] | None]:
        """An unquoted ``${NAME<op>word}`` (kind 3): (the variable's value, None) when
        that is what it gives, (None, the word's segments) when the word is (POSIX
        2.6.2: ``:-``/``-`` and ``:=``/``=`` when unset or, with ``:``, empty; ``:+``/
        ``+`` when set and, with ``:``, not empty; ``:=`` also assigns it), (None, None)
        for a name the text never sets (it stays as written)."""
        match = _BRACED_RE.fullmatch(text)
        if match is None:
            return None, None
        name, operator, word = match.group(1), match.group(2), match.group(3)
        known = self.values.get(name)
        self._settled(text, name, split=True)
        if known is None and not self.hidden(name) and name not in self.tainted:
            self._unset(text, name, operator, word, split=True)
        if operator:
            empty = known is None or (operator.startswith(":") and not known)
            if operator[-1] == "+":
                return ("", None) if empty else (None, _word_segments(word))
            if operator[-1] == "?":
                known = self._checked(text, name, known, empty, split=True)
                return (None, None) if known is None else (self._take(known), None)
            if empty:
                segments = _word_segments(word)
                if operator[-1] == "=":
                    self.values[name] = "".join(
                        t if k == 1 else self.expand(t) for t, k in segments
                    )
                    self.assigned.append(name)
                return None, segments
        if known is None:
            return None, None
        return self._take(known), None

    def _whole(self, text: str) -> str:
        """A kind-3 part as one word (inside an assignment's value: no splitting)."""
        if _BRACED_RE.fullmatch(text) is None:
            return self.expand(text)
        value, segments = self._braced(text)
        if segments is not None:
            return "".join(t if k == 1 else self.expand(t) for t, k in segments)
        return text if value is None else value

    def fields(self, word: str, parts: Segments | None) -> list[str]:
        """The words ``word`` becomes after parameter expansion and field splitting."""
        if parts is None or ("$" not in word and "`" not in word):
            return [word]
        if self.ifs_changed and any(k in (0, 3) and ("$" in t or "`" in t) for t, k in parts):
            what = (
                f"`{word[:60]}`: IFS is changed in this script, so how the shell splits "
                "this word is not read"
            )
            self._hit(what, True, True, shown=word)
        out = _Fields()
        for text, kind in parts:
            if kind == 3 and _BRACED_RE.fullmatch(text) is None:
                self._expanded(out, text, quoted=False)
            elif kind == 3:
                value, segments = self._braced(text)
                if segments is None and value is None:
                    out.literal(text)
                elif segments is None:
                    out.split(str(value))
                else:
                    for piece, piece_kind in segments:
                        if piece_kind == 0:  # the word's unquoted text is split as well
                            out.split(self.expand(piece))
                        else:
                            out.literal(piece if piece_kind == 1 else self.expand(piece))
            elif kind == 1:
                out.literal(text)
            else:
                self._expanded(out, text, quoted=kind == 2)
        return out.done()

    def _expanded(self, out: _Fields, text: str, *, quoted: bool) -> None:
        """Add ``text`` (unquoted or double-quoted) with its parameters expanded."""
        at = 0
        for match in _PARAMETER_RE.finditer(text):
            if match.start() > at:
                out.literal(text[at : match.start()])
            at = match.end()
            items, star = self._lookup(match, split=not quoted)
            if items is None:
                out.literal(match.group(0))
            elif not quoted:
                out.split(" ".join(items))
            elif star:
                out.literal(" ".join(items))
            else:  # "$@": one field per element, none for no element
                for index, item in enumerate(items):
                    if index > 0:
                        out.close()
                    out.literal(item)
        if at < len(text):
            out.literal(text[at:])
        self._opaque(_PARAMETER_RE.sub("", text), split=not quoted)


class _Fields:
    """The fields one word becomes, built piece by piece."""

    def __init__(self) -> None:
        self.fields: list[str] = []
        self.current: list[str] = []
        self.open = False

    def literal(self, text: str) -> None:
        self.current.append(text)
        self.open = True

    def close(self) -> None:
        self.fields.append("".join(self.current))
        self.current, self.open = [], False

    def split(self, value: str) -> None:
        for index, piece in enumerate(_IFS_RE.split(value)):
            if index > 0 and self.open:
                self.close()
            if piece:
                self.literal(piece)

    def done(self) -> list[str]:
        if self.open:
            self.close()
        return self.fields


#: ``NAME=(`` or ``NAME+=(``: a bash array assignment opening
ARRAY_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(\+?)=\(")
_ASSIGN_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
#: Commands whose effect on the variables specgate does not read (POSIX 2.14 dot,
#: eval; bash source).
_OPAQUE_COMMANDS = frozenset({".", "source", "eval"})


def builtin(argv: list[str], shell: Shell) -> bool:
    """Apply what a builtin does to the shell's parameters; True for ``set --`` and
    ``shift``, which run nothing (not a command to read). ``set -- WORDS`` sets the
    positional parameters (POSIX 2.14 set), ``shift [n]`` drops the first n; ``.``,
    ``source`` and ``eval`` (whose text is not read) leave every later expansion
    unsettled; ``read NAME…`` sets its names from input."""
    name = argv[0]
    if name == "set" and len(argv) > 1 and argv[1] == "--":
        shell.positional = argv[2:]
        shell.positional_why = None
        shell.fresh.add("@")
        return True
    if name == "shift":
        count = argv[1] if len(argv) > 1 else "1"
        if shell.positional is not None and count.isdigit():
            shell.positional = shell.positional[int(count) :]
        else:
            if shell.positional is not None:  # arguments the script set: its own doing
                shell.positional_why = (
                    f"the arguments `set --` gave, shifted by `shift {count[:20]!r}`, "
                    "which specgate does not follow"
                )
            shell.positional = None
        return True
    if name in _OPAQUE_COMMANDS:
        shell.obscure(f"`{' '.join(argv[:2])[:80]}`")
    elif name == "read":
        for word in argv[1:]:
            if _ASSIGN_RE.match(word + "=") and not word.startswith("-"):
                shell.tainted[word] = (
                    f"{word} is set by `read` from the script's input",
                    True,
                    None,
                )
                shell.values.pop(word, None)
                shell.fresh.add(word)
    return False


def closes_array(parts: Segments | None, *, opening: bool) -> bool:
    """Whether a word of an array assignment ends it (its last part unquoted and
    ending with ``)``; in the opening word, past the ``NAME=(``)."""
    if not parts or parts[-1][1] != 0 or not parts[-1][0].endswith(")"):
        return False
    if opening and len(parts) == 1:
        return parts[0][0].index("(") < len(parts[0][0]) - 1
    return True


def assign_array(
    words: list[str], segments: list[Segments | None], first: int, shell: Shell
) -> int:
    """Assign the bash array ``NAME=( … )`` (``+=`` appends) starting at word
    ``first``: each element word expanded and split as a command's words are (bash
    "Arrays"). Returns the index of the word after the closing ``)``."""
    match = ARRAY_RE.match(words[first])
    assert match is not None
    name, append = match.group(1), bool(match.group(2))
    items: list[str] = []
    tainted = False
    index = first
    while index < len(words):
        parts = list(segments[index] or ((words[index], 0),))
        if index == first:
            parts = list(dropped(tuple(parts), match.end()))
        closing = closes_array(segments[index], opening=False) and (
            index > first or (bool(parts) and parts[-1][1] == 0 and parts[-1][0].endswith(")"))
        )
        if closing:
            parts[-1] = (parts[-1][0][:-1], 0)
        word = "".join(text for text, _ in parts)
        shell.clear()
        if word:
            items.extend(shell.fields(word, tuple(parts)))
        tainted = tainted or bool(shell.hits)
        index += 1
        if closing:
            break
    shell.clear()
    shell.arrays[name] = [*shell.arrays.get(name, []), *items] if append else items
    shell.values.pop(name, None)
    if not append:  # appended to what a command not followed may have set: still hidden
        shell.fresh.add(name)
    if tainted:
        why = f"the array {name} holds words this text does not settle"
        shell.tainted[name] = (why, True, None)
    else:
        shell.tainted.pop(name, None)
    return index


def dropped(parts: Segments, skip: int) -> Segments:
    """``parts`` without their first ``skip`` characters."""
    rest: list[tuple[str, int]] = []
    for text, kind in parts:
        if skip >= len(text):
            skip -= len(text)
            continue
        rest.append((text[skip:], kind))
        skip = 0
    return tuple(rest)


_BRACED_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-=+?])(.*))?\}", re.DOTALL)
_IFS_RE = re.compile(r"[ \t\n]+")
