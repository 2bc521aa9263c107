"""What a shell script runs conditionally, in a subshell or through a builtin that
sets variables, as :mod:`specgate.inputs.cmdline` must follow it (bash, dash: the
interpreters are the oracle, issue 25).

specgate follows a variable exactly only where the shell does the same on every path:
a plain ``NAME=value`` (or ``export NAME=value``) at the top level of the script, run
unconditionally in the script's own shell. Everything else that may set a variable
leaves it *unsettled* (its later use is a hit, :class:`~specgate.inputs.shell_params.Shell`):

- an assignment inside a compound command (``if``/``while``/``until``/``for``/
  ``case``/``{ }``/``( )``) or a function body, after ``&&``/``||``, in a pipeline or
  in the background, or behind ``time``/``!`` (bash runs ``time NAME=v`` in the
  script's shell, dash as a command);
- the builtins ``declare``/``typeset``/``local``/``readonly``/``export -…``,
  ``printf -v``, ``read``, ``mapfile``/``readarray``, ``unset``, ``let``, ``(( ))``,
  ``getopts``; an assignment to a ``readonly`` name; a prefix assignment to a special
  builtin or a function (``NAME=v :`` persists in dash, not in bash);
- ``IFS`` set to anything (the fields of every later unquoted expansion are then not
  split as specgate splits them); ``set`` with positional words other than ``set --``.

A function or alias named like a program (``vllm() { command vllm "$@" --x; }``,
``alias vllm=…``) redefines what that program's later commands run: their words are
unsettled at the end (:meth:`Flow.redefined_hit`).
"""

from __future__ import annotations

import re

from specgate.inputs.shell_params import Hit, Segments, Shell

#: a script's command word that runs no engine: a flag, an engine's Python module
#: (a line a backslash did not join to ``python -m``)
_NO_PROGRAM_RE = re.compile(r"\Z|-|(?:sglang|vllm|tensorrt_llm)\.[A-Za-z_.]+$")

_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*")
_FUNCTION_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_.:-]*)\(\)$")
_OPENERS = frozenset({"if", "while", "until", "for", "select", "case", "{", "("})
_CLOSERS = frozenset({"fi", "done", "esac", "}", ")"})
#: reserved words after which a command starts, changing nothing of the depth
_KEYWORDS = frozenset({"then", "else", "elif", "do", "in", "!", "time", "-p"})
_SPECIAL = frozenset(
    {
        ":",
        ".",
        "break",
        "continue",
        "eval",
        "exec",
        "exit",
        "export",
        "readonly",
        "return",
        "set",
        "shift",
        "times",
        "trap",
        "unset",
        "source",
    }
)
_DECLARING = frozenset({"declare", "typeset", "local", "readonly"})
_READING = frozenset({"read", "mapfile", "readarray", "getopts", "unset", "let", "(("})
_DECLARERS = _DECLARING | {"export"}
#: a declaring builtin's word naming its variable as written (``NAME``, ``NAME=…``,
#: ``NAME+=…``, ``NAME[i]=…``)
_NAMED_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\+?=|\[|$)")


def _plain(word: str, parts: Segments | None) -> bool:
    """Whether ``word`` was written unquoted (a reserved word is only then one)."""
    return parts is None or all(kind == 0 for _, kind in parts)


