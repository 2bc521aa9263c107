"""Launcher scripts generated from a grammar of the forms a shell script may use to
set, re-set or hide an engine's speculative flags (issue 25: re-assignment builtins,
compound commands, control flow, sourcing and command substitution, word splitting
with ``IFS``, line joining, aliases and functions), each ending in one engine command
(``vllm serve``, ``python3 -m sglang.launch_server`` or ``llama-server``) whose
speculative flags some of those statements feed. The interpreter is the oracle
(:mod:`tests.oracle.shell_oracle`): whatever bash (and dash, for scripts of the POSIX
subset) passes to the engine is what specgate must read, or it must say the value is
unsettled.

A :class:`Case` is the script, the files beside it (what ``. ./spec.env`` and
``$(cat spec.json)`` read) and whether it is POSIX (dash runs it too). Generation is
pure: the same seed gives the same cases.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Case:
    """One generated launcher: ``script`` (serve.sh), ``files`` beside it, ``posix``
    (dash runs it as well as bash) and the engine its last command launches."""

    script: str
    files: dict[str, str] = field(default_factory=dict)
    posix: bool = True
    engine: str = "vllm"


def spec(n: int) -> str:
    """A vLLM ``--speculative-config`` JSON of draft length ``n``."""
    return f'{{"method":"eagle3","model":"y","num_speculative_tokens":{n}}}'


def sq(text: str) -> str:
    """``text`` single-quoted (no value here holds a single quote)."""
    return "'" + text + "'"


class _Gen:
    """One script's generation state: the random source, the engine, and whether a
    bash-only form was used."""

    def __init__(self, rng: random.Random, engine: str) -> None:
        self.rng = rng
        self.engine = engine
        self.posix = True
        self.files: dict[str, str] = {}

    def pick(self, *choices: str) -> str:
        return self.rng.choice(choices)

    def n(self) -> int:
        return self.rng.choice((2, 3, 4, 5, 6, 7, 9))

    def bash(self, text: str) -> str:
        self.posix = False
        return text

    # --- values ------------------------------------------------------------------

    def value(self, var: str) -> str:
        """A value for ``var`` that changes what the engine runs."""
        n = self.n()
        if var == "SPEC":
            return spec(n)
        if var == "D":
            return str(n)
        if var == "EXTRA":
            return self.extra(n)
        return str(n)

    def extra(self, n: int) -> str:
        if self.engine == "vllm":
            return "--speculative-config " + spec(n)
        if self.engine == "sglang":
            return f"--speculative-num-steps {n}"
        return f"--draft-max {n}"

    # --- statements that may set a variable --------------------------------------

    def setter(self, var: str) -> str:
        """One statement that may (or may not) set ``var``."""
        val = self.value(var)
        forms: list[Callable[[], str]] = [
            lambda: f"{var}={sq(val)}",
            lambda: f"export {var}={sq(val)}",
            lambda: self.bash(
                f"{self.pick('declare', 'typeset', 'declare -x', 'declare -g')} {var}={sq(val)}"
            ),
            lambda: f"readonly {var}={sq(val)}",
            lambda: f"local {var}={sq(val)}",
            lambda: self.bash(f"printf -v {var} '%s' {sq(val)}"),
            lambda: f"read -r {var} <<'EOF'\n{val}\nEOF",
            lambda: self.bash(f"read -r {var} <<< {sq(val)}"),
            lambda: self._file_read(var, val),
            lambda: self.bash(f"mapfile -t {var} <<'EOF'\n{val}\nEOF"),
            lambda: self._append(var),
            lambda: (
                f"time {var}={sq(val)}"
                if self.rng.random() < 0.5
                else self.bash(f"time {var}={sq(val)}")
            ),
            lambda: (
                f"{self.pick('>/dev/null', '2>/dev/null', '</dev/null', '2>&1')} {var}={sq(val)}"
            ),
            lambda: f"unset {self.pick('', '-v ')}{var}",
            lambda: self._sourced(var, val),
            lambda: self._substituted(var, val),
            lambda: (
                f"eval {var}={sq(val)}" if self.rng.random() < 0.5 else f'eval "{var}={sq(val)}"'
            ),
            lambda: f"{var}={sq(val)} {self.pick('true', ':', 'export ' + var, 'eval true')}",
            lambda: f"{var}=${{{var}:-{val if var == 'D' else sq(val)}}}",
            lambda: f": ${{{var}:={val}}}" if var == "D" else f"{var}={sq(val)}",
            lambda: self._arith(var),
            lambda: f"set -a; {var}={sq(val)}; set +a",
            lambda: f"{var}={sq(val)}; readonly {var}",
        ]
        return self.rng.choice(forms)()

    def _file_read(self, var: str, val: str) -> str:
        self.files["spec.val"] = val + "\n"
        return (
            f"IFS= read -r {var} < spec.val"
            if self.rng.random() < 0.5
            else f"read {var} < ./spec.val"
        )

    def _append(self, var: str) -> str:
        if var == "EXTRA":
            return (
                f"{var}+={sq(' ' + self.extra(self.n()))}"
                if self.rng.random() < 0.7
                else self.bash(f"{var}+=({sq(self.extra(self.n()))})")
            )
        if var == "D":
            return self.bash(f"{var}+={self.rng.choice((1, 2))}")
        return self.bash(f"{var}+={sq(' ')}")

    def _sourced(self, var: str, val: str) -> str:
        self.files["spec.env"] = f"{var}={sq(val)}\n"
        form = self.pick(". ./spec.env", 'eval "$(cat spec.env)"', ". spec.env", "source")
        return self.bash("source ./spec.env") if form == "source" else form

    def _substituted(self, var: str, val: str) -> str:
        self.files["spec.json"] = val + "\n"
        return self.pick(
            f"{var}=$(cat spec.json)",
            f"{var}=`cat spec.json`",
            f'{var}="$(cat spec.json)"',
            f"{var}=$(< spec.json)",
        )

    def _arith(self, var: str) -> str:
        if var != "D":
            return f"{var}={sq(self.value(var))}"
        a, b = self.rng.choice(((3, 4), (2, 3), (1, 4)))
        return self.pick(
            f"{var}=$(({a}+{b}))",
            self.bash(f"declare -i {var}={a}+{b}"),
            self.bash(f"let {var}={a}+{b}"),
            self.bash(f"(( {var} = {a} + {b} ))"),
        )

    # --- statements around the setters -------------------------------------------

    def statement(self, var: str, depth: int = 0) -> str:
        """A setter, possibly inside a compound command or behind control flow."""
        roll = self.rng.random()
        if depth > 1 or roll < 0.45:
            return self.setter(var)
        inner = self.statement(var, depth + 1)
        other = self.statement(var, depth + 1)
        nl = self.pick("; ", "\n")
        forms: list[Callable[[], str]] = [
            lambda: f"if true{nl}then {inner}{nl}fi",
            lambda: f"if false{nl}then {inner}{nl}fi",
            lambda: f'if [ -n "$DEBUG" ]{nl}then {inner}{nl}else {other}{nl}fi',
            lambda: f"{{ {inner}{nl}}}",
            lambda: f"( {inner} )",
            lambda: f"for i in 1{nl}do {inner}{nl}done",
            lambda: f"while false{nl}do {inner}{nl}done",
            lambda: f"case x in x) {inner};; esac",
            lambda: f"case x in y) {inner};; *) {other};; esac",
            lambda: f"f() {{ {inner}{nl}}}{nl}f",
            lambda: f"f() {{ {inner}{nl}}}",
            lambda: f"false && {inner}",
            lambda: f"true && {inner}",
            lambda: f"true || {inner}",
            lambda: f"false || {inner}",
            lambda: f'[ -n "$DEBUG" ] && {inner}',
            lambda: f'[ -z "$DEBUG" ] || {inner}',
            lambda: f"{inner} &\nwait",
            lambda: f"echo x | {inner}",
            lambda: f"cat >/dev/null <<'EOF'\n{inner}\nEOF",
            lambda: f"# {inner}",
            lambda: f": '\n{inner}\n'",
            lambda: self.bash(f"function f {{ {inner}{nl}}}{nl}f"),
            lambda: self.bash(f"[[ -n $DEBUG ]] && {inner}"),
        ]
        return self.rng.choice(forms)()

    # --- the engine command --------------------------------------------------------

    def flags(self, n: int) -> list[str]:
        """The engine's speculative flags for draft length ``n``, as literal words."""
        if self.engine == "vllm":
            return ["--speculative-config", sq(spec(n))]
        if self.engine == "sglang":
            return [
                "--speculative-algorithm",
                "EAGLE",
                "--speculative-draft-model-path",
                "d",
                "--speculative-num-steps",
                str(n),
                "--speculative-eagle-topk",
                "1",
            ]
        return ["-md", "d.gguf", "--draft-max", str(n)]

    def program(self) -> list[str]:
        if self.engine == "vllm":
            return ["vllm", "serve", "m"]
        if self.engine == "sglang":
            return ["python3", "-m", "sglang.launch_server", "--model-path", "m"]
        return ["llama-server", "-m", "m.gguf"]

    def uses(self) -> tuple[str, list[str]]:
        """(the variable the command reads, the words that read it)."""
        form = self.rng.randrange(6)
        if form in (0, 4) and self.engine == "vllm":
            return "SPEC", ["--speculative-config", self.pick('"$SPEC"', "$SPEC", '"${SPEC}"')]
        if form == 0:
            key = "--speculative-num-steps" if self.engine == "sglang" else "--draft-max"
            return "D", [*self.flags(self.n())[:-2], key, self.pick('"$D"', "$D", "${D}")]
        if form == 1:
            return "EXTRA", [*self.flags(self.n()), self.pick("$EXTRA", "${EXTRA}", '"$EXTRA"')]
        if form == 2:
            return "ARGS", [
                *self.flags(self.n()),
                self.bash(self.pick('"${ARGS[@]}"', "${ARGS[@]}", "$ARGS")),
            ]
        if form == 3:
            return "@", [*self.flags(self.n()), self.pick('"$@"', "$@", "$*", '"$1" "$2"')]
        if form == 4 and self.engine != "vllm":
            return "D", [*self.flags(self.n())[:-1], self.pick('"${D:-3}"', "${D-4}", "${D:+5}")]
        return "", self.flags(self.n())

    def joint(self) -> str:
        """What stands between two words of the command: a blank, or a line joining
        that bash does (or does not) do."""
        if self.rng.random() < 0.7:
            return " \\\n  "
        return self.pick(
            " \\\n  ",
            " \\\n# a comment\n  ",
            " \\\n\n  ",
            " \\ \n  ",
            " \\\\\n  ",
            " \\  \n  ",
            "\t\\\n\t",
            " \\\n  # note\n  ",
            "\n  ",
        )

    def command(self, words: list[str]) -> str:
        style = self.rng.random()
        out = words[0]
        for word in words[1:]:
            out += (" " if style < 0.5 else self.joint()) + word
        return out

    def setup(self, var: str) -> list[str]:
        """Statements before the command: a first value, then re-settings."""
        lines: list[str] = []
        if var == "@":
            extra = self.extra(self.n()).split()
            lines.append("set -- " + " ".join(sq(w) if "{" in w else w for w in extra))
            if self.rng.random() < 0.3:
                lines.append(self.pick("shift", "shift 2", "set --", self.bash("shift 0")))
            return lines
        if var == "ARGS":
            lines.append(f"ARGS=({' '.join(sq(w) for w in self.extra(self.n()).split())})")
            for _ in range(self.rng.randrange(3)):
                lines.append(
                    self.pick(
                        f"ARGS+=({' '.join(sq(w) for w in self.extra(self.n()).split())})",
                        "mapfile -t ARGS <<'EOF'\n"
                        + "\n".join(self.extra(self.n()).split())
                        + "\nEOF",
                        f"ARGS=({sq(self.extra(self.n()))})",
                        "unset ARGS",
                        f"declare -a ARGS=({' '.join(self.extra(self.n()).split())})",
                        f"ARGS[1]={sq(spec(self.n()) if self.engine == 'vllm' else str(self.n()))}",
                    )
                )
            return lines
        if not var:
            return [self.statement(self.pick("SPEC", "D", "EXTRA")) for _ in range(2)]
        if self.rng.random() < 0.8:
            lines.append(f"{var}={sq(self.value(var))}")
        for _ in range(self.rng.randrange(1, 4)):
            lines.append(self.statement(var))
        if var == "EXTRA" and self.rng.random() < 0.3:
            sep = self.pick("@", ",", ":")
            lines.append(f"IFS={sep}" if self.rng.random() < 0.8 else "unset IFS")
            lines.append(f"EXTRA={sq(sep.join(self.extra(self.n()).split()))}")
        return lines

    def wrapper(self) -> list[str]:
        """A line that changes what the engine's name runs (an alias, a function)."""
        name = self.program()[0]
        more = " ".join(self.flags(self.n()))
        return [
            self.pick(
                f"alias {name}='{name} {more.replace(chr(39), '')}'",
                f'{name}() {{ command {name} "$@" {more}; }}',
                f"alias {name}='echo'",
                f"shopt -s expand_aliases\nalias {name}='{name} {more.replace(chr(39), '')}'",
            )
        ]


def generate(seed: int) -> Case:
    """The launcher of ``seed`` (the same seed, the same case)."""
    rng = random.Random(seed)
    engine = rng.choice(("vllm", "vllm", "vllm", "sglang", "llamacpp"))
    gen = _Gen(rng, engine)
    var, words = gen.uses()
    lines = gen.setup(var)
    if rng.random() < 0.08:
        lines.extend(gen.wrapper())
    shebang = "#!/bin/sh\n" if rng.random() < 0.5 else "#!/bin/bash\n"
    tail = gen.pick("", "", " " + " ".join(gen.flags(gen.n())), " --port 8000")
    lines.append(gen.command([*gen.program(), *words]) + tail)
    text = shebang + "\n".join(lines) + "\n"
    if rng.random() < 0.06:
        text = text.replace("\n", "\r\n")
    return Case(text, dict(gen.files), gen.posix, engine)
