"""The ``evidence.metrics`` block of a claims file, and where its paths lead.

Shape (docs/claims-file.md#referenced-files)::

    evidence:
      metrics:
        format: vllm-prometheus          # one of FORMATS
        path: bench/metrics-after.prom   # file formats: relative to the claims file
        baseline_path: bench/before.prom # vllm-prometheus only (optional)
        labels: {model_name: llama-8b}   # vllm-prometheus only: the series to read
        draft_length: 4                  # optional k/D for formats that need it
        marginal: [0.58, 0.34]           # inline formats carry their data here

Inline formats (``per-position``, ``histogram``, ``iid-rate``,
``draft-acceptance-rate``) read their data from
the block itself; every other format reads ``path``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from specgate.core.errors import InputError
from specgate.inputs.paths import resolve_reference
from specgate.load.document import Document, NodePath, PathElement

FILE_FORMATS = (
    "vllm-prometheus",
    "vllm-log",
    "vllm-per-request",
    "sglang-log",
    "llamacpp-log",
    "llamacpp-timings",
    "sglang-server-info",
    "trtllm-iteration-stats",
    "speculation-profile",
)
INLINE_FORMATS = ("per-position", "histogram", "iid-rate", "draft-acceptance-rate")
FORMATS = FILE_FORMATS + INLINE_FORMATS


@dataclass(frozen=True)
class MetricsSpec:
    """What ``evidence.metrics`` asks for.

    Attributes:
        format: one of :data:`FORMATS`.
        path, baseline_path: file paths as written (relative to the claims file).
        draft_length: k (= D) supplied by the block or the caller, for formats whose
            data cannot state it (vLLM V0 counters, logs without per-position rates,
            ``iid-rate``). Data that states its own k wins.
        labels: for ``vllm-prometheus``, label name → value the series must carry
            (selects one model of a scrape that holds several); empty = all.
        values: the block as written (inline data lives here).
        claims: the claims document holding the block, to point errors at its lines.
        node: the block's node path inside ``claims``.
    """

    format: str
    path: str | None = None
    baseline_path: str | None = None
    draft_length: int | None = None
    verify_tokens: int | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    values: Mapping[str, object] = field(default_factory=dict)
    claims: Document | None = None
    node: NodePath = ()

    @classmethod
    def from_document(
        cls,
        doc: Document,
        node: NodePath,
        *,
        draft_length: int | None = None,
        verify_tokens: int | None = None,
    ) -> MetricsSpec:
        """Read the block at ``node`` of a parsed claims file.

        ``draft_length`` is the caller's D (claims or engine config); a
        ``draft_length`` key inside the block wins over it. ``verify_tokens`` is the
        caller's N_verify when the deployment verifies a tree (``None``: a chain).

        Raises:
            InputError: the block is not a mapping, has no known ``format``, lacks
                ``path`` for a file format, or has a non-string path.
        """
        data: object = doc.data
        for element in node:
            inside = (isinstance(data, Mapping) and element in data) or (
                isinstance(data, list) and isinstance(element, int) and element < len(data)
            )
            if inside:
                data = data[element]  # type: ignore[index]
            else:
                data = None
                break
        bare = cls(format="", claims=doc, node=node)
        if not isinstance(data, Mapping):
            raise bare.fail("evidence.metrics must be a mapping")
        fmt = data.get("format")
        if fmt not in FORMATS:
            raise bare.fail(
                f"unknown metrics format {fmt!r} (one of: {', '.join(FORMATS)})", "format"
            )
        texts: dict[str, str | None] = {}
        for key in ("path", "baseline_path"):
            value = data.get(key)
            if value is not None and not isinstance(value, str):
                raise bare.fail(f"{key} must be a string", key)
            texts[key] = value
        if fmt in FILE_FORMATS and not texts["path"]:
            raise bare.fail(f"metrics format {fmt} needs path")
        if texts["baseline_path"] is not None and fmt != "vllm-prometheus":
            raise bare.fail("baseline_path applies only to vllm-prometheus", "baseline_path")
        labels = _labels(bare, data.get("labels"), str(fmt))
        own = data.get("draft_length")
        if own is not None:
            if (
                isinstance(own, bool)
                or not isinstance(own, (int, float))
                or own != int(own)
                or own < 1
            ):
                raise bare.fail(f"draft_length must be an integer ≥ 1, not {own!r}", "draft_length")
            draft_length = int(own)
        return cls(
            format=str(fmt),
            path=texts["path"],
            baseline_path=texts["baseline_path"],
            draft_length=draft_length,
            verify_tokens=verify_tokens,
            labels=labels,
            values=dict(data),
            claims=doc,
            node=node,
        )

    def fail(self, reason: str, *key: PathElement) -> InputError:
        """An :class:`InputError` pointing at ``key`` inside the block in the claims file."""
        if self.claims is None:
            return InputError(reason)
        span = self.claims.locate((*self.node, *key))
        return InputError(reason, self.claims.file, span.line, span.column)


def _labels(bare: MetricsSpec, raw: object, fmt: str) -> dict[str, str]:
    """The ``labels`` selection: a mapping of label names to scalar values."""
    if raw is None:
        return {}
    if fmt != "vllm-prometheus":
        raise bare.fail("labels applies only to vllm-prometheus", "labels")
    if not isinstance(raw, Mapping) or not raw:
        raise bare.fail("labels must be a mapping of label names to values", "labels")
    out: dict[str, str] = {}
    for key, value in raw.items():
        if not isinstance(value, str):
            raise bare.fail(f"labels.{key} must be a string, not {value!r}", "labels", str(key))
        out[str(key)] = value
    return out


def resolve_path(
    spec: MetricsSpec,
    key: str,
    relative: str,
    *,
    base_dir: Path,
    shown_base: str,
    root: Path | None,
) -> tuple[Path, str]:
    """The file ``relative`` names (relative to ``base_dir``) and its shown name.

    Args:
        key: ``"path"`` or ``"baseline_path"`` (for the error position).
        base_dir: the claims file's folder; ``shown_base`` is that folder as shown.
        root: the repository root; ``None`` means the nearest folder above
            ``base_dir`` holding ``.git`` (``base_dir`` itself when there is none).

    Raises:
        InputError (at the key's line in the claims file): absolute, leaves the
            repository (symlinks resolved), or does not exist.
    """
    target, shown = resolve_reference(
        relative,
        what=key,
        base_dir=base_dir,
        shown_base=shown_base,
        root=root,
        fail=lambda reason: spec.fail(reason, key),
    )
    from specgate.core.revision_tree import redirected

    staged = redirected(target)  # --staged: the index's copy (docs/change-gate.md#staged)
    if isinstance(staged, str):
        raise spec.fail(f"{shown}: {staged}", key)
    return (target if staged is None else staged), shown