class Flow:
    """The nesting of one script's compound commands and what it redefined."""

    def __init__(self, *, script: bool = False) -> None:
        #: the text is a script a shell runs (not a command line of a text file)
        self.script = script
        self.depth = 0
        #: the next command runs only on some paths (after ``&&``/``||``/``|``)
        self.after_operator = False
        #: programs a function or alias of the script redefines
        self.redefined: set[str] = set()
        self.readonly: set[str] = set()
        #: per open function body: (the depth it closes at, the positional it hides, and
        #: why they are not known)
        self._bodies: list[tuple[int, list[str] | None, str | None]] = []
        self._function_pending = False
        #: ``case`` commands open (their patterns may start a command's words)
        self._cases = 0
        #: per open compound command: whether the script's arguments alone choose the
        #: path through it (a ``getopts`` loop, ``while [ $# -gt 0 ]``, ``for a in "$@"``,
        #: ``case "$1" in``), and the names that hold an argument there (``opt``)
        self._driven: list[bool] = []
        #: the next word of an open ``case`` is a pattern (after ``in`` or ``;;``)
        self._expect_pattern = False
        self._arguments: set[str] = set()
        #: the command entered last runs on some paths only, and its caller's arguments
        #: alone choose them (what it assigns is then the caller's, docs/engines.md)
        self.caller_chosen = False

    def enter(
        self, words: list[str], segments: list[Segments | None], shell: Shell, separator: str
    ) -> tuple[int, int, bool]:
        """Strip the reserved words around one command's words: (its first word, the
        word after its last, whether it runs only on some paths or in a subshell).
        ``separator`` is what ends it (``&&``, ``|``, a newline, "")."""
        first, last = 0, len(words)
        conditional = self.after_operator or self.depth > 0
        chosen = not conditional or (not self.after_operator and all(self._driven))
        self.after_operator = False
        while first < last and _plain(words[first], segments[first]):
            word = words[first]
            if self._expect_pattern and self._pattern(word):
                pass  # `d)`, `(d)`, `--d=*)`: an item's pattern, then its commands
            elif word in _OPENERS or (word.startswith("(") and not word.startswith("((")):
                self._open(shell, self._by_arguments(words[first:last], shell))
                if word == "case":  # case WORD in: then patterns (`x)`) and commands
                    first += 2
                    self._cases += 1
            elif word in _CLOSERS:
                self._close(shell)
                self._cases -= word == "esac" and self._cases > 0
            elif word == "function" and first + 1 < last:
                self._define(words[first + 1])
                first += 1
            elif _FUNCTION_RE.match(word) or (first + 1 < last and words[first + 1] == "()"):
                self._define(word.removesuffix("()"))
                first += 0 if word.endswith("()") else 1
            elif word not in _KEYWORDS and not self._pattern(word):
                break
            if word in ("time", "!"):
                conditional, chosen = True, False
            conditional = conditional or self.depth > 0
            first += 1
        while last > first and _plain(words[last - 1], segments[last - 1]):
            if words[last - 1] not in (")", "}") or not self.depth:
                break
            self._close(shell)
            last -= 1
        ops = separator.strip(" \t\n")
        if ops.startswith((";;", ";&")) and self._cases > 0:
            self._expect_pattern = True  # the next item's pattern (bash: ;; ;& ;;&)
        if "&&" in ops or "||" in ops:
            self.after_operator = True
        elif "|" in ops or (ops.startswith("&") and not ops.startswith("&&")):
            conditional, chosen = True, False  # a pipeline's part or a background job
            self.after_operator = "|" in ops
        self.caller_chosen = conditional and chosen and all(self._driven)
        return first, last, conditional

    def _by_arguments(self, words: list[str], shell: Shell) -> bool:
        """Whether the compound command ``words`` opens takes its path from the script's
        arguments alone: ``while getopts …`` (whose names then hold an argument),
        ``while``/``until`` testing ``$#``, ``for NAME in "$@"`` (or ``for NAME``), ``case``
        of ``$1`` or of a name holding an argument."""
        opener, rest = words[0], words[1:]
        # the arguments are the caller's only where the script never set them itself
        own = shell.positional is None and shell.positional_why is None
        own = own and not shell.hidden("@")
        if opener in ("while", "until") and rest and own:
            if rest[0] == "getopts" and len(rest) == 3:  # from the script's own arguments
                self._arguments.update((rest[2], "OPTARG"))
                return True
            return any("$#" in word for word in rest)
        if opener == "for" and rest and _NAME_RE.fullmatch(rest[0]):
            # the loop sets its name to each word in turn (bash "Looping Constructs")
            driven = own and (
                len(rest) == 1 or rest[1:2] == ["do"] or (
                    rest[1] == "in" and len(rest) > 2
                    and all(w in ("$@", "$*") for w in rest[2:])
                )
            )
            if driven:
                self._arguments.add(rest[0])
                self.settle(shell, rest[0], "is set by `for` to each of the script's "
                            "arguments (its caller's)", from_file=False)
            else:
                self.settle(shell, rest[0], "is set by a `for` loop")
            return driven
        if opener == "case" and rest:
            self._expect_pattern = True
            subject = rest[0].removeprefix("$").strip("{}")
            environment = (  # a name the script never sets: its environment's
                rest[0].startswith("$") and _NAME_RE.fullmatch(subject) is not None
                and not shell.hidden(subject)
                and all(subject not in d for d in (shell.values, shell.tainted, shell.arrays))
            )
            return (subject == "1" and own) or subject in self._arguments or environment
        return False

    def _pattern(self, word: str) -> bool:
        """Whether ``word`` is a pattern of an open ``case`` (``x)``, ``*)``), not a
        command word ending in ``)`` (``SPEC=$(cat f)``)."""
        pattern = (
            self._cases > 0
            and word.endswith(")")
            and (self._expect_pattern or not any(mark in word for mark in ("=", "$(", "`")))
        )
        self._expect_pattern = self._expect_pattern and not pattern
        return pattern

    def _open(self, shell: Shell, driven: bool = False) -> None:
        self._driven.append(driven)
        if self._function_pending:
            self._function_pending = False
            self._bodies.append((self.depth, shell.positional, shell.positional_why))
            shell.positional = None  # "$@" in a body is the function's arguments
            # ... which the script's own call of it passes: the repository's
            shell.positional_why = "the arguments of a function, passed by its caller"
        self.depth += 1

    def _close(self, shell: Shell) -> None:
        self.depth = max(self.depth - 1, 0)
        del self._driven[self.depth :]
        if self._bodies and self._bodies[-1][0] == self.depth:
            _, shell.positional, shell.positional_why = self._bodies.pop()

    def _define(self, name: str) -> None:
        self.redefined.add(name)
        self._function_pending = True

    def no_program(self, argv: list[str], unresolved: dict[int, Hit]) -> bool:
        """True where a script's line runs no program ("--flag", "sglang.launch_server");
        a program word that is not settled is marked in ``unresolved``."""
        if self.script and 0 not in unresolved and _NO_PROGRAM_RE.match(argv[0]):
            return True
        if self.script and 0 in unresolved:
            flags = (i for i, w in enumerate(argv) if w.startswith("-") and w != "-m")
            if all(i in unresolved for i in range(next(flags, len(argv)))):
                what = f"`{argv[0][:60]}`: the program this command runs is not settled"
                unresolved.setdefault(len(argv), (what, True, True))
        return False

    def redefined_hit(self, program: str) -> Hit | None:
        """A hit for a command whose program the script redefined, else None."""
        if program not in self.redefined:
            return None
        what = (
            f"`{program}` is redefined in this script (a function or alias): what the "
            "command runs is not read"
        )
        return (what, True, True)

    def settle(self, shell: Shell, name: str, why: str, *, from_file: bool = True) -> None:
        """Leave ``name`` unsettled: what it holds depends on ``why`` (``from_file``
        False: on the deployment alone, the script's arguments or environment)."""
        shell.tainted[name] = (f"{name} {why}", from_file, None)
        shell.values.pop(name, None)
        shell.arrays.pop(name, None)
        shell.fresh.add(name)  # its own reason, not what an earlier command hid
        if name == "IFS":
            shell.ifs_changed = True

    def assigns(self, argv: list[str], shell: Shell, prefix: list[str]) -> None:
        """Follow what the builtin ``argv`` (a command's expanded words) does to the
        variables: every name it may set is unsettled; ``prefix`` names its
        ``NAME=value`` prefixes (kept by a special builtin or function in dash)."""
        while argv and argv[0] in ("command", "builtin"):
            argv = argv[1:]
        if not argv:
            return
        program = argv[0]
        if prefix and (program in _SPECIAL or program in self.redefined):
            for name in prefix:
                self.settle(shell, name, f"is set before `{program}` (kept by some shells)")
        names = [m.group() for w in argv[1:] if (m := _NAME_RE.match(w)) is not None]
        if program in _DECLARING or (
            program == "export" and any(w.startswith(("-", "+")) for w in argv[1:])
        ):
            for name in names:
                self.settle(shell, name, f"is set by `{program}`")
                if program == "readonly" or "-r" in argv[1:]:
                    self.readonly.add(name)
        elif program == "getopts" and len(argv) == 3 and _NAME_RE.fullmatch(argv[2]):
            for name in (argv[2], "OPTARG"):  # from the script's arguments: its caller's
                self.settle(shell, name, "is set by `getopts` from the script's arguments "
                            "(its caller's)", from_file=False)
        elif program in _READING or program.startswith("(("):
            for name in names or ["MAPFILE", "REPLY"]:
                self.settle(shell, name, f"is set by `{program}`")
            for word in argv[1:]:  # (( D = 3 + 4 )), let D=7
                for name in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", word):
                    self.settle(shell, name, f"is set by `{program}`")
        elif program == "printf":
            for index, word in enumerate(argv[1:-1], start=1):
                if word == "-v":
                    self.settle(shell, argv[index + 1], "is set by `printf -v`")
                elif word.startswith("-v") and len(word) > 2:
                    self.settle(shell, word[2:], "is set by `printf -v`")
        elif program == "alias":
            for word in argv[1:]:
                self.redefined.add(word.partition("=")[0])
        elif program == "set" and len(argv) > 1 and argv[1] != "--":
            self._set_options(argv[1:], shell)

    def declares(
        self, program: str, words: list[str], segments: list[Segments | None], shell: Shell
    ) -> None:
        """``export $(grep -v '^#' .env | xargs)``, ``declare "$N=7"``, ``export
        "$line"``: a declaring builtin's argument whose name is not written as is sets
        the ``NAME=value`` words its expansion gives (bash "Bash Builtins": the words
        are expanded, then read as assignments). The names a settled expansion gives
        are unsettled; one not settled may set any name (:meth:`Shell.obscure`)."""
        if program not in _DECLARERS:
            return
        for word, parts in zip(words, segments, strict=True):
            if _NAMED_RE.match(word) or not ("$" in word or "`" in word):
                continue  # a name as written (read already), an option or a plain word
            shell.clear()
            fields = shell.fields(word, parts)
            if shell.hits:
                shell.obscure(f"`{program} {word[:60]}`")
            else:
                for field in fields:
                    named = _NAMED_RE.match(field)
                    if named is not None:
                        name = named.group().rstrip("+=[")
                        self.settle(shell, name, f"is set by `{program}` through an expansion")
            shell.clear()

    @staticmethod
    def _set_options(words: list[str], shell: Shell) -> None:
        """``set -e``, ``set -o pipefail`` change no parameter; any other word after
        the options (``set a b``, ``set -e -- a``) sets the positional parameters."""
        index = 0
        while index < len(words):
            word = words[index]
            if word in ("-o", "+o"):
                index += 2
                continue
            if not word.startswith(("-", "+")) or word in ("--", "-"):
                shell.positional = None
                shell.positional_why = "the arguments `set` gives them, not followed"
                return
            index += 1
