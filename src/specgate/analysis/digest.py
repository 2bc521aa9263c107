"""The config digest: a short fingerprint of a deployment's speculative configuration.

The digest is ``sha256:`` + the first 16 hex digits (64 bits) of
SHA-256 over the canonical JSON of exactly ten fields, as the user set them:

    mechanism, draft_length, verify_tokens, draft_passes, draft_model, engine,
    tensor_parallel_size, lossy_acceptance, draft_length_is_max, target_model

Each value comes from the engine config when one is read and states it, else from
the claims file; derived defaults are filled in (``verify_tokens`` 1 + D for a
chain, ``draft_passes`` by mechanism, ``lossy_acceptance`` and
``draft_length_is_max`` false); anything else unknown is ``null``. Nothing read
from model configs enters, so adding an ``hf_config`` leaves the digest alone;
comments, key order and unrelated engine settings never reach it.

The field set and the serialisation are a contract: evidence records the digest
of the configuration it was measured under (``evidence.provenance.config_digest``)
and a later release must keep accepting digests made this way: the truncation to 64
bits stays (the claims schema's pattern holds stored digests to 16 hex digits).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from specgate.analysis import derived

if TYPE_CHECKING:
    from specgate.inputs.types import EngineConfig
    from specgate.model.deployment import Deployment

FIELDS = (
    "mechanism",
    "draft_length",
    "verify_tokens",
    "draft_passes",
    "draft_model",
    "engine",
    "tensor_parallel_size",
    "lossy_acceptance",
    "draft_length_is_max",
    "target_model",
)
"""The ten fields of the digest (README, "Record evidence"), in their contract order."""

def draft_passes(deployment: Deployment) -> str:
    """``per_token`` or ``single``, as the theory uses it
    (:func:`specgate.analysis.derived.draft_passes`: the stated
    ``speculation.draft_passes``, else the engine config's, else by mechanism), with the
    engine config's mechanism when one is read."""
    speculation = deployment.speculation._replace(mechanism=_mechanism(deployment))
    return derived.draft_passes(speculation, _engine(deployment))


def verify_tokens(deployment: Deployment) -> int | None:
    """N_verify: the engine's, else the stated one, else 1 + D for a chain (``None``
    when D is unknown)."""
    engine = _engine(deployment)
    if engine is not None and engine.verify_tokens is not None:
        return engine.verify_tokens
    stated = deployment.speculation.verify_tokens
    if stated is not None:
        return stated
    depth = _draft_length(deployment)
    return None if depth is None else depth + 1


def fields(deployment: Deployment) -> dict[str, Any]:
    """The ten digest fields of ``deployment`` (resolved against its referenced files)."""
    spec = deployment.speculation
    engine = _engine(deployment)
    target = engine.target_model if engine is not None else None
    return {
        "mechanism": _mechanism(deployment),
        "draft_length": _draft_length(deployment),
        "verify_tokens": verify_tokens(deployment),
        "draft_passes": draft_passes(deployment),
        "draft_model": engine.draft_model if engine is not None else None,
        "engine": engine.engine if engine is not None else spec.engine,
        "tensor_parallel_size": engine.tensor_parallel_size if engine is not None else None,
        "lossy_acceptance": bool(engine is not None and engine.lossy_acceptance),
        "draft_length_is_max": bool(
            spec.draft_length_is_max or (engine is not None and engine.draft_length_is_max)
        ),
        "target_model": target if target is not None else deployment.model.name,
    }


def change_fields(deployment: Deployment) -> dict[str, Any]:
    """The ten digest fields and ``engine_version``, what SG403 compares with the base
    revision (docs/change-gate.md#config-digest): the engine and the version it runs as
    read, pinned or not (``"vLLM 0.26.0"``, ``"vLLM not pinned"``; ``None`` without an
    engine config). The version stays out of the stored digest, so
    digests evidence recorded keep matching; a change of it alone is still SG403."""
    values = fields(deployment)
    values["engine_version"] = engine_version(deployment)
    return values


def engine_version(deployment: Deployment) -> str | None:
    """The engine and the version the deployment runs, as read (module docstring)."""
    engine = _engine(deployment)
    if engine is None:
        return None
    from specgate.inputs.knowledge import knowledge

    name = knowledge(engine.engine).display_name
    pinned = engine.version if engine.version_source != "assumed-newest" else None
    return f"{name} {pinned if pinned is not None else 'not pinned'}"


def canonical(values: dict[str, Any]) -> str:
    """The canonical JSON the digest hashes (sorted keys, no spaces, UTF-8 kept)."""
    return json.dumps(values, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def digest_of(values: dict[str, Any]) -> str:
    """``sha256:`` + 16 hex digits of :func:`canonical` ``values``."""
    # Imported here: hashlib loads OpenSSL (~2.5 ms), and rules import this module on
    # every command while only a report that shows a digest, or a provenance or
    # baseline to compare with, ever computes one.
    import hashlib

    return "sha256:" + hashlib.sha256(canonical(values).encode("utf-8")).hexdigest()[:16]


def config_digest(deployment: Deployment) -> str:
    """The deployment's config digest, e.g. ``sha256:24babb0907610e78``."""
    return digest_of(fields(deployment))


def _engine(deployment: Deployment) -> EngineConfig | None:
    inputs = deployment.inputs
    return inputs.engine if inputs is not None else None


def _mechanism(deployment: Deployment) -> str | None:
    engine = _engine(deployment)
    if engine is not None and engine.mechanism is not None:
        return str(engine.mechanism)
    return deployment.speculation.mechanism


def _draft_length(deployment: Deployment) -> int | None:
    engine = _engine(deployment)
    if engine is not None and engine.draft_length is not None:
        return int(engine.draft_length)
    return deployment.speculation.draft_length
