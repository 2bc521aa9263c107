"""Which engine version a deployment runs (docs/engines.md#versions).

First that applies: ``speculation.engine_version`` in the claims file
(``claims``); else exactly one version found for the engine as a container image
tag in the referenced engine config (``vllm/vllm-openai:v0.27.1``,
``lmsysorg/sglang:v0.5.4``, ``nvcr.io/nvidia/tensorrt-llm/release:1.2.0``,
``ghcr.io/ggml-org/llama.cpp:server-b7000``; ``image``); else exactly one pinned
requirement (``vllm==0.9.2``) in a ``requirements*.txt`` / ``constraints*.txt``
beside that file (``requirement``); else unknown: the newest behaviour specgate
knows is read (``assumed-newest``), and the report says so.

Image names and package names come from the engine data files. The scan is one
pass per pattern over text already capped in size; several different versions
are not a guess: the version stays unknown and a note names them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from specgate.core.errors import InputError
from specgate.inputs.knowledge import Version, knowledge, parse_version
from specgate.load.read import read_text

if TYPE_CHECKING:
    from specgate.inputs.requirements import Found

VersionSource = Literal["claims", "image", "requirement", "assumed-newest"]

#: Requirement files looked at beside the engine config, at most this many (more, or
#: one that cannot be read, and no pin is read from any: the version is unknown, with
#: a note, never the pin of the files that happened to be read).
MAX_REQUIREMENT_FILES = 8
_REQUIREMENT_GLOBS = ("requirements*.txt", "constraints*.txt")


@dataclass(frozen=True)
class EngineVersion:
    """The version a reader applies.

    Attributes:
        text: the version as found (``"v0.27.1"``), None when unknown.
        version: ``text`` as an integer tuple, None when unknown.
        source: ``claims`` | ``image`` | ``requirement`` | ``assumed-newest``.
        note: words for the report (what was assumed, what disagreed).
        origin: how the release was read where the tag alone does not say it (a
            Triton release mapped to its TensorRT-LLM, the tag beside a digest, a
            value from ``.env``), for the report; None otherwise.
        why: with the version unknown, why nothing found pins it (``image not pinned:
            …``), for a note that replaces ``note``; None otherwise.
        bounds: with the version unknown, the releases a requirement range admits:
            (first, first not admitted, last admitted), each None when unbounded
            (docs/engines.md#versions); None when no range was read.
    """

    text: str | None
    version: Version | None
    source: VersionSource
    note: str | None = None
    origin: str | None = None
    why: str | None = None
    bounds: tuple[Version | None, Version | None, Version | None] | None = None


def images_in(engine: str, text: str) -> list[str]:
    """Tags of ``engine``'s container images in ``text`` that name a release by the
    image family's tag forms (:func:`specgate.inputs.containers.image_version`), in
    order: a commit SHA, ``latest`` or a tag of no release form is not one."""
    from specgate.inputs.containers import images_of

    found = images_of(engine, text)
    return [pin.tag for pin in found.pinned] if found is not None else []


def requirements_in(engine: str, text: str) -> list[str]:
    """Versions ``engine``'s package is pinned to exactly (``==``, ``===``) in
    requirements ``text``, in order (:func:`specgate.inputs.requirements.from_line`)."""
    from specgate.inputs.requirements import from_line

    out: list[str] = []
    for line in text.splitlines()[:4096]:
        for package in knowledge(engine).requirements:
            found = from_line(line, package, "")
            if found is not None and found.exact and parse_version(found.exact) is not None:
                out.append(found.exact)
    return out


def _one(found: list[str]) -> tuple[str | None, list[str]]:
    distinct = list(dict.fromkeys(found))
    return (distinct[0], distinct) if len(distinct) == 1 else (None, distinct)


def detect_version(
    engine: str, stated: str | None, config_text: str | None, config_path: Path | None,
    *, image_outside: str | None = None,
) -> EngineVersion:
    """The engine version for a deployment (see the module doc for the order).

    Args:
        engine: the engine read from the config.
        stated: ``speculation.engine_version`` when the claims file gives it.
        config_text: the referenced engine config's text (image tags), if any.
        config_path: that file on disk (requirement files beside it), if any.
        image_outside: the variable that names the container's image when it is set
            outside the repository (``$IMAGE``): then no tag or requirement file in
            the repository pins the version the container runs.

    Returns:
        the :class:`EngineVersion`; unreadable requirement files are skipped.
    """
    newest = knowledge(engine).newest_text
    if stated is not None:
        early = _pre_release(engine, stated, f"speculation.engine_version {stated}", "claims")
        return early or _known(engine, EngineVersion(stated, parse_version(stated), "claims"))
    notes: list[str] = []
    if image_outside is not None:
        notes.append(f"image not pinned: set by {image_outside}, outside the repository")
        config_text = config_path = None
    if config_text is not None:
        tagged = _from_images(engine, config_text, config_path, notes)
        if tagged is not None:
            return _known(engine, tagged)
    bounds = None
    if config_path is not None:
        pinned = _from_requirements(engine, config_path, notes)
        if pinned is not None and pinned.version is not None:
            return _known(engine, pinned)
        if pinned is not None and pinned.text is not None:  # a pre-release: bounded
            return pinned
        bounds = pinned.bounds if pinned is not None else None
    note = (
        f"{engine} version unknown"
        + (f" ({'; '.join(notes)})" if notes else "")
        + f": read as the newest behaviour specgate knows ({newest}); "
        "state speculation.engine_version to pin it"
    )
    return EngineVersion(
        None, None, "assumed-newest", note, why="; ".join(notes) or None, bounds=bounds
    )


def _from_images(
    engine: str, text: str, config_path: Path | None, notes: list[str]
) -> EngineVersion | None:
    """The one release the engine's image references pin by their tags
    (:func:`specgate.inputs.containers.images_of`, the tag forms of each image family:
    llama.cpp ``server-cuda-b9733`` → ``b9733``), also through a Compose ``image:
    ${VAR}`` interpolated from the ``.env`` beside the file (Compose reads the project
    folder's ``.env``); else None, with a note saying which references pin none and
    why (``latest``, a bare digest, a commit SHA, a variable set outside the
    repository)."""
    from specgate.inputs.containers import compose_images, images_of

    found = images_of(engine, text)
    if found is None:
        return None
    pinned, unpinned = list(found.pinned), list(found.unpinned)
    outside: list[str] = []
    origin: str | None = None
    if config_path is not None and "$" in text:
        env, origin = _dotenv(config_path, text)
        images, outside = compose_images(text, env)
        more = images_of(engine, "\n".join(images))
        if more is not None:
            fresh = [p for p in more.pinned if all(p.version != q.version for q in pinned)]
            pinned.extend(fresh)
            unpinned.extend(more.unpinned)
            if not fresh:
                origin = None
    if len(pinned) == 1:
        pin = pinned[0]
        early = _pre_release(engine, pin.version, f"image tag {pin.tag}", "image", pin.tag)
        if early is not None:
            return early
        version = parse_version(pin.version)
        # the tag itself when it reads as the release (v0.10.2-x86_64), else the release
        # (rocm6.4.1_vllm_0.10.1_20250909 → 0.10.1; Triton 25.08 → TensorRT-LLM 0.21.0)
        shown = pin.tag if parse_version(pin.tag) == version else pin.version
        said = "; ".join(part for part in (pin.note, origin) if part) or None
        return EngineVersion(shown, version, "image", origin=said)
    if pinned:
        tags = ", ".join(pin.tag for pin in pinned)
        notes.append(f"several {engine} image tags ({tags})")
    elif unpinned:
        notes.append(f"image not pinned: {', '.join(unpinned[:3])}")
    elif outside:
        names = ", ".join(f"${name}" for name in outside[:3])
        notes.append(f"image set by {names}, not set in the repository")
    return None


def _from_requirements(
    engine: str, config_path: Path, notes: list[str]
) -> EngineVersion | None:
    """The version the Python project files beside ``config_path`` pin
    (:mod:`specgate.inputs.requirements`), read under PEP 440 over the engine's listed
    releases: requirements that admit one listed release and nothing newer pin it
    (``==0.16`` → 0.16.0; source ``requirement``); an exact pin of a release not listed
    pins its text; several admitted → the version stays unknown and ``bounds`` narrows
    the releases considered to them (``==0.4.4.*`` → 0.4.4 to 0.4.4.post4;
    docs/engines.md#versions); else None, with a note for several pins, a conflict or a
    file not read."""
    from specgate.core.revision_tree import bring_folder
    from specgate.inputs import requirements as req

    packages = knowledge(engine).requirements
    if not packages:
        return None
    folder = config_path.parent
    bring_folder(folder, (*_REQUIREMENT_GLOBS, "pyproject.toml", "uv.lock"))  # at a base revision
    real = folder.resolve()
    # a symlink out of the config's folder is not followed (the repository's files only)
    inside = [p for p in sorted(folder.glob("*")) if p.name in ("pyproject.toml", "uv.lock")
              or any(p.match(g) for g in _REQUIREMENT_GLOBS)]
    inside = [p for p in inside if p.is_file() and p.resolve().is_relative_to(real)]
    texts = [p for p in inside if p.suffix == ".txt"]
    if len(texts) > MAX_REQUIREMENT_FILES:
        notes.append(f"more than {MAX_REQUIREMENT_FILES} requirement files beside the config")
        return None
    parts = [req.requirement_files(texts, packages, lambda p: _shown(p, folder))]
    for path in inside:
        if path.name == "pyproject.toml":
            parts.append(req.pyproject(path, packages, path.name))
        elif path.name == "uv.lock":
            parts.append(req.uv_lock(path, packages, path.name))
    return judge_requirements(engine, parts, notes)


def judge_requirements(
    engine: str, parts: list[Found], notes: list[str]
) -> EngineVersion | None:
    """What the requirements ``parts`` found pin or bound under PEP 440 over the engine's
    listed releases (:func:`_from_requirements`; also the RUN lines of a Dockerfile,
    :mod:`specgate.inputs.compose_build`); None with a note when they pin nothing."""
    from specgate.inputs import requirements as req

    unread = next((part.unread for part in parts if part.unread), None)
    if unread is not None:  # a pin not read is no pin: never a partial reading
        notes.append(unread)
        return None
    found = [r for part in parts for r in part.requirements]
    exact = list(dict.fromkeys(r.exact for r in found if r.exact))
    data = knowledge(engine)
    if len(exact) > 1:
        notes.append(f"several pinned {engine} versions ({', '.join(exact)})")
        return None
    if not found:
        return None
    from specgate.inputs.knowledge import shown_version

    # PEP 440 over the listed releases (W1: ``==0.16`` is 0.16.0, ``==0.4.4.*`` the
    # releases 0.4.4 to 0.4.4.post4): one admitted release, and none newer can be, pins it
    releases = req.admitted(found, data.releases)
    if len(releases) == 1 and req.bounded_above(found, data.releases):
        pin = EngineVersion(shown_version(engine, releases[0]), releases[0], "requirement")
        return _known(engine, pin)
    if not releases and exact:  # a release specgate does not list (newer, a pre-release);
        # one it lists that the requirements leave out (``===0.16``: no release spells it so)
        # is a conflict
        version = parse_version(exact[0])
        ranges = [r for r in found if not r.exact]
        listed = req.admitted([req.Requirement(exact[0], (("==", exact[0]),), "")], data.releases)
        if version is None or listed or (ranges and not req.admitted(ranges, (version,))):
            said = ", ".join(f"{r.text} ({r.where})" for r in found[:3])
            notes.append(f"{engine} requirements that no release meets ({said})")
            return None
        where = next(f"{r.text} ({r.where})" for r in found if r.exact == exact[0])
        return _pre_release(engine, exact[0], where, "requirement") or _known(
            engine, EngineVersion(exact[0], version, "requirement")
        )
    ranges = found
    said = ", ".join(f"{r.text} ({r.where})" for r in ranges[:3])
    if not releases:
        notes.append(f"{said}: admits no release specgate lists")
        return None
    low = releases[0] if req.bounded_below(ranges) else None
    high = data.release_after(releases[-1])
    first, last = (shown_version(engine, v) for v in (releases[0], releases[-1]))
    notes.append(f"{said} admits {first}" + (f" to {last}" if last != first else ""))
    return EngineVersion(
        None, None, "assumed-newest", bounds=(low, high, releases[-1] if high else None)
    )


def _pre_release(
    engine: str, text: str, where: str, source: VersionSource, raw: str | None = None
) -> EngineVersion | None:
    """The releases a pre-release ``text`` may behave as (``v0.11.0rc1``, ``0.5.23rc0``;
    :func:`specgate.inputs.pep440.release_of`), or None when ``text`` is a release.

    PEP 440 orders a candidate before its release, after the release before it, and it
    holds some but not all of the release's changes (docs/engines.md#pre-releases). So
    the version stays unknown, bounded as a requirement range is to the listed release
    before it and the release (the first listed at or after it): a check fails only
    where it holds at both, and one whose lifetime starts or ends at the release warns.
    A candidate of a release newer than the newest specgate knows is read as that
    release (:func:`_known`: the newest behaviour, with a note), as the release itself
    would be; an engine with no ``releases`` list bounds it from above only. The
    source stays where it was read, its text in ``text`` (``raw`` when given: the tag
    as written), and ``version`` None: no one release is pinned."""
    from specgate.inputs.knowledge import shown_version
    from specgate.inputs.pep440 import release_of

    release = release_of(text)
    version = parse_version(release) if release is not None else None
    data = knowledge(engine)
    if version is None or version > data.newest:
        return None
    before = [v for v in data.releases if v < version]
    low = before[-1] if before else None
    last = next((v for v in data.releases if v >= version), version)
    high = data.release_after(last)
    between = (
        f"between {shown_version(engine, low)} and {shown_version(engine, last)}"
        if low is not None
        else f"as {shown_version(engine, last)} or earlier"
    )
    why = (
        f"{where} is a pre-release of {release}, with some but not all of its changes: "
        f"read {between}"
    )
    note = f"{data.display_name} version unknown ({why})"
    return EngineVersion(raw or text, None, source, note, why=why, bounds=(low, high, last))


def _shown(path: Path, folder: Path) -> str:
    """``path`` as the report names it: relative to the config's folder when inside."""
    try:
        return path.relative_to(folder).as_posix()
    except ValueError:
        return path.name


def _dotenv(config_path: Path, text: str) -> tuple[dict[str, str], str | None]:
    """The ``.env`` beside ``config_path`` as Compose reads it for interpolation, and
    where the variables ``text`` uses come from (``"VLLM_TAG from .env:1"``). Under the
    change gate a ``.env`` git ignores is not read: no commit holds it, so a CI clone
    runs the files' defaults (new-user trial 1, V5; docs/change-gate.md#baseline)."""
    from specgate.core.revision_tree import ignored_by_git
    from specgate.inputs.containers import read_dotenv

    dotenv = config_path.parent / ".env"
    folder = config_path.parent.resolve()
    if not dotenv.is_file() or not dotenv.resolve().is_relative_to(folder):
        return {}, None
    try:
        raw = read_text(dotenv, ".env")
    except InputError:
        return {}, None
    env = read_dotenv(raw)
    used = [name for name in env if re.search(r"\$\{?" + re.escape(name) + r"\b", text)]
    if not used:
        return env, None
    if ignored_by_git(dotenv):
        return {}, (
            f"{', '.join(used[:3])} in .env not read: git ignores .env, so no commit holds "
            "it and the change gate reads the files' own values"
        )
    lines = raw.splitlines()[:4096]
    where = [
        f"{name} from .env:{max(i for i, line in enumerate(lines, 1) if _sets(line, name))}"
        for name in used[:3]
        if any(_sets(line, name) for line in lines)
    ]
    return env, "; ".join(where) or None


def _sets(line: str, name: str) -> bool:
    """Whether a ``.env`` line sets ``name`` (``NAME=…``, ``export NAME=…``)."""
    return line.strip().removeprefix("export ").lstrip().startswith(f"{name}=")


def _known(engine: str, found: EngineVersion) -> EngineVersion:
    """``found``, with a note when it is newer than the newest release specgate knows:
    that release's behaviour is what gets applied (F13), and the report says so; or
    when it is older than any version the engine's checks were read at
    (``oldest_read``): that release's own refusals are not checked (real-r4 defect 5).
    A version that does not parse (the claims schema refuses one) is left as it is."""
    data = knowledge(engine)
    if found.version is not None and found.version < data.oldest_read:
        from specgate.inputs.knowledge import shown_version

        oldest = shown_version(engine, data.oldest_read)
        # one release read: named once, not "X to X"
        read = oldest if oldest == data.newest_text else f"{oldest} to {data.newest_text}"
        note = (
            f"{data.display_name} {found.text} is older than the releases specgate's "
            f"engine data was read from ({read}): what that release refuses is not "
            "checked, except by the few checks recorded at or before it; the others warn "
            "there, not fail"
        )
        return replace(found, note=note)
    if found.version is None or found.version <= data.newest:
        return found
    note = (
        f"{engine} {found.text} is newer than the newest version specgate knows "
        f"({data.newest_text}): read with {data.newest_text}'s behaviour"
    )
    return replace(found, note=note)
