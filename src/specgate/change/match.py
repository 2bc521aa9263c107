"""``check --baseline``: which deployment at REF each head deployment is compared
with, and which deployments of a claims file vanished (docs/change-gate.md#pairing-deployments;
review hostile-r4 defect 4).

A head deployment is matched by name (:func:`specgate.change.baseline.lookup`, names
compared by :func:`~specgate.core.names.name_key`). A deployment of the claims file
at REF whose name is in no claims file at the head has vanished. A head deployment
that no name matches and that has the configuration of a vanished one (the same
config digest, or the same model and mechanism, and no different workload) is
compared with it, the strictest (highest AL) when several fit: renaming ``d1`` to
``d1-v2`` does not escape SG401–SG404. A vanished deployment that nothing is compared
with is SG412.
"""

from __future__ import annotations

from dataclasses import dataclass

from specgate.analysis.digest import config_digest
from specgate.change.baseline import (
    MAX_CLAIMS_AT_REF,
    BaseDeployment,
    BaseFile,
    BaselineSource,
    lookup,
)
from specgate.core.errors import InputError
from specgate.core.names import name_key
from specgate.model.deployment import Deployment


@dataclass(frozen=True)
class FileMatch:
    """``found``: head position → (base deployment, why it could not be read), as
    :func:`~specgate.change.baseline.lookup` answers; ``vanished``: names at REF in
    no claims file at the head and compared with nothing."""

    found: dict[int, tuple[BaseDeployment | None, str | None]]
    vanished: list[str]


def match_file(
    source: BaselineSource,
    base_file: BaseFile | None,
    heads: list[Deployment],
    floor: float | None = None,
) -> FileMatch:
    """Match the deployments ``heads`` of one claims file with REF (its file there is
    ``base_file``, ``None`` when new)."""
    found = {d.position: lookup(source, base_file, d.name, floor) for d in heads}
    if base_file is None:
        return FileMatch(found, [])
    head_keys = {name_key(d.name) for d in heads}
    gone = [
        n
        for n in dict.fromkeys([*base_file.deployments, *base_file.errors])
        if name_key(n) not in head_keys
    ]
    if gone:
        elsewhere = head_names(source)
        gone = [n for n in gone if name_key(n) not in elsewhere]
    paired: set[str] = set()
    for d in heads:
        if found[d.position] != (None, None):
            continue
        fits = [
            base_file.deployments[n]
            for n in gone
            if n in base_file.deployments and same_config(base_file.deployments[n].deployment, d)
        ]
        if fits:
            best = max(fits, key=lambda b: b.metrics.accept_length or 0.0)
            found[d.position] = (best, None)
            paired.add(best.deployment.name)
    return FileMatch(found, [n for n in gone if n not in paired])


def same_config(base: Deployment, head: Deployment) -> bool:
    """Whether ``head`` (new by name) is ``base`` (vanished) renamed: the same config
    digest, or the same model and mechanism; never when both state workloads that
    differ (another workload is another deployment)."""
    if (
        base.workload.name
        and head.workload.name
        and name_key(base.workload.name) != name_key(head.workload.name)
    ):
        return False
    if config_digest(base) == config_digest(head):
        return True
    model, mechanism = base.model.name, base.speculation.mechanism
    return (
        model is not None
        and mechanism is not None
        and name_key(model) == name_key(head.model.name or "")
        and mechanism == head.speculation.mechanism
    )


def head_names(source: BaselineSource) -> set[str]:
    """Name keys of the deployments of every claims file in the work tree of the
    repository (:data:`~specgate.change.baseline.MAX_CLAIMS_AT_REF` files at most; one
    that cannot be read or parsed adds none), gathered once per run."""
    if source.names_at_head:
        return source.names_at_head[0]
    top = source.top
    from specgate.change.changed import all_claims_files
    from specgate.core.paths import PathProblem, confined
    from specgate.load.read import parse_text, read_text

    keys: set[str] = set()
    source.names_at_head.append(keys)
    for claims in all_claims_files(top)[:MAX_CLAIMS_AT_REF]:
        try:
            real = confined(claims, top=top)
            document = parse_text(
                read_text(real, claims.name), claims.name, json_syntax=claims.suffix == ".json"
            )
        except (PathProblem, InputError, OSError, RecursionError, ValueError):
            continue
        data = document.data if isinstance(document.data, dict) else {}
        raws = data.get("deployments")
        for raw in raws if isinstance(raws, list) else []:
            if isinstance(raw, dict) and isinstance(raw.get("name"), str):
                keys.add(name_key(raw["name"]))
    return keys


def vanished_message(source: BaselineSource, name: str) -> str:
    """SG412's message for the deployment ``name`` of REF found nowhere at the head."""
    return (
        f"deployment {name!r} at {source.ref} is in no claims file now, and no deployment "
        "here has its configuration: removed or renamed, it is no longer compared with "
        "its base (SG401-SG404)"
    )
