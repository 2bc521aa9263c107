"""The image a Compose service's ``build:`` makes: the base image of the stage built and
the engine pins its ``RUN`` lines install (docs/engines.md#built-images).

Read as BuildKit reads a Dockerfile (Dockerfile reference, docs.docker.com/reference/
dockerfile/: "Parser directives", "Environment replacement", "Understand how ARG and FROM
interact", ARG, ENV, FROM, COPY, WORKDIR):

* lines joined as they are at a trailing ``\\`` (not ``\\\\``), comment and empty lines
  inside dropped, instructions case-insensitive;
  an ``escape`` directive other than ``\\`` is not read;
* ``$X``, ``${X}``, ``${X:-word}`` and ``${X:+word}`` replaced; an ARG declared before the
  first FROM is in scope for FROM only, and inside a stage after ``ARG X`` (its value
  carried in); ENV beats an ARG of the same name; a Compose ``build.args`` value replaces
  a declared ARG's default;
* the stage built is the last, or the one ``target`` names (stage names compare without
  case); a FROM naming an earlier stage continues it (its ENV, WORKDIR and files).

Settled only where the build is: a variable with no value (an ARG without default or
build arg, a ``build.args`` entry Compose takes from the process environment, a name the
Dockerfile does not set, which the base image's ENV may), a platform argument
(``TARGETARCH``: the machine's), other expansion forms, and a heredoc that mentions the
engine package are *unsettled*: the version is then unknown, never guessed. ``COPY``
sources stay inside the build context (a ``..`` above it is refused by the legacy builder
and stripped by BuildKit: unsettled); ``pip install -r FILE`` reads FILE only where a
COPY from the context put it at that path.
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

#: A variable whose value the build does not settle (from the process environment, an
#: unsettled interpolation); ``None`` in a scope is an ARG declared with no value.
UNSET = "\0unset"
_PLATFORM = frozenset(
    f"{p}{part}" for p in ("TARGET", "BUILD") for part in ("PLATFORM", "OS", "ARCH", "VARIANT")
)
_REF = re.compile(
    r"\\\$|\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?:(:[-+])([^}$]*))?\}|([A-Za-z_][A-Za-z0-9_]*))"
)
#: BuildKit's continuation: the escape character ending a line, not itself escaped, and
#: the lines joined as they are (moby/buildkit frontend/dockerfile/parser/parser.go@ca4838f8
#: ``lineContinuationRegex``, ``trimContinuationCharacter``, ``line += continuationLine``)
_CONTINUATION = re.compile(r"(?:(?<=[^\\])|^)\\[ \t]*$")
_HEREDOC = re.compile(r"<<-?[\"']?([A-Za-z_][A-Za-z0-9_]*)[\"']?")
MAX_INSTRUCTIONS = 2048


class Unsettled(Exception):
    """A value the build does not settle; ``str(exc)`` says why."""


@dataclass(frozen=True)
class Run:
    """A RUN line: its words (exec form) or shell text, the variables it sees, its
    WORKDIR, and the files COPY had put in the stage by then."""

    line: int
    command: list[str] | str
    scope: dict[str, str | None]
    workdir: str | None
    stage_files: list[tuple[str | None, Path | None, bool]]
    copied: int  # how many of ``stage_files`` a COPY had put there by this line

    @property
    def files(self) -> list[tuple[str | None, Path | None, bool]]:
        """The files COPY had put in the stage by this line."""
        return self.stage_files[: self.copied]


@dataclass
class Stage:
    """One build stage: its FROM line, base as written and name, and what it leaves: its
    ENV, WORKDIR (None: the base image's, not known), the files COPY put in it (container
    path → context path, None where not known, and whether it is a folder) and its RUN
    lines with the variables they see; a stage continuing another starts from its state
    (its ARGs end with it)."""

    line: int
    base: str
    name: str | None
    args: dict[str, str | None] = field(default_factory=dict)
    env: dict[str, str | None] = field(default_factory=dict)
    workdir: str | None = None
    files: list[tuple[str | None, Path | None, bool]] = field(default_factory=list)
    runs: list[Run] = field(default_factory=list)
    #: the ENTRYPOINT the stage's chain sets (exec form: its words; shell form: its
    #: text, which runs as ``/bin/sh -c`` and takes no arguments); None: the base image's
    entrypoint: list[str] | str | None = None

    def visible(self) -> dict[str, str | None]:
        """The variables its instructions see: ENV over ARG."""
        return {**self.args, **self.env}


@dataclass(frozen=True)
class Instruction:
    line: int
    keyword: str
    rest: str
    heredoc: str = ""


def instructions(text: str) -> list[Instruction]:
    """The Dockerfile's instructions.

    Raises:
        Unsettled: an ``escape`` directive other than ``\\``, or too many instructions.
    """
    lines = text.splitlines()
    for raw in lines:  # parser directives: comment lines of the form ``# key=value`` at the top
        directive = re.match(r"^\s*#\s*([A-Za-z]+)\s*=\s*(\S*)\s*$", raw)
        if directive is None:
            break
        if directive.group(1).lower() == "escape" and directive.group(2) != "\\":
            raise Unsettled(f"escape directive {directive.group(2)!r}")
    out: list[Instruction] = []
    i = 0
    while i < len(lines):
        start, parts = i + 1, list[str]()
        while i < len(lines):
            line = lines[i]
            i += 1
            if parts and (not line.strip() or line.lstrip().startswith("#")):
                continue  # inside a continuation: empty and comment lines are dropped
            if not parts and (not line.strip() or line.lstrip().startswith("#")):
                break
            joined = _CONTINUATION.search(line)
            parts.append(line[: joined.start()] if joined else line)
            if not joined:
                break
        if not parts:
            continue
        words = "".join(parts).strip().split(None, 1)
        body = ""
        heredoc = _HEREDOC.search(words[1]) if len(words) > 1 else None
        if heredoc is not None:  # the lines up to the delimiter belong to the instruction
            end = next((j for j in range(i, len(lines))
                        if lines[j].lstrip("\t") == heredoc.group(1)), len(lines))
            body, i = "\n".join(lines[i:end]), end + 1
        out.append(Instruction(start, words[0].upper(), words[1] if len(words) > 1 else "", body))
        if len(out) > MAX_INSTRUCTIONS:
            raise Unsettled(f"more than {MAX_INSTRUCTIONS} instructions")
    return out


def expand(text: str, scope: Mapping[str, str | None]) -> str:
    """``text`` with its variables replaced from ``scope`` (module doc).

    Raises:
        Unsettled: a variable with no settled value, or a form not read.
    """
    def one(match: re.Match[str]) -> str:
        if match.group(0) == "\\$":
            return "$"
        name = match.group(1) or match.group(4)
        if name not in scope or scope[name] == UNSET:
            raise Unsettled(f"${name} is not set in the repository")
        value, form, word = scope[name], match.group(2), match.group(3) or ""
        if form == ":-":
            return value if value else expand(word, scope)
        if value is None:
            raise Unsettled(f"${name} has no default and no build argument")
        if form == ":+":
            return expand(word, scope) if value else ""
        return value

    if re.search(r"\$\{(?![A-Za-z_][A-Za-z0-9_]*(?::[-+][^}$]*)?\})", text):
        raise Unsettled(f"{text!r}: an expansion form not read")
    return _REF.sub(one, text)


def _declare(words: list[str], scope: dict[str, str | None], args: Mapping[str, str],
             outer: Mapping[str, str | None], seen: Mapping[str, str | None]) -> None:
    """``ARG a[=v] b`` into ``scope``: the build argument, else the default (expanded
    with ``seen``), else the value of the same global ARG (``outer``), else no value."""
    for word in words:
        name, eq, default = word.partition("=")
        if name in _PLATFORM:
            scope[name] = UNSET
        elif name in args:
            scope[name] = args[name]
        elif eq:
            scope[name] = _safe(default, {**seen, **scope})
        else:
            scope[name] = outer.get(name)


def _words(rest: str) -> list[str]:
    """An instruction's words as BuildKit splits them; a word that held a ``$`` inside
    single quotes (kept as written by BuildKit, gone once the quotes are stripped) is
    replaced by one of the same name that no value settles."""
    if "'" in rest and "$" in rest:
        return [w.partition("=")[0] + "=${\0}" if "$" in w else w for w in _split(rest)]
    return _split(rest)


def _split(rest: str) -> list[str]:
    try:
        return shlex.split(rest, comments=False, posix=True)
    except ValueError as exc:
        raise Unsettled(f"{rest[:60]!r}: {exc}") from None


def stages(
    text: str, args: Mapping[str, str], context: Path
) -> tuple[list[Stage], dict[str, str | None]]:
    """The stages of a Dockerfile and the global ARG scope; ``args`` the Compose
    ``build.args`` (:data:`UNSET` for a value Compose takes from the environment),
    ``context`` the build context on disk.

    Raises:
        Unsettled: see :func:`instructions`, or a FROM with no image.
    """
    glob: dict[str, str | None] = dict.fromkeys(_PLATFORM, UNSET)
    found: list[Stage] = []
    for ins in instructions(text):
        stage = found[-1] if found else None
        if ins.keyword == "FROM":
            words = [w for w in _words(ins.rest) if not w.startswith("--")]
            if not words:
                raise Unsettled(f"line {ins.line}: FROM with no image")
            name = words[2].lower() if len(words) >= 3 and words[1].lower() == "as" else None
            new = Stage(ins.line, words[0], name)
            parent = next((s for s in reversed(found) if s.name == words[0].lower()), None)
            if parent is not None:  # continues an earlier stage
                new.env, new.workdir = dict(parent.env), parent.workdir
                new.files, new.runs = list(parent.files), list(parent.runs)
                new.entrypoint = parent.entrypoint
            found.append(new)
        elif stage is None:
            if ins.keyword == "ARG":
                _declare(_words(ins.rest), glob, args, {}, glob)
        elif ins.keyword == "ARG":
            _declare(_words(ins.rest), stage.args, args, glob, stage.env)
        elif ins.keyword == "ENV":
            _env(ins.rest, stage)
        elif ins.keyword == "WORKDIR":
            _workdir(ins.rest, stage)
        elif ins.keyword in ("COPY", "ADD"):
            _copy(ins, stage, context)
        elif ins.keyword == "ENTRYPOINT":
            # the last ENTRYPOINT counts (Dockerfile reference, ENTRYPOINT); JSON that
            # is not a list of strings is the shell form, as for RUN
            stage.entrypoint = _run(ins) if not ins.heredoc else ins.rest
        elif ins.keyword == "RUN":
            stage.runs.append(
                Run(ins.line, _run(ins), stage.visible(), stage.workdir, stage.files,
                    len(stage.files))
            )
    return found, glob


def _env(rest: str, stage: Stage) -> None:
    words = _words(rest)
    if len(words) >= 2 and "=" not in words[0]:  # the legacy ``ENV K V`` form
        stage.env[words[0]] = _safe(" ".join(words[1:]), stage.visible())
        return
    for word in words:
        name, _, value = word.partition("=")
        stage.env[name] = _safe(value, stage.visible())


def _safe(value: str, scope: Mapping[str, str | None]) -> str:
    try:
        return expand(value, scope)
    except Unsettled:
        return UNSET


def _workdir(rest: str, stage: Stage) -> None:
    path = _safe(rest.strip(), stage.visible())
    if path == UNSET:
        stage.workdir = None
    elif path.startswith("/"):
        stage.workdir = posixpath.normpath(path)
    elif stage.workdir is not None:
        stage.workdir = posixpath.normpath(posixpath.join(stage.workdir, path))


def _copy(ins: Instruction, stage: Stage, context: Path) -> None:
    """What a COPY or ADD puts where (:attr:`Stage.files`): a file or folder of the
    build context at its container path; anything else (another stage's or image's
    files, a URL, a wildcard, a ``..`` above the context, a destination whose kind is
    not known) marks its destination not known."""
    if ins.rest.lstrip().startswith("["):
        try:
            words = json.loads(ins.rest)
        except ValueError:
            words = None
        if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
            stage.files.append((None, None, True))
            return
    else:
        words = _words(ins.rest)
    flags = [w for w in words if w.startswith("--")]
    words = [w for w in words if not w.startswith("--")]
    if len(words) < 2:
        return
    dest = _safe(words[-1], stage.visible())
    if dest == UNSET or (not dest.startswith("/") and stage.workdir is None):
        stage.files.append((None, None, True))
        return
    folder = dest.endswith("/") or dest == "." or len(words) > 2
    dest = posixpath.normpath(posixpath.join(stage.workdir or "/", dest))
    plain = not any(f.startswith(("--from", "--parents")) for f in flags)
    for source in words[:-1]:
        path = _safe(source, stage.visible())
        on_disk = context_file(context, path) if plain and path != UNSET else None
        if on_disk is None or re.search(r"[*?\[]|://", path) or not on_disk.exists():
            stage.files.append((dest, None, True))
        elif on_disk.is_dir():
            stage.files.append((dest, on_disk, True))
        elif folder or dest == stage.workdir:
            stage.files.append((posixpath.join(dest, on_disk.name), on_disk, False))
        else:  # a folder of that name in the base image would take the file inside
            stage.files.append((dest, None, True))


def _run(ins: Instruction) -> list[str] | str:
    """A RUN's words (exec form as given), or its shell text (with a heredoc's body)."""
    if ins.heredoc:
        return f"{ins.rest}\n{ins.heredoc}"
    if ins.rest.lstrip().startswith("["):
        try:
            words = json.loads(ins.rest)
        except ValueError:
            return ins.rest
        if isinstance(words, list) and all(isinstance(w, str) for w in words):
            return list(words)
    return ins.rest


def built(found: list[Stage], target: str | None) -> Stage:
    """The stage built: the last, or the one ``target`` names.

    Raises:
        Unsettled: no stage, or ``target`` names none.
    """
    if not found:
        raise Unsettled("no FROM")
    if target is None:
        return found[-1]
    named = [s for s in found if s.name == target.lower()]
    if not named:
        raise Unsettled(f"target {target!r} names no stage")
    return named[-1]


def base_image(found: list[Stage], stage: Stage, glob: Mapping[str, str | None]) -> str:
    """The image the chain of stages ending at ``stage`` starts from, expanded with the
    global ARGs (``scratch`` for none).

    Raises:
        Unsettled: a variable of its FROM the build does not settle.
    """
    for _ in range(len(found)):
        index = found.index(stage)
        parent = next((s for s in reversed(found[:index]) if s.name == stage.base.lower()), None)
        if parent is None:
            return expand(stage.base, glob)
        stage = parent
    raise Unsettled("stages loop")


def from_container(run: Run, path: str) -> Path | None:
    """The context file a COPY had put at container ``path`` by ``run``; None when none
    did or what is there is not known (the last COPY touching it decides)."""
    answer: Path | None = None
    for dest, source, folder in run.files:
        if dest is None:
            answer = None
        elif folder and (path == dest or path.startswith(dest.rstrip("/") + "/")):
            answer = source / posixpath.relpath(path, dest) if source is not None else None
        elif not folder and path == dest:
            answer = source
    return answer


def context_file(context: Path, relative: str) -> Path | None:
    """``relative`` (a COPY source) inside the build context, None when it climbs out."""
    cleaned = posixpath.normpath(relative.lstrip("/") or ".")
    if cleaned == ".." or cleaned.startswith("../"):
        return None
    return context / cleaned
