"""What a container runs: image references, image entrypoints, and the argv they make.

Shapes:
- :func:`parse_image` splits an image reference (``vllm/vllm-openai:v0.26.0``,
  ``ghcr.io/ggml-org/llama.cpp:server-cuda-b9733``, ``repo@sha256:…``) into an
  :class:`ImageRef` as Docker's reference grammar does (distribution/reference
  ``reference.go``: ``name[:tag][@digest]``; a ``:`` after the last ``/`` starts the tag,
  one before it is a registry port).
- :func:`image_entry` finds the engine image an :class:`ImageRef` names in
  ``specgate/data/image-entrypoints.json`` (each entry with the image's Dockerfile as
  its source), or None.
- :func:`container_argv` is the process a container runs, from the image's ENTRYPOINT
  and CMD and what the deployment overrides, as Docker, Compose and Kubernetes define:

  * Docker (docs.docker.com/reference/dockerfile/#understand-how-cmd-and-entrypoint-interact):
    argv = ENTRYPOINT + CMD; ``docker run IMAGE ARGS`` replaces CMD; ``--entrypoint``
    replaces ENTRYPOINT and clears the image's CMD
    (docs.docker.com/reference/cli/docker/container/run/#entrypoint).
  * Compose (compose-spec ``05-services.md``, ``entrypoint`` and ``command``):
    ``command:`` replaces CMD; ``entrypoint:`` replaces ENTRYPOINT and the image's CMD is
    ignored; ``entrypoint: []`` / ``""`` clears the ENTRYPOINT.
  * Kubernetes (kubernetes.io/docs/tasks/inject-data-application/define-command-argument-container/,
    "Notes"): ``command`` replaces ENTRYPOINT, ``args`` replaces CMD, and ``command``
    without ``args`` drops the image's CMD.

  The three agree: ``entrypoint`` stands for ``--entrypoint`` / Compose ``entrypoint:`` /
  k8s ``command``; ``command`` for run's ARGS / Compose ``command:`` / k8s ``args``.
- :func:`image_version` is the engine release an image reference pins, by the tag forms
  of its image family (``specgate/data/image-tags.json``: vLLM ``v0.10.2``, AMD's
  ``rocm6.4.1_vllm_0.10.1_20250909``, Triton's ``25.08-trtllm-python-py3`` through
  NVIDIA's recorded matrix), or why it pins none (``latest``, no tag, a bare digest, a
  commit SHA, a tag not of the family's forms).

Nothing here runs or pulls an image; the table is data read once.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache

from specgate.core.data import read_data

#: Registry prefixes Docker adds to a short name (``vllm/vllm-openai`` is
#: ``docker.io/vllm/vllm-openai``; ``ubuntu`` is ``docker.io/library/ubuntu``).
_DOCKER_HUB = ("docker.io/", "index.docker.io/", "registry-1.docker.io/")
#: distribution/reference: tag ``[\w][\w.-]{0,127}``, digest ``algorithm:hex``.
_TAG = re.compile(r"[\w][\w.-]{0,127}")
_DIGEST = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}")
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_NAME = re.compile(_COMPONENT + r"(?:/" + _COMPONENT + r")*")
_REGISTRY = re.compile(r"(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)(?:\.[a-zA-Z0-9-]+)*(?::\d+)?")


@dataclass(frozen=True)
class ImageRef:
    """An image reference as Docker reads it.

    Attributes:
        text: the reference as written.
        repository: registry/name without tag or digest, Docker Hub's ``docker.io/``
            and ``library/`` dropped (``vllm/vllm-openai``, ``ghcr.io/ggml-org/llama.cpp``).
        tag: the tag, None when none is written (Docker then pulls ``latest``).
        digest: ``sha256:…`` when written (Docker then runs the digest; a tag beside it
            is not checked against it).
    """

    text: str
    repository: str
    tag: str | None
    digest: str | None


@dataclass(frozen=True)
class ImageEntry:
    """One engine image of ``image-entrypoints.json``.

    Attributes:
        engine: the engine name specgate uses (``vllm``, ``sglang``, ``llamacpp``,
            ``trtllm``, ``tgi``).
        entrypoint: the image's ENTRYPOINT words; None when it is a wrapper that runs
            its arguments (the command's first word is then the program).
        cmd: the image's CMD words.
        source: ``repo:file@commit`` of the Dockerfile read.
        splits_arguments: the ENTRYPOINT script passes its arguments on unquoted
            (``$@``), so bash splits each at whitespace and expands globs.
        server: for an image whose ENTRYPOINT does not start the server, the words
            that do (``python3 -m sglang.launch_server``); empty when not recorded.
    """

    engine: str
    entrypoint: tuple[str, ...] | None
    cmd: tuple[str, ...]
    source: str
    splits_arguments: bool
    server: tuple[str, ...] = ()


@dataclass(frozen=True)
class Argv:
    """The process a container runs: ``words`` (program first), or, when it cannot be
    settled, ``words`` empty and ``unsettled`` saying why."""

    words: tuple[str, ...]
    unsettled: str | None = None


@dataclass(frozen=True)
class ImageVersion:
    """The engine version an image reference pins.

    Attributes:
        text: the release the tag names (``0.26.0``, ``b9733``; Triton ``25.08`` →
            ``0.21.0``), None when not pinned.
        pinned: the reference names one release by its tag.
        reason: why it is not pinned (``latest``, ``no tag``, ``a digest …``, ``the tag
            is a commit …``); None when pinned.
        note: how a pinned release was read when the tag alone does not say it (the
            tag beside a digest; Triton's release mapped through NVIDIA's matrix).
    """

    text: str | None
    pinned: bool
    reason: str | None = None
    note: str | None = None


@dataclass(frozen=True)
class TagForm:
    """An image family's tag forms (``image-tags.json``): ``version`` searches a tag
    (group 1 the release, or a key of ``mapping``), None when no tag names a release;
    ``unpinned`` says why a tag that names none pins nothing; ``source`` where the
    forms come from."""

    engine: str
    version: re.Pattern[str] | None
    mapping: Mapping[str, str]
    unpinned: str
    source: str


def parse_image(text: str) -> ImageRef | None:
    """``text`` as an image reference, or None when it is not one Docker accepts
    (empty, a variable left in it, upper case in the name, a bad tag or digest)."""
    rest = text.strip()
    digest = None
    if "@" in rest:
        rest, digest = rest.split("@", 1)
        if not _DIGEST.fullmatch(digest):
            return None
    tag = None
    slash = rest.rfind("/")
    colon = rest.rfind(":")
    if colon > slash:
        rest, tag = rest[:colon], rest[colon + 1:]
        if not _TAG.fullmatch(tag):
            return None
    registry, _, path = rest.partition("/")
    if path and ("." in registry or ":" in registry or registry == "localhost"):
        if not _REGISTRY.fullmatch(registry) or not _NAME.fullmatch(path):
            return None
    elif not _NAME.fullmatch(rest):
        return None
    return ImageRef(text, _short(rest), tag, digest)


def _short(repository: str) -> str:
    for prefix in _DOCKER_HUB:
        if repository.startswith(prefix):
            repository = repository[len(prefix):]
            break
    return repository.removeprefix("library/")


def _path(repository: str) -> str:
    """The repository path after its registry host (``ghcr.io/ggml-org/llama.cpp`` →
    ``ggml-org/llama.cpp``): the first component is a host when it holds ``.`` or
    ``:`` or is ``localhost`` (distribution/reference's rule, as :func:`parse_image`)."""
    registry, _, path = repository.partition("/")
    if path and ("." in registry or ":" in registry or registry == "localhost"):
        return path.removeprefix("library/")
    return repository


def _of_family(repository: str, names: frozenset[str]) -> bool:
    """``repository`` is one of ``names`` (paths, :func:`_path`) from any registry: the
    same path after its host, or a mirror's path that ends with it at a component
    boundary (``registry.example.com:5000/mirror/vllm/vllm-openai`` is
    ``vllm/vllm-openai`` pulled through a mirror; docs/engines.md#containers)."""
    path = _path(repository)
    if path in names:
        return True
    parts = path.split("/")
    return any("/".join(parts[i:]) in names for i in range(1, len(parts) - 1))


@cache
def _entries() -> tuple[tuple[frozenset[str], re.Pattern[str] | None, ImageEntry], ...]:
    data = json.loads(read_data("image-entrypoints.json"))
    out = []
    for item in data["images"]:
        source = item["source"]
        at = source.get("tag") or source["commit"]
        entrypoint = item["entrypoint"]
        entry = ImageEntry(
            item["engine"],
            None if entrypoint is None else tuple(entrypoint),
            tuple(item["cmd"]),
            f"{source['repo']}:{source['file']}@{at}",
            item["engine"] == "tgi",
            tuple(item.get("server", ())),
        )
        tags = re.compile(item["tags"]) if item["tags"] else None
        out.append((frozenset(_path(_short(name)) for name in item["repository"]), tags, entry))
    return tuple(out)


@cache
def _tag_forms() -> tuple[tuple[frozenset[str], TagForm], ...]:
    data = json.loads(read_data("image-tags.json"))
    return tuple(
        (
            frozenset(_path(_short(name)) for name in item["repository"]),
            TagForm(
                item["engine"],
                re.compile(item["version"]) if item["version"] else None,
                dict(item.get("map", {})),
                item["unpinned"],
                item["source"],
            ),
        )
        for item in data["families"]
    )


def tag_form(image: ImageRef) -> TagForm | None:
    """The tag forms of ``image``'s family, None for an image of no recorded family."""
    for names, form in _tag_forms():
        if _of_family(image.repository, names):
            return form
    return None


def image_entry(image: ImageRef) -> ImageEntry | None:
    """The engine image ``image`` names, or None (an image specgate has no entry for).
    An entry with a tag pattern needs a tag it matches (``server-cuda`` for llama.cpp's
    server stage); an image of a known repository whose tag no entry matches is None."""
    for names, tags, entry in _entries():
        if not _of_family(image.repository, names):
            continue
        if tags is None or (image.tag is not None and tags.fullmatch(image.tag)):
            return entry
    return None


def known_repository(image: ImageRef) -> bool:
    """``image`` is of a repository in the table (whatever its tag)."""
    return any(_of_family(image.repository, names) for names, _, _ in _entries())


def container_argv(
    image: ImageEntry | None,
    *,
    entrypoint: Sequence[str] | None,
    command: Sequence[str] | None,
) -> Argv:
    """The argv a container runs (module docstring for the rules and sources).

    ``entrypoint``: the deployment's override of the image's ENTRYPOINT (None: not
    overridden; ``[]``: cleared). ``command``: its override of CMD (None: not given).
    ``image`` None (an image not in the table) settles the argv only when the
    deployment overrides the entrypoint, since the image's own is unknown.
    """
    if entrypoint is not None:
        return Argv(tuple(entrypoint) + tuple(command or ()))
    if image is None:
        return Argv((), "the image is not one whose ENTRYPOINT specgate knows")
    words = tuple(command) if command is not None else image.cmd
    if image.splits_arguments:
        split: list[str] = []
        for word in words:
            if any(char in word for char in "*?["):
                return Argv((), f"the image's entrypoint passes {word!r} on unquoted, "
                                "so bash expands it as a pattern")
            split.extend(word.split())
        words = tuple(split)
    return Argv((image.entrypoint or ()) + words)


#: A commit SHA as a tag, or a tag's last word (``21a0fd3b…``, ``nightly-0d4f48f``): git's
#: abbreviations are 7 hex digits at least, a full SHA-1 40.
_COMMIT = re.compile(r"(?:^|[-_.])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}$")


def image_version(image: ImageRef) -> ImageVersion:
    """The engine release ``image`` pins by its tag, by its family's tag forms
    (:func:`tag_form`; docs/engines.md#versions).

    Not pinned: no tag or ``latest`` (whatever was pushed last), a digest without a tag
    (specgate maps no digest to a release), a tag that is a commit SHA, a tag not of
    the family's forms, and an image of no recorded family. A release tag beside a
    digest (``v0.10.2@sha256:…``, as Renovate pins) is read as written, with a note:
    Docker runs the digest and does not check the tag against it."""
    if image.tag is None:
        return ImageVersion(None, False, "a digest, which specgate maps to no release"
                            if image.digest is not None else "no tag")
    if image.tag == "latest":
        reason = "latest names no release"
        if image.digest is not None:
            reason += ", and specgate maps no digest to one"
        return ImageVersion(None, False, reason)
    form = tag_form(image)
    found = form.version.search(image.tag) if form is not None and form.version else None
    if form is None or found is None:
        if _COMMIT.search(image.tag):
            return ImageVersion(None, False, "the tag is a commit, not a release")
        why = form.unpinned if form is not None else "an image of no recorded family"
        return ImageVersion(None, False, why)
    text, note = found.group(1), None
    if form.mapping:
        mapped = form.mapping.get(text)
        if mapped is None:
            return ImageVersion(None, False, form.unpinned)
        from specgate.inputs.knowledge import knowledge

        shown = knowledge(form.engine).display_name
        note = f"{image.tag} holds {shown} {mapped} ({form.source.split(' (')[0]})"
        text = mapped
    if image.digest is not None:
        note = (f"{note}; " if note else "") + (
            "the release is read from the tag beside the digest; Docker runs the digest "
            "and does not check it against the tag"
        )
    return ImageVersion(text, True, None, note)


@dataclass(frozen=True)
class Pin:
    """A release an image reference pins: ``version`` (the release), ``tag`` as written,
    ``note`` (:attr:`ImageVersion.note`), ``offset`` of the reference in the text read."""

    version: str
    tag: str
    note: str | None
    offset: int


@dataclass(frozen=True)
class ImagesFound:
    """The engine's image references in a text: ``pinned`` one :class:`Pin` per distinct
    release their tags pin (in order), ``unpinned`` the references that pin none, each
    with why (``"vllm/vllm-openai@sha256:… (a digest, …)"``; ``latest`` shows in the
    reference)."""

    pinned: tuple[Pin, ...]
    unpinned: tuple[str, ...]


#: A reference as written in a file: registry/name, an optional tag, an optional digest.
_REFERENCE_TAIL = r"(?::[\w][\w.-]{0,127})?(?:@[A-Za-z][\w+.-]*:[0-9a-fA-F]{32,})?"


@cache
def _engine_pattern(engine: str) -> re.Pattern[str] | None:
    names = sorted({name for names, form in _tag_forms() if form.engine == engine
                    for name in names}, key=len, reverse=True)
    if not names:
        return None
    alternatives = "|".join(re.escape(name) for name in names)
    # a registry host (one holding "." or ":", or localhost: docker.io, ghcr.io, a
    # mirror's host:port) and a mirror's path before the family's path (_of_family)
    host = r"(?:(?:[A-Za-z0-9-]+\.[A-Za-z0-9.-]+|localhost)(?::\d+)?|[A-Za-z0-9-]+:\d+)/"
    mirror = r"(?:" + host + r"(?:[a-z0-9._-]+/){0,8})?"
    return re.compile(
        r"(?:(?<![\w./-])|(?<=:-))("
        + mirror + r"(?:" + alternatives + r")" + _REFERENCE_TAIL
        + r")(?![\w./:@-])"
    )


def images_of(engine: str, text: str) -> ImagesFound | None:
    """The ``engine``'s image references in ``text`` (bounded by the text, one pass),
    or None when no image family of that engine is recorded."""
    pattern = _engine_pattern(engine)
    if pattern is None:
        return None
    pinned: list[Pin] = []
    unpinned: list[str] = []
    for match in pattern.finditer(text):
        image = parse_image(match.group(1))
        if image is None:
            continue
        found = image_version(image)
        if found.text is not None:
            if all(pin.version != found.text for pin in pinned):
                pinned.append(Pin(found.text, image.tag or "", found.note, match.start(1)))
        elif len(unpinned) < 8:
            unpinned.append(_unpinned(match.group(1), image, found))
    return ImagesFound(tuple(pinned), tuple(unpinned))


def _unpinned(reference: str, image: ImageRef, found: ImageVersion) -> str:
    """``reference`` with why it pins no version, said only where the reference does not
    already show it: ``vllm/vllm-openai:latest`` (the tag says it), ``… (no tag)``,
    ``vllm/vllm-openai:nightly (not a release tag …)``."""
    if image.digest is None and image.tag == "latest":
        return reference
    return f"{reference} ({found.reason})"


_VARIABLE = re.compile(r"\$\{(\w+)(?:(:?[-?+])([^}]*))?\}|\$(\w+)")
_IMAGE_KEY = re.compile(r"^[ \t]*(?:-[ \t]+)?image:[ \t]*['\"]?([^'\"\s#]*\$[^'\"\s#]*)", re.M)


def interpolate(text: str, env: Mapping[str, str]) -> tuple[str | None, tuple[str, ...]]:
    """``text`` with its variables replaced as Compose interpolates them
    (compose-spec ``12-interpolation.md``: ``$VAR``, ``${VAR}``, ``${VAR:-default}``
    (unset or empty), ``${VAR-default}`` (unset), ``$$`` a literal ``$``), from ``env``.

    Returns ``(text, [])``, or ``(None, names)`` when a variable is not in ``env`` and
    has no default (set outside the repository), or when the form is one not read here
    (``${VAR:?err}``, ``${VAR:+alt}``, a nested default)."""
    missing: list[str] = []
    out: list[str] = []
    at = 0
    while at < len(text):
        dollar = text.find("$", at)
        if dollar < 0:
            out.append(text[at:])
            break
        out.append(text[at:dollar])
        if text.startswith("$$", dollar):
            out.append("$")
            at = dollar + 2
            continue
        match = _VARIABLE.match(text, dollar)
        if match is None:
            out.append("$")
            at = dollar + 1
            continue
        name = match.group(1) or match.group(4)
        operator, default = match.group(2), match.group(3) or ""
        value = env.get(name)
        at = match.end()
        if operator in (":-", "-") and "$" not in default:
            if value is None or (operator == ":-" and value == ""):
                value = default
        elif operator is not None:
            value = None  # ${VAR:?err}, ${VAR+alt}, a nested default: not read here
        if value is None:
            missing.append(name)
            continue
        out.append(value)
    return ("".join(out), ()) if not missing else (None, tuple(dict.fromkeys(missing)))


def compose_images(text: str, env: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """The ``image:`` values of a Compose text that hold a variable, interpolated from
    ``env`` (the project's ``.env``), and the variables set outside it (``image:
    ${SGLANG_IMAGE}`` with no SGLANG_IMAGE in ``.env`` nor a default). At most 64."""
    images: list[str] = []
    outside: list[str] = []
    for match in _IMAGE_KEY.finditer(text):
        if len(images) + len(outside) >= 64:
            break
        value, missing = interpolate(match.group(1), env)
        if value is not None:
            images.append(value)
        else:
            outside.extend(name for name in missing if name not in outside)
    return images, outside


def read_dotenv(text: str) -> dict[str, str]:
    """A Compose ``.env`` file's ``NAME=value`` lines (comments, blank lines and
    ``export`` prefixes skipped; one pair of matching quotes stripped; an unquoted
    value ends at `` #``), as the Compose dotenv reader takes them for plain values.
    A value holding ``$`` is left out (Compose interpolates it; not followed here)."""
    env: dict[str, str] = {}
    for raw in text.splitlines()[:4096]:
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        line = line.removeprefix("export ").lstrip()
        name, eq, value = line.partition("=")
        name = name.strip()
        if not eq or not re.fullmatch(r"[A-Za-z_][\w.-]*", name):
            continue
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        else:
            value = value.split(" #", 1)[0].rstrip()
        if "$" in value and not (raw.strip().partition("=")[2].strip().startswith("'")):
            continue
        env[name] = value
    return env


def own_image(data: object, path: Sequence[str | int]) -> str | None:
    """The ``image`` of the nearest mapping at or above ``path`` in ``data`` that names
    one (a Compose service, a Kubernetes container, a chart's rendered container, a
    Helm values ``image: {repository, tag}``), as written; None when no node on the way
    does (the whole file is then searched)."""
    found = image_holder(data, path)
    if found is None:
        return None
    image = found[1]["image"]
    if isinstance(image, str):
        return image
    return _chart_image(image) if isinstance(image, Mapping) else None


def image_holder(
    data: object, path: Sequence[str | int]
) -> tuple[tuple[str | int, ...], Mapping[str, object]] | None:
    """The node path and mapping of the nearest mapping at or above ``path`` whose
    ``image`` :func:`own_image` reads, None when none on the way has one."""
    nodes: list[tuple[tuple[str | int, ...], object]] = [((), data)]
    for i, key in enumerate(path):
        node = nodes[-1][1]
        listed = isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node)
        if not (listed or (isinstance(node, Mapping) and key in node)):
            break
        nodes.append((tuple(path[: i + 1]), node[key]))  # type: ignore[index]
    for at, node in reversed(nodes):
        if not isinstance(node, Mapping):
            continue
        image = node.get("image")
        if isinstance(image, str) or (isinstance(image, Mapping) and _chart_image(image)):
            return at, node
    return None


def _chart_image(image: Mapping[object, object]) -> str | None:
    """A Helm values ``image:`` mapping as the chart renders it: ``repository`` with
    ``tag`` (``helm create``'s template, helm/helm ``pkg/chartutil/create.go``@0052fe64:
    ``image: "{{ .Values.image.repository }}:{{ .Values.image.tag | default
    .Chart.AppVersion }}"``), after a ``registry`` when one is given (the common
    ``registry``/``repository``/``tag`` shape), with ``@digest`` when given. None without
    a string ``repository``, or without a string ``tag`` (unset, empty, or a YAML number
    such as ``0.10``, which the template would print otherwise than written): the
    chart's template then decides, which is not read."""
    repository, tag = image.get("repository"), image.get("tag")
    if not isinstance(repository, str) or not isinstance(tag, str) or not tag:
        return None
    registry = image.get("registry")
    name = f"{registry}/{repository}" if isinstance(registry, str) and registry else repository
    digest = image.get("digest")
    return f"{name}:{tag}" + (f"@{digest}" if isinstance(digest, str) and digest else "")
