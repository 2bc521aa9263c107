"""Which keys of a claims file name other files, as written (docs/claims-file.md#referenced-files).

Shared by the change gate: the baseline reads these files at REF
(docs/change-gate.md#standard-error) and the reverse lookup of ``check --changed`` finds the claims
files that name a changed file (docs/change-gate.md#changed-files). Paths are returned as written,
relative to the claims file's folder.
"""

from __future__ import annotations

from typing import Any

REFERENCE_KEYS = (
    ("model", "hf_config"),
    ("speculation", "engine_config"),
    ("speculation", "draft_hf_config"),
)
"""``(block, key)`` pairs whose value is a path or a ``{path, pointer}`` mapping."""

EVIDENCE_KEYS = ("path", "baseline_path")
"""``evidence.metrics`` keys that name evidence files (their content is compared)."""


def _written(raw: dict[str, Any], block: str, key: str) -> str | None:
    """The path ``raw[block][key]`` names as written (a string or the ``path`` of a
    ``{path, pointer}`` mapping), else None."""
    section = raw.get(block)
    value = section.get(key) if isinstance(section, dict) else None
    if isinstance(value, dict):
        value = value.get("path")
    return value if isinstance(value, str) else None


def deployment_references(raw: dict[str, Any]) -> list[str]:
    """The paths one deployment mapping names, in key order (non-strings skipped)."""
    found = [p for block, key in REFERENCE_KEYS if (p := _written(raw, block, key)) is not None]
    evidence = raw.get("evidence")
    metrics = evidence.get("metrics") if isinstance(evidence, dict) else None
    if isinstance(metrics, dict):
        found.extend(v for k in EVIDENCE_KEYS if isinstance(v := metrics.get(k), str))
    return found


def engine_config_references(raw: dict[str, Any]) -> list[str]:
    """The ``speculation.engine_config`` path of one deployment mapping, as written
    (``[]`` when it names none): the file whose launch commands may name options files
    of their own (``trtllm-serve --extra_llm_api_options``, ``vllm serve --config``)."""
    written = _written(raw, "speculation", "engine_config")
    return [written] if written is not None else []
