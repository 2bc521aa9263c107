"""The engine version of a Compose service that builds its image (docs/engines.md#built-images).

A service with ``build:`` and no ``image:`` (or ``pull_policy: build``) runs the image its
Dockerfile builds. Compose settles the build (Compose file reference, "Build support":
``context`` a path relative to the project folder, default ``.``; ``dockerfile`` relative
to the context, default ``Dockerfile``; ``dockerfile_inline``; ``args`` as a mapping or a
list of ``NAME=value``, where a bare ``NAME`` or a null value is taken from the process
environment; ``target``), and BuildKit the Dockerfile (:mod:`specgate.inputs.dockerfile`).
With both ``image:`` and ``build:`` and no ``pull_policy``, Compose pulls the image first
and builds only when it is not found: the image tag is read, as for any service.

The version is, in order: the engine pins the RUN lines of the stages built install
(``pip install vllm==X``, ``uv pip install``, ``-r FILE`` copied from the context),
judged as requirement files are; else the tag of the image the build starts from (``FROM
vllm/vllm-openai:${TAG}`` with ``TAG`` settled); else unknown, with the reason. A RUN
that installs the engine with no version, or in a way not read, leaves it unknown (the
base image's engine is replaced at build time).
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping
from pathlib import Path, PurePosixPath, PureWindowsPath

from specgate.core.errors import InputError
from specgate.inputs import dockerfile as df
from specgate.inputs.knowledge import knowledge
from specgate.inputs.requirements import Found, from_line, normal, requirement_files
from specgate.inputs.version import EngineVersion, detect_version, judge_requirements
from specgate.load.document import Document

#: pip's (and uv pip's) install options that take a value (pip install --help)
_PIP_OPTIONS_WITH_VALUE = frozenset({
    "-c", "--constraint", "-r", "--requirement", "-e", "--editable", "-i", "--index-url",
    "--extra-index-url", "-f", "--find-links", "-t", "--target", "--prefix", "--root",
    "--python", "-p", "--src", "--upgrade-strategy", "--platform", "--python-version",
    "--implementation", "--abi", "--no-binary", "--only-binary", "--trusted-host",
    "--cache-dir", "--log", "--proxy", "--retries", "--timeout", "--exists-action", "--cert",
    "--client-cert", "--report", "--config-settings", "-C", "--global-option",
    "--index-strategy", "--progress-bar", "--group",
})
_SEPARATORS = frozenset({"&&", "||", ";", "|", "&", "(", ")", ";;"})


def built_version(engine: str, doc: Document, path: tuple[str | int, ...], compose: Path
                  ) -> EngineVersion | None:
    """The engine version of the Compose service holding ``path`` when it builds its
    image (module doc); None when ``path`` is not in such a service."""
    service = _building_service(doc.data, path)
    if service is None:
        return None
    name, build = service
    notes: list[str] = []
    try:
        stage, base, runs = _read_build(doc, name, build, compose)
    except df.Unsettled as exc:
        return _unknown(engine, f"the image service {name} builds: {exc}")
    packages = knowledge(engine).requirements
    found = _pins(runs, packages)
    if found.requirements or found.unread:
        pinned = judge_requirements(engine, [found], notes)
        if pinned is not None:
            return pinned
        return _unknown(engine, "; ".join(notes) or "the Dockerfile's pins admit no release")
    if base is None:
        return _unknown(engine, f"the image service {name} builds starts from no image")
    image = detect_version(engine, None, f"image: {base}\n", None)
    if image.source == "image":
        origin = f"image {base}, which service {name}'s Dockerfile builds from (line {stage})"
        return EngineVersion(image.text, image.version, "image", image.note, origin=origin,
                             why=image.why, bounds=image.bounds)
    return _unknown(engine, f"service {name} builds from {base}, which pins no release")


def _unknown(engine: str, why: str) -> EngineVersion:
    newest = knowledge(engine).newest_text
    note = (
        f"{engine} version unknown ({why}): read as the newest behaviour specgate knows "
        f"({newest}); state speculation.engine_version to pin it"
    )
    return EngineVersion(None, None, "assumed-newest", note, why=why)


def _building_service(
    data: object, path: tuple[str | int, ...]
) -> tuple[str, object] | None:
    """The service name and ``build`` value of the Compose service holding ``path``,
    when it builds the image it runs."""
    if len(path) < 2 or path[0] != "services" or not isinstance(data, Mapping):
        return None
    services = data.get("services")
    name = path[1]
    service = services.get(name) if isinstance(services, Mapping) else None
    if not isinstance(name, str) or not isinstance(service, Mapping) or "build" not in service:
        return None
    if "image" in service and service.get("pull_policy") != "build":
        return None
    return name, service["build"]


def built_entrypoint(
    doc: Document, service: Mapping[object, object], compose: Path
) -> tuple[str, ...] | None:
    """The ENTRYPOINT of the image a Compose ``service`` builds (docs/engines.md#built-images):
    the exec-form ENTRYPOINT its Dockerfile's stage chain sets, else the one of the image
    the build starts from (image-entrypoints.json), as BuildKit leaves it (Dockerfile
    reference, ENTRYPOINT: a base image's is inherited unless redefined). None when the
    service builds no image, when the build is not settled, when the Dockerfile's is the
    shell form (it takes no arguments), or when the base image's is not known."""
    from specgate.inputs.containers import image_entry, parse_image

    services = doc.data.get("services") if isinstance(doc.data, Mapping) else None
    name = next((k for k, v in services.items() if v is service), None) if isinstance(
        services, Mapping) else None
    if not isinstance(name, str) or _building_service(doc.data, ("services", name)) is None:
        return None
    try:
        stage, base = _build_stage(doc, name, service["build"], compose)
    except df.Unsettled:
        return None
    if stage.entrypoint is not None:
        return tuple(stage.entrypoint) if isinstance(stage.entrypoint, list) else None
    ref = parse_image(base) if base is not None else None
    entry = image_entry(ref) if ref is not None else None
    if entry is None or not entry.entrypoint or entry.splits_arguments:
        return None
    return entry.entrypoint


def _read_build(
    doc: Document, name: str, build: object, compose: Path
) -> tuple[int, str | None, list[df.Run]]:
    """(FROM line of the stage built, the image the build starts from or None for
    ``scratch``, the RUN lines of the stages built).

    Raises:
        df.Unsettled: anything the build does not settle from the repository.
    """
    stage, base = _build_stage(doc, name, build, compose)
    return stage.line, base, stage.runs


def _build_stage(
    doc: Document, name: str, build: object, compose: Path
) -> tuple[df.Stage, str | None]:
    """(the stage built, the image the build starts from or None for ``scratch``).

    Raises:
        df.Unsettled: anything the build does not settle from the repository.
    """
    at = ("services", name, "build")
    if any(node[: len(at)] == at for node in doc.unsettled):
        unsettled = [node for node in doc.unsettled if node[: len(at)] == at]
        keys = {str(node[3]) if len(node) > 3 else "build" for node in unsettled}
        if keys - {"args"}:
            raise df.Unsettled(f"{', '.join(sorted(keys))} set outside the repository")
    if isinstance(build, str):
        build = {"context": build}
    if not isinstance(build, Mapping):
        raise df.Unsettled("build is neither a path nor a mapping")
    context = _inside(compose.parent, build.get("context", "."), "context")
    inline = build.get("dockerfile_inline")
    if isinstance(inline, str):
        text, shown = inline, "dockerfile_inline"
    else:
        dockerfile = _inside(context, build.get("dockerfile", "Dockerfile"), "dockerfile")
        from specgate.load.read import read_text

        try:
            text = read_text(dockerfile, dockerfile.name)
        except InputError as exc:
            raise df.Unsettled(f"{dockerfile.name} not read ({exc.reason})") from None
        shown = dockerfile.name
    args = _args(doc, name, build.get("args"))
    target = build.get("target")
    if target is not None and not isinstance(target, str):
        raise df.Unsettled("target is not a string")
    try:
        stages, glob = df.stages(text, args, context)
        stage = df.built(stages, target)
        base = df.base_image(stages, stage, glob)
    except df.Unsettled as exc:
        raise df.Unsettled(f"{shown}: {exc}") from None
    return stage, None if base.lower() == "scratch" else base


def _inside(folder: Path, relative: object, what: str) -> Path:
    """``folder / relative`` inside the repository.

    Raises:
        df.Unsettled: not a relative path (a URL, an absolute path), or it leads out.
    """
    from specgate.core.paths import PathProblem, confined, repository_top

    if not isinstance(relative, str) or not relative:
        raise df.Unsettled(f"{what} is not a path")
    if "://" in relative or relative.startswith("git@") or (
        PurePosixPath(relative).is_absolute() or PureWindowsPath(relative).is_absolute()
    ):
        raise df.Unsettled(f"{what} {relative!r} is not a path inside the repository")
    top = repository_top(folder)
    if os.path.normpath(folder / relative) == str(top):
        return top  # the repository's own folder (confined reads what lies inside it)
    try:
        return confined(folder / relative, top=top)
    except PathProblem as exc:
        raise df.Unsettled(f"{what} {relative!r}: {exc}") from None


def _args(doc: Document, name: str, raw: object) -> dict[str, str]:
    """``build.args`` as Compose passes them to the build: a bare ``NAME`` or a null
    value is the process environment's (:data:`df.UNSET`), as is a value interpolated
    from a variable the repository does not set; a number, its digits; a boolean or a
    float is not read (Go and Python may print it otherwise: :data:`df.UNSET`)."""
    out: dict[str, str] = {}
    at = ("services", name, "build", "args")
    if isinstance(raw, Mapping):
        for key, value in raw.items():
            node = (*at, key)
            settled = isinstance(value, str) or (
                isinstance(value, int) and not isinstance(value, bool)
            )
            out[str(key)] = str(value) if settled and node not in doc.unsettled else df.UNSET
    elif isinstance(raw, list):
        for index, item in enumerate(raw):
            if not isinstance(item, str):
                continue
            key, eq, value = item.partition("=")
            unsettled = not eq or (*at, index) in doc.unsettled
            out[key] = df.UNSET if unsettled else value
    return out


def _pins(runs: list[df.Run], packages: tuple[str, ...]) -> Found:
    """The requirements on ``packages`` the RUN lines install (module doc)."""
    found = Found()
    for run in runs:
        where = f"Dockerfile:{run.line}"
        for words in _commands(run, packages, found):
            _install(words, run, packages, where, found)
        if found.unread:
            break
    return found


def _commands(run: df.Run, packages: tuple[str, ...], found: Found) -> list[list[str]]:
    """The simple commands of a RUN line (split at ``&&``, ``;``, ``|`` …)."""
    if isinstance(run.command, list):
        return [run.command]
    text = run.command
    mentioned = any(re.search(rf"(?i)\b{re.escape(p)}\b", text) for p in packages)
    if "\n" in text and mentioned:
        found.unread = f"Dockerfile:{run.line} installs in a heredoc, not read"
        return []
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:
        if mentioned:
            found.unread = f"Dockerfile:{run.line} not read as shell words"
        return []
    out: list[list[str]] = [[]]
    for token in tokens:
        if token in _SEPARATORS:
            out.append([])
        else:
            out[-1].append(token)
    return [words for words in out if words]


def _install(
    words: list[str], run: df.Run, packages: tuple[str, ...], where: str, found: Found
) -> None:
    """The pins of one simple command: ``pip install``, ``pip3 install``, ``python -m pip
    install``, ``uv pip install``; any other word naming the package (``conda install
    vllm=1``) leaves the pins unread."""
    start = _install_start(words)
    index = start or 0
    while index < len(words) and found.unread is None:
        word = words[index]
        index += 1
        if start is not None and word.startswith("-"):
            option, eq, value = word.partition("=")
            short = option[:2] if option[:2] in ("-r", "-c") and len(option) > 2 else None
            if option in _PIP_OPTIONS_WITH_VALUE or short:
                if short:
                    value, option = option[2:], short
                elif not eq:
                    value = words[index] if index < len(words) else ""
                    index += 1
                if option in ("-r", "--requirement", "-c", "--constraint"):
                    _requirement_file(value, run, packages, where, found)
            continue
        _requirement_word(word, run, packages, where, found, installing=start is not None)


def _install_start(words: list[str]) -> int | None:
    """The index after ``install`` of a pip command, None for another command."""
    names = [PurePosixPath(w).name for w in words[:4]]
    if names[:1] and re.fullmatch(r"pip3?(\.\d+)?", names[0]) and "install" in words[1:3]:
        return words.index("install", 1) + 1
    if names[:3] == ["uv", "pip", "install"]:
        return 3
    python = names[:1] and re.fullmatch(r"python3?(\.\d+)?", names[0])
    if python and words[1:4] == ["-m", "pip", "install"]:
        return 4
    return None


def _requirement_word(
    word: str, run: df.Run, packages: tuple[str, ...], where: str, found: Found,
    *, installing: bool,
) -> None:
    name = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", word)
    ours = name is not None and any(normal(name.group(0)) == normal(p) for p in packages)
    if not ours:
        return
    if not installing:
        found.unread = f"{where}: {word[:60]!r} names the engine outside a pip install"
        return
    try:
        word = _expanded(word, run)
    except df.Unsettled as exc:
        found.unread = f"{where}: {exc}"
        return
    for package in packages:
        requirement = from_line(word, package, where)
        if requirement is not None:
            found.requirements.append(requirement)
            return
    found.unread = f"{where} installs {word[:60]!r} with no version (the newest at build time)"


def _expanded(word: str, run: df.Run) -> str:
    """``word`` with the variables the shell gives it (the RUN's ARGs and ENVs).

    Raises:
        df.Unsettled: a variable not settled, or a single quote in the line, which
            keeps a ``$`` as written and which shell words no longer show.
    """
    if "$" not in word:
        return word
    if isinstance(run.command, str) and "'" in run.command:
        raise df.Unsettled(f"{word[:60]!r} in a line with single quotes, not read")
    return df.expand(word, run.scope)


def _requirement_file(
    value: str, run: df.Run, packages: tuple[str, ...], where: str, found: Found
) -> None:
    import posixpath

    try:
        path = _expanded(value, run)
    except df.Unsettled as exc:
        found.unread = f"{where}: {exc}"
        return
    if not path.startswith("/"):
        if run.workdir is None:
            found.unread = f"{where}: -r {path} relative to a WORKDIR the base image sets"
            return
        path = posixpath.join(run.workdir, path)
    source = df.from_container(run, posixpath.normpath(path))
    if source is None:
        found.unread = f"{where}: {path} was not copied from the build context"
        return
    from specgate.core.paths import PathProblem, confined, repository_top

    try:  # a symlink in the context leading out of the repository is not followed
        source = confined(source, top=repository_top(source.parent))
    except PathProblem as exc:
        found.unread = f"{where}: {path}: {exc}"
        return
    more = requirement_files([source], packages, lambda p: p.name)
    found.requirements.extend(more.requirements)
    found.unread = found.unread or more.unread
