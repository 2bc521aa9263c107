"""A container's command placed in the script that launches it.

A ``docker run IMAGE …`` line or a ``docker compose run SERVICE …`` line runs words the
script does not show (the image's entrypoint, the service's command) before the words it
does: each shown word keeps its own line and column, and each added word is placed at the
image or service word, so a finding on any of them points at the script
(docs/engines.md#containers).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from specgate.inputs.cmdline import Command
from specgate.inputs.engines._source import CommandSource
from specgate.inputs.env_files import EnvFiles
from specgate.inputs.volumes import Bind
from specgate.load.document import Document, Span


@dataclass(frozen=True)
class Joined(CommandSource):
    """The container command of a ``compose run`` or a runner's ``run IMAGE``;
    ``image``: the service's image reference as Compose interpolates it, or the image
    word of the ``run`` line (the engine version is read from its tag alone);
    ``binds``: the ``run`` line's ``-v``/``--mount`` volumes
    (:mod:`specgate.inputs.volumes`); ``env_files``: what its environment files left
    unsettled (:mod:`specgate.inputs.env_files`), None when it names none."""

    image: str | None = None
    binds: tuple[Bind, ...] = ()
    env_files: EnvFiles | None = None


def place(
    source: CommandSource,
    words: Sequence[str],
    *,
    at: int,
    kept: int,
    env: Mapping[str, str],
    env_words: Mapping[str, int],
    image: str | None = None,
    binds: tuple[Bind, ...] = (),
    env_files: EnvFiles | None = None,
) -> Joined:
    """The container's command ``words`` placed in the script: the words the container
    adds (all but the last ``kept``) at the runner's image or service word ``at``, each
    of the last ``kept`` at its own word after it; ``env``'s variables at the words
    ``env_words`` names (word indexes of ``source``)."""
    prefix = len(words) - kept
    origin = [at] * prefix + list(range(at + 1, at + 1 + kept))
    command = source.command
    new = Command(
        tuple(words),
        env=dict(env),
        lines=_pick(command.lines, origin),
        columns=_pick(command.columns, origin),
        env_at={name: _at(command, index) for name, index in env_words.items()},
        unresolved={
            i: command.unresolved[j] for i, j in enumerate(origin)
            if j in command.unresolved and i >= prefix
        },
    )
    spans = tuple(source.spans[j] if j < len(source.spans) else Span(1, 1) for j in origin)
    char_spans = source.char_spans

    def placed(index: int) -> Sequence[Span] | None:
        if char_spans is None or index < prefix or index >= len(origin):
            return None
        return char_spans(origin[index])

    def env_spans() -> Mapping[str, Span]:
        return {
            name: source.spans[index] if index < len(source.spans) else Span(1, 1)
            for name, index in env_words.items()
        }

    return Joined(
        new, spans, source.file, placed, env_spans, image=image, binds=binds,
        env_files=env_files,
    )


def _pick(values: tuple[int, ...], origin: Sequence[int]) -> tuple[int, ...]:
    if not values:
        return ()
    return tuple(values[j] if j < len(values) else values[-1] for j in origin)


def _at(command: Command, index: int) -> tuple[int, int]:
    line = command.lines[index] if index < len(command.lines) else 0
    column = command.columns[index] if index < len(command.columns) else 1
    return line, column


def version_text(
    source: CommandSource | None, data: object, path: Sequence[str | int], text: str | None
) -> str | None:
    """The text the engine version of a command is read from
    (:func:`specgate.inputs.version.detect_version`, docs/engines.md#versions): the
    image of a ``docker``/``podman``/``nerdctl run`` line or a ``compose run`` as the
    shell expands it (``release:$TAG`` with ``TAG=1.2.0`` set in the script is
    ``release:1.2.0``; a word the script leaves unsettled never reaches here as an
    image), else the ``image`` of the Compose service or Kubernetes container holding
    the command, else the whole file's ``text``."""
    if isinstance(source, Joined) and source.image is not None:
        # that image's tag alone, never another command's image in the same file
        return f"image: {source.image}\n"
    from specgate.inputs.containers import own_image

    image = own_image(data, path)
    return text if image is None else f"image: {image}\n"


def image_via(doc: Document, path: Sequence[str | int], config: Path | None) -> str | None:
    """Where the image tag of the service or container holding ``path`` comes from when
    another file sets it: the ``.env`` line Compose interpolated it from
    (``"image tag through .env:1 (VLLM_TAG)"``, :attr:`Document.via`); under the change
    gate, that the ``.env`` beside ``config`` was not read because git ignores it
    (docs/change-gate.md#baseline). None otherwise."""
    from specgate.core.revision_tree import ignored_by_git
    from specgate.inputs.containers import image_holder

    found = image_holder(doc.data, path)
    if found is None:
        return None
    at = found[0]
    image = (*at, "image")
    via = doc.via.get(image) if doc.via else None
    if via is not None:
        return f"image tag through {via}"
    dotenv = config.parent / ".env" if config is not None else None
    if image in doc.written and dotenv is not None and ignored_by_git(dotenv):
        return (
            f".env beside {dotenv.parent.name or '.'}/ not read: git ignores it, so no "
            "commit holds it (the change gate reads the files' own values)"
        )
    return None
