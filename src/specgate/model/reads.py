"""Which deployments reference files, and the reads of those files one run shares
(docs/claims-file.md#referenced-files).

Kept apart from :mod:`specgate.model.resolve` so that a check of files that reference
nothing does not load the resolver.
"""

from collections.abc import Callable
from types import TracebackType
from typing import Any, TypeVar

_T = TypeVar("_T")

#: Results of reading referenced files during one run (see :func:`shared_reads`):
#: ten thousand claims files pointing at one serving config read and interpret it
#: once. Empty outside a run: every call reads the file.
_READS: list[dict[tuple[object, ...], object]] = []


def block(raw: dict[str, Any], key: str) -> dict[str, Any]:
    """``raw[key]`` if it is a mapping, else an empty one."""
    value = raw.get(key)
    return value if isinstance(value, dict) else {}


def references_files(raw: dict[str, Any]) -> bool:
    """Whether the deployment mapping ``raw`` names a referenced file:
    ``speculation.engine_config``, ``speculation.draft_hf_config``, ``model.hf_config``
    or ``evidence.metrics``."""
    spec_raw = block(raw, "speculation")
    return (
        "engine_config" in spec_raw
        or "draft_hf_config" in spec_raw
        or "hf_config" in block(raw, "model")
        or "metrics" in block(raw, "evidence")
    )


class _SharedReads:
    def __enter__(self) -> None:
        _READS.append(_READS[-1] if _READS else {})

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        _READS.pop()


def shared_reads() -> _SharedReads:
    """A context manager within which a referenced file read with the same arguments is
    read and interpreted once (successful reads only: an error is raised again at each
    claims file, pointing at its own lines)."""
    return _SharedReads()


def once(key: tuple[object, ...], read: Callable[[], _T]) -> _T:
    """``read()``, or inside :func:`shared_reads` the result of the first call with ``key``."""
    if not _READS:
        return read()
    reads = _READS[-1]
    if key not in reads:
        reads[key] = read()
    return reads[key]  # type: ignore[return-value]
